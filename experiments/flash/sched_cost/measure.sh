#!/bin/sh
# The Linux I/O schedulers' CPU time per request, measured on this machine's kernel (issue 28:
# kyber's cost, for which no published per-request figure was found; mq-deadline's and BFQ's
# measured the same way, beside the figures BFQ's documentation gives).
#
# A loop device over a file in tmpfs (its "device time" is a memory copy by the loop worker);
# fio reads 4 KiB at random offsets, queue depth 1, libaio with O_DIRECT, one job, under each
# scheduler in turn, ROUNDS rounds. While fio runs, `perf record -a -g` samples the whole machine
# at FREQ Hz for SECONDS; a sample counts for a scheduler when one of its own functions is on its
# call chain (elevator_time.py: its hooks and what they call, its lock included). CPU time in the
# scheduler per read = its samples / FREQ / (fio's reads per second x SECONDS).
#   sh experiments/flash/sched_cost/measure.sh [ROUNDS] [SECONDS] [FREQ]
# Needs root, fio, perf and a free loop device; leaves none behind.
set -eu
ROUNDS=${1:-3}
SECS=${2:-10}
FREQ=${3:-4000}
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d)
FILE=/dev/shm/iosched-sched-cost.img
dd if=/dev/zero of="$FILE" bs=1M count=512 status=none
DEV=$(losetup --find --show "$FILE")
cleanup() { losetup -d "$DEV" 2>/dev/null || true; rm -f "$FILE"; rm -rf "$WORK"; }
trap cleanup EXIT INT TERM
Q=/sys/block/$(basename "$DEV")/queue
echo "kernel $(uname -r), $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $DEV over tmpfs, rotational $(cat "$Q/rotational")"
echo "round scheduler reads_per_s samples in_scheduler ns_per_read"
for r in $(seq 1 "$ROUNDS"); do
  for s in none mq-deadline kyber bfq; do
    echo "$s" > "$Q/scheduler"
    fio --name=c --filename="$DEV" --rw=randread --bs=4k --iodepth=1 --ioengine=libaio --direct=1 \
        --numjobs=1 --time_based --runtime=$((SECS + 2)) --output-format=json > "$WORK/fio.json" 2>/dev/null &
    FIO=$!
    sleep 1
    perf record -q -a -g -F "$FREQ" -o "$WORK/perf.data" -- sleep "$SECS" 2>/dev/null
    wait "$FIO"
    perf script -i "$WORK/perf.data" 2>/dev/null | python3 "$HERE/elevator_time.py" > "$WORK/counts"
    python3 - "$WORK/fio.json" "$WORK/counts" "$r" "$s" "$SECS" "$FREQ" <<'PY'
import json, sys
fio, counts, r, s, secs, freq = sys.argv[1:]
iops = json.load(open(fio))["jobs"][0]["read"]["iops"]
c = dict(line.split() for line in open(counts))
n = int(c.get(s, 0))
reads = iops * float(secs)
print(r, s, round(iops), c["samples"], n, round(n / float(freq) / reads * 1e9))
PY
  done
done
echo none > "$Q/scheduler"
