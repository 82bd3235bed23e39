#!/usr/bin/env bash
# The cost of the mount itself (docs/benchmarks.md, "Real mode: mount overhead"): fio psync 4 KiB
# random reads of a page-cached 256 MiB file, 1 and 4 jobs, against
#   direct      the backing directory itself (no FUSE),
#   bindfs      a plain FUSE passthrough (Debian's bindfs, single-threaded, -o direct_io),
#   iosched     `iosched mount --backend real --scheduler noop --direct-io` (every read one FUSE
#               request through the dispatcher; the backing I/O is done at dispatch),
#   iosched-emu the same mount over the emulated disk would be timed by the model, so it is not
#               an overhead measurement.)
# Usage: experiments/real-mode/overhead.sh [SECONDS]   (root or fusermount3 needed; fio, bindfs)
set -u
cd "$(dirname "$0")/../.."
export IOSCHED_FUSE_BIN=${IOSCHED_FUSE_BIN:-$PWD/target/release/iosched-fuse}
[ -x "$IOSCHED_FUSE_BIN" ] || cargo build --release -p iosched-fuse
SECS=${1:-10}
WORK=${WORK:-/tmp/iosched-overhead}
mkdir -p "$WORK/back" "$WORK/mnt"
[ -f "$WORK/back/f" ] || head -c 256M /dev/urandom > "$WORK/back/f"
cat "$WORK/back/f" > /dev/null   # into the page cache
cleanup() { mountpoint -q "$WORK/mnt" && { fusermount3 -u "$WORK/mnt" 2>/dev/null || umount -l "$WORK/mnt"; }; }
trap cleanup EXIT INT TERM

fio_iops() { # dir jobs
  fio --name=r --directory="$1" --filename=f --ioengine=psync --rw=randread --bs=4k --size=256M --invalidate=0 \
      --numjobs="$2" --group_reporting --runtime="$SECS" --time_based --output-format=json |
    python3 -c "import json,sys; d=json.load(sys.stdin)['jobs'][0]['read']; print('%.0f IOPS, clat p50 %.1f us, p99 %.1f us' % (d['iops'], d['clat_ns']['percentile']['50.000000']/1e3, d['clat_ns']['percentile']['99.000000']/1e3))"
}

for jobs in 1 4; do
  echo "direct  jobs=$jobs: $(fio_iops "$WORK/back" $jobs)"
  bindfs -o direct_io "$WORK/back" "$WORK/mnt"
  echo "bindfs  jobs=$jobs: $(fio_iops "$WORK/mnt" $jobs)"
  cleanup
  iosched mount "$WORK/back" "$WORK/mnt" --backend real --scheduler noop --direct-io --daemon \
      --summary "$WORK/summary.json" --log "$WORK/mount.log" > /dev/null 2>&1
  echo "iosched jobs=$jobs: $(fio_iops "$WORK/mnt" $jobs)"
  iosched umount "$WORK/mnt" > /dev/null 2>&1
done
