#!/bin/sh
# Issue 28 (NVMe queue pairs, blk-mq): scenarios without NVMe or blk-mq settings must run
# exactly as before. Writes each run's full summary JSON into DIR: the rotational set of
# compare_rotational.sh plus flash scenarios without [device.nvme] or block.cpus.
#   git stash / checkout the old commit; experiments/flash/compare_unchanged.sh /tmp/before
#   on the new one:                      experiments/flash/compare_unchanged.sh /tmp/after
#   diff -r /tmp/before /tmp/after && echo byte-identical
set -e
out=${1:?usage: compare_unchanged.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
"$here/compare_rotational.sh" "$out"
cd "$here/../.."
bin=target/debug/examples/summary_json
[ -x "$bin" ] || bin=$(ls -t target/*/examples/summary_json | head -1)
for f in experiments/flash/870evo-randread-qd32.toml experiments/flash/970evoplus-randread-qd32.toml \
         experiments/flash/970evoplus-randwrite-qd4.toml experiments/flash/870evo-seqwrite.toml; do
    name=$(echo "$f" | tr / _)
    "$bin" "$f" > "$out/$name.json" 2> "$out/$name.err" || echo "$f: failed (see $out/$name.err)"
    echo "$f: $(wc -c < "$out/$name.json") bytes"
done
