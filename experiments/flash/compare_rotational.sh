#!/bin/sh
# Runs rotational scenarios and writes each run's full summary JSON into DIR (one file per
# scenario), so that two trees' outputs can be diffed byte for byte:
#   experiments/flash/compare_rotational.sh /tmp/before   # on the old commit
#   experiments/flash/compare_rotational.sh /tmp/after    # on the new one
#   diff -r /tmp/before /tmp/after && echo byte-identical
# Also: with IOSCHED_CLI=1 it runs `iosched run --json` (the Python CLI on PATH) instead.
set -e
out=${1:?usage: compare_rotational.sh OUTDIR}
mkdir -p "$out"
cd "$(dirname "$0")/../.."
cargo build -q --profile test -p iosched --example summary_json
bin=target/debug/examples/summary_json
[ -x "$bin" ] || bin=$(ls -t target/*/examples/summary_json | head -1)
for f in experiments/examples/*.toml experiments/seltzer1990/fig2-fcfs.toml experiments/seltzer1990/fig3-ssf.toml \
         experiments/real-mode/fio-sim-random.toml experiments/real-mode/fio-sim-sequential.toml \
         experiments/real-mode/find-sim-dio.toml experiments/iyer2001/tpcb-select-1.toml experiments/flash/rotational-ncq32.toml; do
    name=$(echo "$f" | tr / _)
    if [ -n "$IOSCHED_CLI" ]; then
        iosched run --json "$f" > "$out/$name.json" 2> "$out/$name.err" || echo "$f: failed (see $out/$name.err)"
    else
        "$bin" "$f" > "$out/$name.json" 2> "$out/$name.err" || echo "$f: failed (see $out/$name.err)"
    fi
    echo "$f: $(wc -c < "$out/$name.json") bytes"
done
