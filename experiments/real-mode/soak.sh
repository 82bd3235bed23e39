#!/usr/bin/env bash
# A mixed soak through a real-mode mount: readers, writers with fsync and metadata churn, for
# DURATION seconds (default 600), with the daemon's RSS sampled every 5 s. Passes when the RSS at
# the end is within 20% of the RSS after the first minute (or of the first sample after 10% of
# the run, for runs under 10 minutes) and no worker saw an error.
# Usage: experiments/real-mode/soak.sh [DURATION_S] [--scheduler NAME] [mount options...]
# Work files in $WORK (default /tmp/iosched-soak); the mount is always unmounted on exit.
set -u
cd "$(dirname "$0")/../.."
DURATION=${1:-600}; shift || true
EXTRA=("$@"); [ ${#EXTRA[@]} -eq 0 ] && EXTRA=(--scheduler clook --backend real --direct-io)
BIN=${IOSCHED_FUSE_BIN:-$PWD/target/release/iosched-fuse}
[ -x "$BIN" ] || cargo build --release -p iosched-fuse
WORK=${WORK:-/tmp/iosched-soak}
B=$WORK/backing; MNT=$WORK/mnt; OUT=$WORK/out
rm -rf "$B" "$OUT"; mkdir -p "$B/shared" "$MNT" "$OUT"
for i in 1 2 3 4; do head -c 16M /dev/urandom > "$B/shared/f$i"; done
cleanup() {
  [ -n "${PIDS:-}" ] && kill $PIDS 2>/dev/null
  grep -q " $MNT fuse" /proc/self/mountinfo && "$BIN" umount "$MNT" --timeout 20 >/dev/null 2>&1
  rm -rf "$B"
}
trap cleanup EXIT INT TERM

"$BIN" mount "$B" "$MNT" "${EXTRA[@]}" --daemon --log "$OUT/daemon.log" --summary "$OUT/summary.json" \
  --requests-csv "$OUT/requests.csv" --stats "$OUT/stats.jsonl" --stats-interval 10 || exit 1
DPID=$(cut -d' ' -f1 /tmp/iosched-fuse"$(echo "$MNT" | sed 's/[^A-Za-z0-9]/_/g')".pid)
rss() { awk '/^VmRSS/ {print $2}' /proc/"$DPID"/status 2>/dev/null; }

PIDS=""
start=$(date +%s)
for s in 1 2; do python3 experiments/real-mode/soak_worker.py reader "$MNT" "$DURATION" $s > "$OUT/reader$s.json" & PIDS="$PIDS $!"; done
for s in 3 4; do python3 experiments/real-mode/soak_worker.py writer "$MNT" "$DURATION" $s > "$OUT/writer$s.json" & PIDS="$PIDS $!"; done
python3 experiments/real-mode/soak_worker.py meta "$MNT" "$DURATION" 5 > "$OUT/meta5.json" & PIDS="$PIDS $!"

ref_at=$(( DURATION >= 600 ? 60 : (DURATION / 10 > 5 ? DURATION / 10 : 5) ))
echo -e "t_s\trss_kib" > "$OUT/rss.tsv"
ref=""
while :; do
  sleep 5
  t=$(( $(date +%s) - start ))
  r=$(rss); [ -z "$r" ] && { echo "soak: the daemon is gone" >&2; exit 1; }
  echo -e "$t\t$r" >> "$OUT/rss.tsv"
  [ -z "$ref" ] && [ "$t" -ge "$ref_at" ] && ref=$r && ref_t=$t
  [ "$t" -ge "$DURATION" ] && break
done
wait $PIDS; PIDS=""
end_rss=$(rss); end_t=$(( $(date +%s) - start ))
"$BIN" umount "$MNT" --timeout 30 || exit 1
python3 - "$OUT" "$ref_t" "$ref" "$end_t" "$end_rss" <<'PY'
import glob, json, sys
out, ref_t, ref, end_t, end_rss = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
run = json.load(open(f"{out}/summary.json"))["runs"][0]
workers = [json.loads(open(f).read() or "{}") for f in sorted(glob.glob(f"{out}/*[0-9].json"))]
rows = sum(1 for _ in open(f"{out}/requests.csv")) - 1
ratio = end_rss / ref
ok = ratio <= 1.2 and all(w.get("errors") == 0 for w in workers) and rows == run["requests"]
print(json.dumps({
    "rss_kib": {f"at_{ref_t}s": ref, f"at_{end_t}s": end_rss, "ratio": round(ratio, 3)},
    "requests": run["requests"], "iops": round(run["iops"]), "csv_rows": rows, "mounted_s": round(run["mounted_s"], 1),
    "workers": {f'{w.get("role")}{w.get("seed")}': {"ops": w.get("ops"), "errors": w.get("errors"), "first_error": w.get("first_error")} for w in workers},
    "pass": ok,
}, indent=1))
sys.exit(0 if ok else 1)
PY
