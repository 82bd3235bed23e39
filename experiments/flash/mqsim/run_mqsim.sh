#!/bin/sh
# Runs MQSim (built as docs/benchmarks.md "Building MQSim locally" says, outside the repository)
# on the side-by-side workloads: 4 KiB random requests at a fixed queue depth over the first half
# of the logical space (MQSim's workload.xml flows), on MQSim's default ssdconfig.xml ("default")
# and on the same with Ideal_Mapping_Table = true ("ideal": the whole mapping table in DRAM, as
# the iosched model holds it). Writes MQSim's inputs and outputs under $RUNS and prints one line
# per run: IOPS, mean response (us), whole-process CPU seconds (user + sys).
# Traces: MQSim's trace-based flow (open loop at the trace's times) on /work/shared/traces's
# mqsim_tpcc-small and mqsim_wsrch-small (read from there, never copied).
# Usage: experiments/flash/mqsim/run_mqsim.sh [case-pattern]
# With RESPLOGS=DIR and an MQSim built with the per-request log (docs/benchmarks.md, "Building
# MQSim locally"), each run logs its requests to DIR/<case>-<default|ideal>.resp (an MQSim
# without the log ignores the variable); percentiles.py reads those logs.
set -e
MQSIM=${MQSIM:-/work/research/mqsim/src}
RUNS=${RUNS:-/work/research/mqsim/runs}
mkdir -p "$RUNS"
cp "$MQSIM/ssdconfig.xml" "$RUNS/default.xml"
sed 's|<Ideal_Mapping_Table>false<|<Ideal_Mapping_Table>true<|' "$MQSIM/ssdconfig.xml" > "$RUNS/ideal.xml"

# name read_percentage queue_depth requests
cases="rr-qd1 100 1 50000
rr-qd16 100 16 200000
rw-qd16 0 16 200000
mix70-qd16 70 16 200000
trace-tpcc tpcc-small - -
trace-wsrch wsrch-small - -"

. "$(dirname "$0")/mqsim_flows.sh"


echo "$cases" | while read -r name rd qd n; do
    case $name in *${1:-}*) ;; *) continue ;; esac
    case $name in
        trace-*) trace_flow "${TRACES:-/work/shared/traces}/mqsim_$rd.trace" > "$RUNS/$name.xml" ;;
        *) flow "$rd" "$qd" "$n" > "$RUNS/$name.xml" ;;
    esac
    for cfg in default ideal; do
        out="$RUNS/$name-$cfg"
        cp "$RUNS/$name.xml" "$out.xml"
        if [ -n "${RESPLOGS:-}" ]; then
            mkdir -p "$RESPLOGS"
            rm -f "$RESPLOGS/$name-$cfg.resp"
            export MQSIM_RESPLOG="$RESPLOGS/$name-$cfg.resp"
        else
            unset MQSIM_RESPLOG  # one inherited from the caller would take every run's log
        fi
        /usr/bin/time -f "%U %S %M" -o "$out.time" "$MQSIM/MQSim" -i "$RUNS/$cfg.xml" -w "$out.xml" < /dev/null > "$out.log" 2>&1
        python3 - "$out" "$name" "$cfg" <<'PY'
import sys, xml.etree.ElementTree as ET
out, name, cfg = sys.argv[1:]
f = ET.parse(out + "_scenario_1.xml").getroot().find("Host/Host.IO_Flow")
u, s, rss = open(out + ".time").read().split()[-3:]
print("%-11s %-7s %9.0f IOPS  mean %6s us  (min %s, max %s)  requests %s  cpu %.2f s  rss %d MB" % (
    name, cfg, float(f.find("IOPS").text), f.find("Device_Response_Time").text,
    f.find("Min_Device_Response_Time").text, f.find("Max_Device_Response_Time").text,
    f.find("Request_Count").text, float(u) + float(s), int(rss) // 1024))
PY
    done
done
