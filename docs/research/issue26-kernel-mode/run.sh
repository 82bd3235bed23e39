#!/bin/bash
# Boot the Debian kernel under QEMU TCG with its disk a raw file on `iosched mount` of an
# emulated drive, run the initramfs workload, tear everything down (trap: always).
# Usage: run.sh ide|ahci GUEST_SCHED [WORKLOADS] [DEVICE] [MOUNT_SCHED]
set -u
CTRL=${1:-ahci}; GS=${2:-mq-deadline}; RUN=${3:-1seq,2seq}; DEV=${4:-maxtor-stm332061}; MS=${5:-fcfs}
C=${IOSCHED_KERNEL_CACHE:-$HOME/.cache/iosched-kernel}
KVER=${KVER:-6.1.0-50-amd64}
IOSCHED=${IOSCHED:-/work/venv/bin/iosched}
DISK_MB=${DISK_MB:-1024}; MB=${MB:-128}; OFF=${OFF:-512}
OUTDIR=${OUTDIR:-$C/out}; mkdir -p "$OUTDIR"
TAG=$CTRL-$GS-$(date +%H%M%S)
W=$(mktemp -d /tmp/ios-kmode.XXXXXX)
QPID=""
cleanup() {
  [ -d "$W" ] || return 0
  if [ -n "$QPID" ]; then kill "$QPID" 2>/dev/null; sleep 0.5; kill -9 "$QPID" 2>/dev/null; QPID=""; fi
  mountpoint -q "$W/mnt" 2>/dev/null || grep -q " $W/mnt " /proc/mounts && "$IOSCHED" umount "$W/mnt" >/dev/null 2>&1
  grep -q " $W/mnt " /proc/mounts && fusermount -uz "$W/mnt"
  rm -rf "$W"
}
trap cleanup EXIT
trap 'echo "run.sh: signal, tearing down" >&2; cleanup; exit 130' INT TERM HUP
mkdir -p "$W/backing" "$W/mnt"
truncate -s ${DISK_MB}M "$W/backing/disk.raw"
"$IOSCHED" mount "$W/backing" "$W/mnt" --scheduler "$MS" --device "$DEV" --daemon \
  --summary "$OUTDIR/$TAG.summary.json" --log "$OUTDIR/$TAG.mount.log" || exit 1
if [ "$CTRL" = ide ]; then
  DRV=(-drive "file=$W/mnt/disk.raw,format=raw,if=ide,cache=none,aio=threads")
else
  DRV=(-drive "file=$W/mnt/disk.raw,format=raw,if=none,id=d,cache=none,aio=threads"
       -device ahci,id=ahci -device ide-hd,drive=d,bus=ahci.0)
fi
LOG=$OUTDIR/$TAG.serial.log
T0=$(date +%s.%N)
timeout 600 qemu-system-x86_64 -accel tcg -m 512 -smp 1 -nographic -no-reboot \
  -kernel "$C/x/linux-image-$KVER/boot/vmlinuz-$KVER" -initrd "${INITRD:-$C/initramfs.cpio.gz}" \
  -append "console=ttyS0 quiet panic=-1 ioctl=$CTRL ioss=$GS iorun=$RUN iomb=$MB iooff=$OFF ${IOSET:+ioset=$IOSET}" \
  "${DRV[@]}" </dev/null > "$LOG" 2>&1 &
QPID=$!
# host wall time at which the guest printed "IOS ready"
while kill -0 $QPID 2>/dev/null; do
  if [ -z "${TR:-}" ] && grep -q "IOS ready" "$LOG"; then TR=$(date +%s.%N); fi
  sleep 0.1
done
wait $QPID; RC=$?; QPID=""
T1=$(date +%s.%N)
echo "qemu rc=$RC; host: qemu start -> IOS ready $(echo "${TR:-$T1} - $T0" | bc) s, total $(echo "$T1 - $T0" | bc) s"
grep -E "^IOS" "$LOG" | tr -d '\r'
echo "serial log: $LOG"
