#!/bin/sh
# Runs every flash scenario here and prints one line each: IOPS, MB/s, mean and p99 latency.
# Usage: experiments/flash/measure.sh [pattern]   (e.g. 870evo)
set -e
cd "$(dirname "$0")/../.."
cargo build -q --profile test -p iosched --example summary_json
bin=target/debug/examples/summary_json
for f in experiments/flash/*${1:-}*.toml; do
    case $f in *rotational*) continue ;; esac
    "$bin" "$f" | python3 -c '
import json, sys
name = sys.argv[1]
for line in sys.stdin:
    s = json.loads(line)
    r = s["response_ms"]
    f = s.get("flash") or {}
    print("%-28s %10.0f IOPS %8.1f MB/s  mean %9.1f us  p99 %9.1f us  WA %.2f (precondition %.2f)" % (name, s["iops"], s["throughput_mb_s"], r["mean"] * 1000, r["p99"] * 1000, f.get("write_amplification", 0), f.get("precondition_write_amplification", 0)))
' "$(basename "$f" .toml)"
done
