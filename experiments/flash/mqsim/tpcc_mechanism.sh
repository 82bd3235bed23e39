#!/bin/sh
# TPC-C beside MQSim, controlled (docs/reproductions/flash/mqsim.md, "TPC-C: the mechanisms"):
# which of MQSim's rules make its TPC-C mean differ from the model's. Two controls, each applied
# to both simulators:
#   al8:      every request's start moved down to MQSim's 8 KiB logical page boundary (sizes
#             kept). 73% of TPC-C's requests are 8 KiB starting 10 sectors into a page, so each
#             touches two of MQSim's pages (two page reads, two page programs) where the model's
#             4 KiB units pack into its pages. Written here from the shared trace at run time
#             (never stored in the repository).
#   fastdram: MQSim's Data_Cache_DRAM_Data_Rate 100 -> 100000 MT/s. MQSim serves every access to
#             its data cache in turn on one DRAM channel, tRCD + tCL + size/2 bursts of 1 byte at
#             1/rate each: 41 us per 8 KiB write at the default 100 MT/s. Since 2026-11-30 the
#             model has the same timing, read from the description (devices-flash.md, "DRAM
#             timing of the data cache"): its runs compare with MQSim as configured; the
#             fastdram runs show what MQSim's DRAM adds.
# MQSim runs ideal (Ideal_Mapping_Table) and as configured (CMT); the model runs the controls
# trace-tpcc-chips-wbuf(-stripe)(-prio)(-cmt) on the same trace. Prints the mean response (us) of
# each; for the model also reads and writes apart (MQSim's output has no such split).
# Needs MQSim built as docs/benchmarks.md says ($MQSIM) and `iosched` on PATH.
# Usage: experiments/flash/mqsim/tpcc_mechanism.sh
set -e
here=$(cd "$(dirname "$0")" && pwd)
MQSIM=${MQSIM:-/work/research/mqsim/src}
RUNS=${RUNS:-/work/research/mqsim/runs}/tpcc-mechanism
TRACES=${TRACES:-/work/shared/traces}
mkdir -p "$RUNS"
. "$here/mqsim_flows.sh"

# MQSim's trace lines: time_ns device start_sector sectors type (0 write, 1 read).
awk '{ print $1, $2, $3 - $3 % 16, $4, $5 }' "$TRACES/mqsim_tpcc-small.trace" > "$RUNS/tpcc-al8.trace"
for cfg in ideal default; do
    if [ $cfg = ideal ]; then
        sed 's|<Ideal_Mapping_Table>false<|<Ideal_Mapping_Table>true<|' "$MQSIM/ssdconfig.xml" > "$RUNS/$cfg.xml"
    else
        cp "$MQSIM/ssdconfig.xml" "$RUNS/$cfg.xml"
    fi
    sed 's|<Data_Cache_DRAM_Data_Rate>100<|<Data_Cache_DRAM_Data_Rate>100000<|' "$RUNS/$cfg.xml" > "$RUNS/$cfg-fastdram.xml"
    grep -q '<Data_Cache_DRAM_Data_Rate>100000<' "$RUNS/$cfg-fastdram.xml" || { echo "ssdconfig.xml: Data_Cache_DRAM_Data_Rate is not 100" >&2; exit 1; }
done

mqsim_mean() { # config name trace-path -> mean device response time, us
    out="$RUNS/mqsim-$1-$2"
    trace_flow "$3" > "$out.xml"
    "$MQSIM/MQSim" -i "$RUNS/$1.xml" -w "$out.xml" < /dev/null > "$out.log" 2>&1
    python3 -c 'import sys, xml.etree.ElementTree as ET; print(ET.parse(sys.argv[1]).getroot().find("Host/Host.IO_Flow/Device_Response_Time").text)' "${out}_scenario_1.xml"
}

iosched_means() { # control name trace-path -> "all (reads, writes)" mean response, us
    out="$RUNS/iosched-$1-$2"
    sed "s|^trace = .*|trace = \"$3\"|" "$here/controls/$1.toml" > "$out.toml"
    iosched run "$out.toml" --requests-csv "$out.csv" --json > "$out.json"
    python3 - "$out.csv" <<'PY'
import csv, sys
by = {"read": [], "write": []}
for row in csv.DictReader(open(sys.argv[1])):
    by[row["op"]].append((int(row["complete_ns"]) - int(row["issue_ns"])) / 1000)
mean = lambda x: sum(x) / len(x)
print("%.1f (reads %.1f, writes %.1f)" % (mean(by["read"] + by["write"]), mean(by["read"]), mean(by["write"])))
PY
}

for t in "tpcc $TRACES/mqsim_tpcc-small.trace" "tpcc-al8 $RUNS/tpcc-al8.trace"; do
    set -- $t
    echo "== $1"
    for cfg in ideal ideal-fastdram default default-fastdram; do
        printf '  MQSim %-17s %6s us\n' "$cfg" "$(mqsim_mean "$cfg" "$1" "$2")"
    done
    for c in trace-tpcc-chips-wbuf-prio trace-tpcc-chips-wbuf-stripe-prio trace-tpcc-chips-wbuf-cmt trace-tpcc-chips-wbuf-stripe-cmt trace-tpcc-chips-wbuf-prio-cmt trace-tpcc-chips-wbuf-stripe-prio-cmt; do
        printf '  iosched %-38s %s us\n' "$c" "$(iosched_means "$c" "$1" "$2")"
    done
done
