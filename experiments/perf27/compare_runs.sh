#!/bin/sh
# Issue 27 (performance): every change must leave results byte-identical. Writes the summary
# JSON of every example and of this directory's scenarios into OUTDIR, wall-clock fields
# (wall_s, elapsed_wall_s, cpu_s) removed:
#   on the old build: experiments/perf27/compare_runs.sh /tmp/before
#   on the new one:   experiments/perf27/compare_runs.sh /tmp/after
#   diff -r /tmp/before /tmp/after && echo byte-identical
# Needs `iosched` (the build under test) on PATH and the shared traces (trace-replay.toml):
# $IOSCHED_TRACES or ../shared/traces.
set -e
out=${1:?usage: compare_runs.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
mkdir -p "$out"
for f in experiments/examples/*.toml experiments/perf27/*.toml; do
    name=$(basename "$f" .toml)
    iosched run "$f" --json | python3 -c '
import json, sys
def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if k not in ("wall_s", "elapsed_wall_s", "cpu_s")}
    return [strip(v) for v in x] if isinstance(x, list) else x
print(json.dumps(strip(json.load(sys.stdin)), sort_keys=True))' > "$out/$name.json"
    echo "$f: $(wc -c < "$out/$name.json") bytes"
done
