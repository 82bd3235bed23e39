#!/bin/sh
# Runs the iosched side of the MQSim side by side (make_scenarios.sh's scenarios) with the
# `iosched` CLI (IOSCHED=path to it; default: the one on PATH) and prints one line per run:
# IOPS, mean and p99 response (us), whole-process CPU seconds (user + sys, /usr/bin/time).
set -e
cd "$(dirname "$0")"
IOSCHED=${IOSCHED:-iosched}
for f in *${1:-}*.toml controls/*${1:-}*.toml; do
    name=$(basename "$f" .toml)
    case $f in controls/*) name="ctl:$name" ;; esac
    /usr/bin/time -f "%U %S %M" -o "/tmp/iosched-mqsim-${name#ctl:}.time" "$IOSCHED" run "$f" --json > "/tmp/iosched-mqsim-${name#ctl:}.json"
    python3 - "$name" <<'PY'
import json, sys
name = sys.argv[1]
doc = json.load(open("/tmp/iosched-mqsim-%s.json" % name.replace("ctl:", "")))
runs = doc["runs"] if isinstance(doc, dict) and "runs" in doc else doc
s = runs[0]["summary"] if "summary" in runs[0] else runs[0]
u, sy, rss = open("/tmp/iosched-mqsim-%s.time" % name.replace("ctl:", "")).read().split()[-3:]
r = s["response_ms"]
print("%-36s iosched %9.0f IOPS  mean %6.1f us  p99 %6.1f us  requests %d  cpu %.2f s  rss %d MB" % (
    name, s["iops"], r["mean"] * 1000, r["p99"] * 1000, s["requests"], float(u) + float(sy), int(rss) // 1024))
PY
done
