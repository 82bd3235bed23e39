#!/usr/bin/env bash
# Reproduces the "More measurements" section of docs/real-mode.md.
# Usage: experiments/real-mode/measure.sh [dd|cat|find|las|las-gap|las-2.6.9|sim|fio|fio4|all]   (root or fusermount3 needed)
# Work files go to $WORK (default /tmp/iosched-rm); the mount is always unmounted on exit.
set -u
cd "$(dirname "$0")/../.."
export IOSCHED_FUSE_BIN=${IOSCHED_FUSE_BIN:-$PWD/target/release/iosched-fuse}
[ -x "$IOSCHED_FUSE_BIN" ] || cargo build --release -p iosched-fuse
WORK=${WORK:-/tmp/iosched-rm}
MNT=$WORK/mnt
OUT=$WORK/out
mkdir -p "$MNT" "$OUT"
cleanup() { mountpoint -q "$MNT" && { iosched umount "$MNT" || fusermount3 -uz "$MNT" || umount -l "$MNT"; }; }
trap cleanup EXIT INT TERM

mount_it() { # backing tag scheduler [policy] [extra...]
  local b=$1 tag=$2 s=$3; shift 3
  local pol=(); if [ $# -gt 0 ] && [ "$1" != "--direct-io" ]; then pol=(--policy "$1"); shift; fi
  rm -f "$OUT/$tag.json"
  iosched mount "$b" "$MNT" --scheduler "$s" "${pol[@]}" "$@" --daemon --summary "$OUT/$tag.json" --log "$OUT/$tag.log"
}
summ() { # tag: aggregate MB/s, requests, mean size, lateness, waits
  python3 - "$OUT/$1.json" <<'PY'
import json,sys
d=json.load(open(sys.argv[1])); r=d["runs"][0]
keys=[k for k in r if isinstance(r[k],(int,float,str))]
print({k:r[k] for k in keys})
for k in ("lateness_us","think_us"):
    if k in r: print(k, r[k])
    elif k in d: print(k, d[k])
PY
}

build_dd_tree() { # f1 at 0, f2 at 32 MiB
  local b=$WORK/dd-backing
  [ -f "$b/f2" ] && return
  mkdir -p "$b"
  head -c 32M /dev/urandom > "$b/f1"
  head -c 32M /dev/urandom > "$b/f2"
}

run_dd() { # tag scheduler [policy]  (--direct-io mount: every read() of dd is one request)
  local tag=$1; shift
  build_dd_tree
  mount_it "$WORK/dd-backing" "$tag" "$@" --direct-io || return 1
  dd if="$MNT/f1" of=/dev/null bs=64k status=none & dd if="$MNT/f2" of=/dev/null bs=64k status=none & wait
  iosched umount "$MNT"
  summ "$tag"
}

build_cat_tree() { # a/f1 at 0, a/z-filler (sparse 8 GiB), b/f2 at 8448 MiB
  local b=$WORK/cat-backing
  [ -f "$b/b/f2" ] && return
  mkdir -p "$b/a" "$b/b"
  head -c 256M /dev/urandom > "$b/a/f1"
  truncate -s 8G "$b/a/z-filler"
  head -c 256M /dev/urandom > "$b/b/f2"
}

run_cat() { # tag scheduler [policy]
  local tag=$1; shift
  build_cat_tree
  mount_it "$WORK/cat-backing" "$tag" "$@" || return 1
  local t0=$(date +%s.%N)
  ( /usr/bin/time -f "f1 cat %e s" cat "$MNT/a/f1" > /dev/null ) 2> "$OUT/$tag.t1" &
  ( /usr/bin/time -f "f2 cat %e s" cat "$MNT/b/f2" > /dev/null ) 2> "$OUT/$tag.t2" &
  wait
  cat "$OUT/$tag.t1" "$OUT/$tag.t2"
  iosched umount "$MNT"
  summ "$tag"
}

build_find_tree() { # big (256 MiB) at 0, then tree/ with 200 x 64 KiB files right after it
  local b=$WORK/find-backing
  [ -f "$b/tree/f199" ] && return
  mkdir -p "$b/tree"
  head -c 256M /dev/urandom > "$b/big"
  for i in $(seq 0 199); do head -c 64K /dev/urandom > "$b/tree/f$i"; done
}

run_find() { # tag scheduler [policy] [--direct-io]   ($FIND_SLEEP_S: each cat starts after this sleep)
  local tag=$1; shift
  local each=(cat); [ -n "${FIND_SLEEP_S:-}" ] && each=(sh -c "sleep $FIND_SLEEP_S; exec cat \"\$1\"" sh)
  build_find_tree
  mount_it "$WORK/find-backing" "$tag" "$@" || return 1
  ( /usr/bin/time -f "stream cat %e s" cat "$MNT/big" > /dev/null ) 2> "$OUT/$tag.t1" &
  sleep 0.5
  ( /usr/bin/time -f "find -exec cat %e s" find "$MNT/tree" -type f -exec "${each[@]}" {} \; > /dev/null ) 2> "$OUT/$tag.t2" &
  wait
  cat "$OUT/$tag.t1" "$OUT/$tag.t2"
  iosched umount "$MNT"
  summ "$tag"
}

run_fio() { # tag rw scheduler [policy]  (direct-io mount; 2 psync jobs of 64k reads, one file each, 20 s)
  local tag=$1 rw=$2; shift 2
  build_cat_tree
  mount_it "$WORK/cat-backing" "$tag" "$@" --direct-io || return 1
  fio --ioengine=psync --rw="$rw" --bs=64k --size=256M --runtime=20 --time_based \
      --name=j1 --filename="$MNT/a/f1" --name=j2 --filename="$MNT/b/f2" \
      --output-format=json --output="$OUT/$tag.fio.json"
  iosched umount "$MNT"
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); [print(j['jobname'], 'bw %.2f MB/s'%(j['read']['bw_bytes']/1e6), 'iops %.1f'%j['read']['iops'], 'clat p50 %.1f ms'%(j['read']['clat_ns']['percentile']['50.000000']/1e6)) for j in d['jobs']]" "$OUT/$tag.fio.json"
  summ "$tag"
}

