#!/bin/busybox sh
# iosched kernel mode: the guest's /init (packed by initramfs.py; docs/kernel-mode.md).
# Reads /ios/params (shell assignments written by initramfs.encode_params):
#   IOS_CTRL=ide|ahci  IOS_SCHED=<elevator>  IOS_SET='k=v k=v'  (queue/iosched/k, else queue/k)
#   IOS_GROUPS='job:cgroup:weight ...'  (empty: one fio for the whole file; else each job section
#              its own fio process in cgroup v2 group `cgroup` (- = the root) with that weight)
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
IOS_CTRL=ide; IOS_SCHED=mq-deadline; IOS_SET=""; IOS_GROUPS=""
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
if [ -n "$IOS_GROUPS" ]; then
  # cgroup v2: the io controller for the children, one group per name, its weight for BFQ
  # (io.bfq.weight) and for io.cost (io.weight) where the kernel has them.
  mkdir -p /sys/fs/cgroup
  mount -t cgroup2 none /sys/fs/cgroup || die "cannot mount cgroup2"
  echo "+io" > /sys/fs/cgroup/cgroup.subtree_control || die "cannot enable the io controller (cgroup.controllers: $(cat /sys/fs/cgroup/cgroup.controllers))"
  for g in $IOS_GROUPS; do cg=$(echo $g | cut -d: -f2); w=$(echo $g | cut -d: -f3)
    [ "$cg" = - ] && continue
    d=/sys/fs/cgroup/$cg; mkdir -p $d
    set_w=""
    if [ -e $d/io.bfq.weight ]; then echo "$w" > $d/io.bfq.weight && set_w="io.bfq.weight=$(cat $d/io.bfq.weight | tr '\n' ' ')"; fi
    if [ -e $d/io.weight ]; then echo "default $w" > $d/io.weight && set_w="$set_w io.weight=$(cat $d/io.weight | tr '\n' ' ')"; fi
    [ -n "$set_w" ] || die "cgroup $cg: no io.bfq.weight or io.weight to set (scheduler $IOS_SCHED)"
    echo "IOS cgroup $cg $set_w"
  done
fi
echo "IOS stat before $(cat /sys/block/sda/stat)"
echo "IOS fio start at uptime $(up)"
if [ -z "$IOS_GROUPS" ]; then
  /usr/bin/fio --output-format=json --output=/tmp/fio.json /ios/job.fio > /tmp/fio.out 2>&1; rc=$?
  echo "IOS fio end at uptime $(up) rc=$rc"
  echo "IOS stat after $(cat /sys/block/sda/stat)"
  sed 's/^/IOS fio: /' /tmp/fio.out
  [ $rc = 0 ] || die "fio exited $rc"
  echo "IOS-FIO-JSON-BEGIN"
  cat /tmp/fio.json
  echo ""
  echo "IOS-FIO-JSON-END"
else
  # Each job section its own fio, started in its group, all at once: a new shell writes its
  # own pid ($$ of `sh -c`; in a subshell $$ would be this shell's, pid 1) to the group's
  # cgroup.procs, then becomes fio.
  pids=""
  for g in $IOS_GROUPS; do job=$(echo $g | cut -d: -f1); cg=$(echo $g | cut -d: -f2)
    procs=/sys/fs/cgroup/cgroup.procs; [ "$cg" = - ] || procs=/sys/fs/cgroup/$cg/cgroup.procs
    /bin/sh -c "echo \$\$ > $procs && exec /usr/bin/fio --section=$job --output-format=json --output=/tmp/fio-$job.json /ios/job.fio" > /tmp/fio-$job.out 2>&1 &
    pids="$pids $!"
  done
  rc=0; for p in $pids; do wait $p || rc=$?; done
  echo "IOS fio end at uptime $(up) rc=$rc"
  echo "IOS stat after $(cat /sys/block/sda/stat)"
  for g in $IOS_GROUPS; do job=$(echo $g | cut -d: -f1); sed "s/^/IOS fio $job: /" /tmp/fio-$job.out; done
  [ $rc = 0 ] || die "fio exited $rc"
  for g in $IOS_GROUPS; do job=$(echo $g | cut -d: -f1)
    echo "IOS-FIO-JSON-BEGIN"
    cat /tmp/fio-$job.json
    echo ""
    echo "IOS-FIO-JSON-END"
  done
fi
echo "IOS done at uptime $(up)"
poweroff -f
