#!/bin/sh
# Writes the iosched side of the MQSim side by side: the drive is MQSim's own default
# ssdconfig.xml read by `[device] mqsim` (MQSim built as docs/benchmarks.md says; the path is
# outside the repository), the workloads those of run_mqsim.sh: closed queue of 4 KiB random
# requests over the first half of the logical space (MQSim's Working_Set_Percentage 50).
# [device.flash] keeps a sample of each die: 128 blocks per plane instead of 2,048 (32 GiB of
# flash instead of 512 GiB: the FTL's table and the full-drive preconditioning in memory), GC's
# reserve scaled with it (MQSim's GC_Exec_Threshold 0.05 x 128); no run here reaches GC.
# Reads start from a full drive: MQSim reads pages never written from flash (it maps them on
# the fly), the model returns zeroes for them without touching flash.
set -e
cd "$(dirname "$0")"
XML=${MQSIM_XML:-/work/research/mqsim/src/ssdconfig.xml}
echo "rr-qd1 1 1 50000 full
rr-qd16 1 16 200000 full
rw-qd16 0 16 200000 none
mix70-qd16 0.7 16 200000 full" | while read -r name rd qd n pre; do
cat > "$name.toml" <<TOML
# MQSim side by side ($name; written by make_scenarios.sh): MQSim's default ssdconfig.xml
[device]
mqsim = "$XML"
queue_depth = $qd
[device.flash]
precondition = "$pre"
blocks_per_plane = 128
gc_free_superblocks = 6
[workload]
kind = "closed-queue"
queue_depth = $qd
request_kib = 4
requests = $n
read_fraction = $rd
region_end_fraction = 0.5
[[scheduler]]
name = "fcfs"
TOML
done
