#!/bin/busybox sh
# iosched kernel mode: the guest's /init (packed by initramfs.py; docs/kernel-mode.md).
# Reads /ios/params (shell assignments written by initramfs.encode_params):
#   IOS_CTRL=ide|ahci  IOS_SCHED=<elevator>  IOS_SET='k=v k=v'  (queue/iosched/k, else queue/k)
# runs `fio /ios/job.fio` on /dev/sda with JSON output and prints on the serial console:
#   IOS ...                      progress and facts (queue depth, scheduler, tunables, stat)
#   IOS-ERROR ...                a problem; the host reports it and fails
#   IOS-FIO-JSON-BEGIN / -END    fio's JSON output between the two lines
# then powers off.
/bin/busybox --install -s /bin
export PATH=/bin:/usr/bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
mkdir -p /tmp
up() { cut -d' ' -f1 /proc/uptime; }
die() { echo "IOS-ERROR $*"; poweroff -f; sleep 10; }
echo "IOS init at uptime $(up)"
IOS_CTRL=ide; IOS_SCHED=mq-deadline; IOS_SET=""
[ -r /ios/params ] || die "no /ios/params in the initramfs"
. /ios/params
for m in $(cat /lib/modules/order); do
  case $m in ata_piix.ko) [ "$IOS_CTRL" = ide ] || continue;; ahci.ko|libahci.ko) [ "$IOS_CTRL" = ahci ] || continue;; esac
  # crct10dif-pclmul fails under TCG (no PCLMUL): harmless, crct10dif_generic serves
  insmod /lib/modules/$m 2>/dev/null || echo "IOS insmod $m failed"
done
i=0; while [ ! -e /sys/block/sda ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
[ -b /dev/sda ] || die "no /dev/sda after 30 s (block devices: $(ls /sys/block | tr '\n' ' '))"
Q=/sys/block/sda/queue
echo "IOS ready at uptime $(up) ctrl=$IOS_CTRL"
echo "IOS queue queue_depth=$(cat /sys/block/sda/device/queue_depth) nr_requests=$(cat $Q/nr_requests) max_sectors_kb=$(cat $Q/max_sectors_kb) max_hw_sectors_kb=$(cat $Q/max_hw_sectors_kb) size_sectors=$(cat /sys/block/sda/size)"
have=$(cat $Q/scheduler | tr -d '[]')
ok=0; for s in $have; do [ "$s" = "$IOS_SCHED" ] && ok=1; done
[ $ok = 1 ] || die "unknown scheduler $IOS_SCHED: guest kernel has: $have"
echo "$IOS_SCHED" > $Q/scheduler || die "writing $IOS_SCHED to queue/scheduler failed"
echo "IOS scheduler $(cat $Q/scheduler)"
for kv in $IOS_SET; do k=${kv%%=*}; v=${kv#*=}
  if [ -e $Q/iosched/$k ]; then f=$Q/iosched/$k
  elif [ -e $Q/$k ]; then f=$Q/$k
  else die "tunable $k: neither queue/iosched/$k nor queue/$k exists under $IOS_SCHED (iosched: $(ls $Q/iosched 2>/dev/null | tr '\n' ' '))"; fi
  echo "$v" > $f || die "tunable $k=$v: the kernel refused the value"
  echo "IOS set $k=$v ($(cat $f))"
done
[ -d $Q/iosched ] && for f in $Q/iosched/*; do echo "IOS tunable $(basename $f)=$(cat $f)"; done
[ -x /usr/bin/fio ] || die "no fio in this initramfs"
echo "IOS stat before $(cat /sys/block/sda/stat)"
echo "IOS fio start at uptime $(up)"
/usr/bin/fio --output-format=json --output=/tmp/fio.json /ios/job.fio > /tmp/fio.out 2>&1; rc=$?
echo "IOS fio end at uptime $(up) rc=$rc"
echo "IOS stat after $(cat /sys/block/sda/stat)"
sed 's/^/IOS fio: /' /tmp/fio.out
[ $rc = 0 ] || die "fio exited $rc"
echo "IOS-FIO-JSON-BEGIN"
cat /tmp/fio.json
echo ""
echo "IOS-FIO-JSON-END"
echo "IOS done at uptime $(up)"
poweroff -f
