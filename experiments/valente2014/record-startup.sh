#!/bin/bash
# Records an application's cold-cache start-up as a block trace in the S suite's format, on this
# machine, with the project's own tools (issue 24; docs/s-suite.md, "Start-up traces recorded
# here"). The application runs from an ext4 image on a loop device (direct I/O, no kernel
# scheduler) whose backing file lies on `iosched mount` of the emulated disk, and the kernel's
# blk ftrace tracer records the loop device's events (the blktrace tools need relay files the
# kernel here refuses; the tracer gives the same events).
#
# usage: record-startup.sh IMAGE OUT.trace [ITERATIONS] -- COMMAND [ARGS...]
#   IMAGE        an ext4 image holding the command and what it loads (chroot'ed into); it is
#                read through `iosched mount` from its directory
#   OUT.trace    the start-up in S's format (`iosched trace convert --to s-startup`); the raw
#                tracer text of every iteration is kept beside it as OUT.trace.N.blk
#   ITERATIONS   start-ups recorded (default 3); OUT.trace is the one of median duration
# Root only. Leaves no mount, loop device or tracing behind (traps EXIT).
set -u
image=$(realpath "$1"); out=$(realpath -m "$2"); n=${3:-3}
shift 3; [ "${1:-}" = "--" ] && shift
[ $# -gt 0 ] || { echo "usage: $0 IMAGE OUT.trace [ITERATIONS] -- COMMAND..." >&2; exit 2; }
iosched=${IOSCHED:-iosched}
device=${DEVICE:-maxtor-stm332061}
work=$(mktemp -d /tmp/record-startup.XXXXXX)
mkdir -p "$work/fuse" "$work/app"
tracing=/sys/kernel/tracing
loop=""

cleanup() {
    mountpoint -q "$work/app" && umount "$work/app"
    [ -n "$loop" ] && { echo 0 > /sys/block/${loop#/dev/}/trace/enable 2>/dev/null; losetup -d "$loop"; }
    [ -w $tracing/current_tracer ] && echo nop > $tracing/current_tracer
    mountpoint -q "$work/fuse" && $iosched umount "$work/fuse" > /dev/null
    [ -n "${mounted_tracefs:-}" ] && umount $tracing
    rm -rf "$work"
}
trap cleanup EXIT

mountpoint -q $tracing || { mount -t tracefs nodev $tracing && mounted_tracefs=1; } || exit 1
# FCFS under the mount: the recording is not shaped by a scheduler of the toolkit's.
$iosched -q mount "$(dirname "$image")" "$work/fuse" --scheduler fcfs --device "$device" --daemon > /dev/null || exit 1
loop=$(losetup -f --show --direct-io=on "$work/fuse/$(basename "$image")") || exit 1
dev=${loop#/dev/}
[ "$(cat /sys/block/$dev/loop/dio)" = 1 ] || { echo "the loop device did not get direct I/O" >&2; exit 1; }
echo none > /sys/block/$dev/queue/scheduler
mount -o ro,noatime "$loop" "$work/app" || exit 1
chroot "$work/app" "$@" > /dev/null || { echo "the command fails in the image (warm run): fix the image" >&2; exit 1; }

declare -a took
for i in $(seq 1 "$n"); do
    sleep 2; echo 3 > /proc/sys/vm/drop_caches; sleep 0.2
    echo blk > $tracing/current_tracer; echo > $tracing/trace
    echo 1 > /sys/block/$dev/trace/enable
    s=$(date +%s%N); chroot "$work/app" "$@" > /dev/null; e=$(date +%s%N)
    echo 0 > /sys/block/$dev/trace/enable
    cat $tracing/trace > "$out.$i.blk"; echo nop > $tracing/current_tracer
    took[$i]=$(( (e - s) / 1000 ))
    echo "iteration $i: $(( took[$i] / 1000 )) ms, $(grep -c ' Q ' "$out.$i.blk") queued bios"
done
# The iteration of median duration.
median=$(for i in "${!took[@]}"; do echo "${took[$i]} $i"; done | sort -n | awk -v m=$(( (n + 1) / 2 )) 'NR == m { print $2 }')
# Only the loop device is traced (its own trace/enable), so every event is the start-up's.
$iosched -q trace convert "$out.$median.blk" "$out" --to s-startup || exit 1
echo "wrote $out (iteration $median)"