build_fio4_tree() { # f1..f4 of 128 MiB, adjacent
  local b=$WORK/fio4-backing
  [ -f "$b/f4" ] && return
  mkdir -p "$b"
  for i in 1 2 3 4; do head -c 128M /dev/urandom > "$b/f$i"; done
}

run_fio4() { # tag scheduler [policy]  (4 psync jobs of 64k sequential reads, one file each, 20 s)
  local tag=$1; shift
  build_fio4_tree
  mount_it "$WORK/fio4-backing" "$tag" "$@" --direct-io || return 1
  fio --ioengine=psync --rw=read --bs=64k --size=128M --runtime=20 --time_based \
      --name=j1 --filename="$MNT/f1" --name=j2 --filename="$MNT/f2" --name=j3 --filename="$MNT/f3" \
      --name=j4 --filename="$MNT/f4" --output-format=json --output="$OUT/$tag.fio.json"
  iosched umount "$MNT"
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); bw=[j['read']['bw_bytes']/1e6 for j in d['jobs']]; print(' / '.join('%.2f' % b for b in bw), 'MB/s, sum %.2f' % sum(bw))" "$OUT/$tag.fio.json"
  summ "$tag"
}

what=${1:-all}
case $what in
  dd|all) run_dd dd-clook clook; run_dd dd-aged-sptf aged-sptf; run_dd dd-as anticipatory aged-sptf; run_dd dd-as-clook anticipatory clook
          iosched run experiments/real-mode/dd-sim.toml ;;&
  cat|all) run_cat cat-clook clook; run_cat cat-as anticipatory aged-sptf ;;&
  find|all) run_find find-clook clook; run_find find-as anticipatory aged-sptf
            run_find find-dio-clook clook --direct-io; run_find find-dio-as anticipatory aged-sptf --direct-io
            run_find find-dio-as-clook anticipatory clook --direct-io
            build_find_tree; mount_it "$WORK/find-backing" find-alone clook && \
              /usr/bin/time -f "find -exec cat alone %e s" find "$MNT/tree" -type f -exec cat {} \; > /dev/null
            iosched umount "$MNT" ;;&
  las|all) run_find find-dio-las las --direct-io; run_find find-dio-cas cas --direct-io
           run_find find-las las; run_find find-cas cas
           iosched run experiments/real-mode/find-sim-dio-las.toml ;;&
  las-gap|all) # the same with a 10 ms sleep before each cat: every gap above antic_expire (6 ms)
           FIND_SLEEP_S=0.01 run_find find-gap-las las --direct-io; FIND_SLEEP_S=0.01 run_find find-gap-cas cas --direct-io
           FIND_SLEEP_S=0.01 run_find find-gap-clook clook --direct-io
           iosched run experiments/real-mode/find-sim-dio-las-gap.toml ;;&
  las-2.6.9|all) # the paper's kernel: LAS starves the find, CAS bounds it (docs/real-mode.md)
           run_find find-dio-las269 las-2.6.9 --direct-io; run_find find-dio-cas269 cas-2.6.9 --direct-io
           iosched run experiments/real-mode/find-sim-dio-las-2.6.9.toml ;;&
  sim|all) for f in cat-sim-128 cat-sim-256 find-sim-cache find-sim-dio fio-sim-sequential fio-sim-random; do
             iosched run experiments/real-mode/$f.toml; done ;;&
  fio|all) for rw in read randread; do run_fio fio-$rw-clook $rw clook; run_fio fio-$rw-as $rw anticipatory aged-sptf; done ;;&
  fio4|all) run_fio4 fio4-clook clook; run_fio4 fio4-as anticipatory aged-sptf
            iosched run experiments/real-mode/fio4-sim-sequential.toml ;;
esac
