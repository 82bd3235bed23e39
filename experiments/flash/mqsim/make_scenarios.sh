#!/bin/sh
# Writes the iosched side of the MQSim side by side: the drive is MQSim's own default
# ssdconfig.xml read by `[device] mqsim` (MQSim built as docs/benchmarks.md says; the path is
# outside the repository), the workloads those of run_mqsim.sh: closed queue of 4 KiB random
# requests over the first half of the logical space (MQSim's Working_Set_Percentage 50).
# The read runs' [device.flash] are written with a sample of each die: 128 blocks per plane
# instead of 2,048 (32 GiB of flash instead of 512 GiB), GC's reserve scaled with it (MQSim's
# GC_Exec_Threshold 0.05 x 128); the controls keep it, the description as read takes the whole
# drive again at the end (below); no run here reaches GC.
# Reads start from a full drive: MQSim reads pages never written from flash (it maps them on
# the fly), the model returns zeroes for them without reading a data page (with the mapping
# cache, after the translation page on a miss).
set -e
cd "$(dirname "$0")"
XML=${MQSIM_XML:-/work/research/mqsim/src/ssdconfig.xml}
# The writes-only run takes the whole drive (2,048 blocks, GC's reserve with it): MQSim keeps data
# rewritten within a second in DRAM (hot), and the sample's 16 times smaller logical space would
# make rewrites 16 times likelier (2,392 hot writes of 200,000 against 157 on the whole drive;
# MQSim 131). From a fresh drive it costs no preconditioning.
echo "rr-qd1 1 1 50000 full 128 6
rr-qd16 1 16 200000 full 128 6
rw-qd16 0 16 200000 none 2048 102
mix70-qd16 0.7 16 200000 full 128 6" | while read -r name rd qd n pre blocks reserve; do
cat > "$name.toml" <<TOML
# MQSim side by side ($name; written by make_scenarios.sh): MQSim's default ssdconfig.xml
[device]
mqsim = "$XML"
queue_depth = $qd
[device.flash]
precondition = "$pre"
blocks_per_plane = $blocks
gc_free_superblocks = $reserve
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

# MQSim's two traces, open loop at their own times, on the whole drive (its LBAs reach 126 GiB
# and beyond, so no sample: 2,048 blocks per plane, the description as it is) from a full drive.
for t in tpcc wsrch; do
cat > "trace-$t.toml" <<TOML
# MQSim side by side (trace-$t; written by make_scenarios.sh): MQSim's default ssdconfig.xml
[device]
mqsim = "$XML"
queue_depth = 1024
[device.flash]
precondition = "full"
[workload]
kind = "trace"
trace = "${TRACES:-/work/shared/traces}/mqsim_$t-small.trace"
format = "mqsim"
replay = "open"
[[scheduler]]
name = "fcfs"
TOML
done

# Controlled runs (controls/): the same scenarios with MQSim's mechanisms that the description
# does not carry set by hand (docs/reproductions/flash/mqsim.md):
#   chips: dies_per_channel = 4 (MQSim's chips per channel): its scheduler starts one command per
#          chip at a time, so a chip's two dies rarely overlap;
#   wbuf:  write_buffer_kib = 1024 (one 8 KiB page per plane, 8 x 4 x 2 x 2 = 128 planes: 2,048
#          sectors, SSD_Device.cpp's back_pressure_buffer_max_depth): MQSim's back-pressure
#          bound on in-flight write-backs, cold data being written back at once;
#   page:  page_kib = 4, planes_per_die = 1, mapping_unit_kib = 4: MQSim programs one 8 KiB page
#          per 4 KiB write (each LPA is a page) and rarely pairs planes (1.5% multi-plane programs
#          in rw-qd16); 4 KiB mapping units (the description's are 8 KiB, MQSim's page) because
#          MQSim reads the other half of a page first only if it was written before, which its
#          workload-derived preconditioning rarely makes so, while the model's full drive would;
#   stripe: planes_per_die = 1 with twice the pages per block: the model's static allocation then
#          stripes 8 KiB pages across channels and chips as MQSim's CWDP does (not 16 KiB chunks).
# Every control also sets mapping_cache_kib = 0: they are compared with MQSim run with
# Ideal_Mapping_Table = true (the whole table in DRAM); the scenarios above read the description's
# 2 MiB cached mapping table and are compared with MQSim as configured.
mkdir -p controls
ctl() { # source name extra-lines
    sed "s|^\(gc_free_superblocks = [0-9]*\)$|\1$3|; s|^precondition = \"full\"$|precondition = \"full\"$4|; s|^\[device.flash\]$|[device.flash]\nmapping_cache_kib = 0|" "$1.toml" |
        sed "1s|.*|# MQSim side by side, controlled ($2; written by make_scenarios.sh)|" > "controls/$2.toml"
}
ctl rr-qd1 rr-qd1-chips '\ndies_per_channel = 4'
ctl rr-qd16 rr-qd16-chips '\ndies_per_channel = 4'
# The writes' control keeps MQSim's capacity (512 GiB) with half the dies and a quarter of the
# page: 8 x 2,048 blocks per plane (GC's reserve with it), for the reason above.
ctl rw-qd16 rw-qd16-chips-wbuf-page '\ndies_per_channel = 4\npage_kib = 4\nmapping_unit_kib = 4\nplanes_per_die = 1\nwrite_buffer_kib = 1024'
sed -i 's|^blocks_per_plane = 2048|blocks_per_plane = 16384|; s|^gc_free_superblocks = 102|gc_free_superblocks = 819|' controls/rw-qd16-chips-wbuf-page.toml
# With MQSim's chips alone (the description as read has its write cache, pages and planes since
# the seventeenth session), 2 x 2,048 blocks per plane keep its capacity with half the dies.
ctl rw-qd16 rw-qd16-chips '\ndies_per_channel = 4'
sed -i 's|^blocks_per_plane = 2048|blocks_per_plane = 4096|; s|^gc_free_superblocks = 102|gc_free_superblocks = 204|' controls/rw-qd16-chips.toml
# The 70% mix's controls take the whole drive (2,048 blocks per plane, GC's reserve with it): with
# half the dies (chips) and MQSim's 8 KiB mapping units (a 4 KiB write programs 8 KiB) or 4 KiB
# pages (page), the 128-block sample would reach GC, which MQSim's whole drive does not.
sed 's|^\[device.flash\]$|[device.flash]\nmapping_cache_kib = 0|; s|^blocks_per_plane = 128|blocks_per_plane = 2048|; s|^gc_free_superblocks = 6|gc_free_superblocks = 102\ndies_per_channel = 4|' mix70-qd16.toml |
    sed "1s|.*|# MQSim side by side, controlled (mix70-qd16-chips; written by make_scenarios.sh)|" > controls/mix70-qd16-chips.toml
sed 's|^\[device.flash\]$|[device.flash]\nmapping_cache_kib = 0|; s|^blocks_per_plane = 128|blocks_per_plane = 2048|; s|^gc_free_superblocks = 6|gc_free_superblocks = 102\ndies_per_channel = 4\npage_kib = 4\nmapping_unit_kib = 4\nplanes_per_die = 1\nwrite_buffer_kib = 1024|' mix70-qd16.toml |
    sed "1s|.*|# MQSim side by side, controlled (mix70-qd16-chips-wbuf-page; written by make_scenarios.sh)|" > controls/mix70-qd16-chips-wbuf-page.toml
for t in tpcc wsrch; do
    ctl "trace-$t" "trace-$t-chips-wbuf" '' '\ndies_per_channel = 4\nwrite_buffer_kib = 1024'
    ctl "trace-$t" "trace-$t-chips-wbuf-stripe" '' '\ndies_per_channel = 4\nwrite_buffer_kib = 1024\nplanes_per_die = 1\npages_per_block = 512'
done
# prio: read_priority = true (issue 28's die scheduling): MQSim's transaction scheduler serves a
#       chip's queued reads before its programs and erases; its suspension never fires (its
#       TSUs' service_read_transaction returns false on every busy chip), so no suspend.
for c in rw-qd16-chips rw-qd16-chips-wbuf-page mix70-qd16-chips mix70-qd16-chips-wbuf-page trace-tpcc-chips-wbuf trace-tpcc-chips-wbuf-stripe; do
    sed 's|^\[device.flash\]$|[device.flash]\nread_priority = true|; 1s|(\([^;]*\);|(\1-prio;|' "controls/$c.toml" > "controls/$c-prio.toml"
done
# mqchips: MQSim's chips as its scheduler and its flash interface drive them, in place of `chips`:
#          dies_per_chip = 2 (the description's Die_No_Per_Chip: a chip is sent a command only
#          when idle, so its two dies take one at a time: ssd/TSU_Base.cpp) and cache_registers =
#          false (a read holds its chip until its data is out over the channel, a program from the
#          start of its data's transfer: ssd/NVM_PHY_ONFI_NVDDR2.cpp) and sector_transfers = true
#          (its channel transfers carry only the sectors a command asks for, the same file's
#          Data_and_metadata_size_in_byte). The geometry stays the description's (8 dies per
#          channel), so the writes' run keeps its 2,048 blocks.
for c in rr-qd1-chips rr-qd16-chips rw-qd16-chips-prio mix70-qd16-chips-prio trace-wsrch-chips-wbuf trace-tpcc-chips-wbuf-prio; do
    n=$(echo "$c" | sed 's/-chips/-mqchips/')
    sed 's|^dies_per_channel = 4$|dies_per_chip = 2\ncache_registers = false\nsector_transfers = true|; s|^blocks_per_plane = 4096$|blocks_per_plane = 2048|; s|^gc_free_superblocks = 204$|gc_free_superblocks = 102|' "controls/$c.toml" |
        sed "1s|($c;|($n;|" > "controls/$n.toml"
done
# cmt: every control with the description's cached mapping table instead (mapping_cache_kib = 0
#      dropped): compared with MQSim as configured, they isolate the mapping cache.
for f in controls/*.toml; do
    case $f in *-cmt.toml | *-ideal.toml) continue ;; esac
    c=$(basename "$f" .toml)
    sed '/^mapping_cache_kib = 0$/d; 1s|(\([^;]*\);|(\1-cmt;|' "$f" > "controls/$c-cmt.toml"
done
# Since the nineteenth session the reader sets MQSim's chips and transaction scheduler from the
# description (dies_per_chip = Die_No_Per_Chip, cache_registers = false, sector_transfers = true,
# read_priority = true) and its page status from the workload (workload_page_status = true): the
# scenarios above are MQSim's drive as MQSim runs it. Each control names the rules it sets and
# sets the others back to the model's own, so that it isolates what its name says (and its
# results are what they were before the reader set them).
for f in controls/*.toml; do
    case $f in *-ideal.toml) continue ;; esac
    add=""
    grep -q '^dies_per_chip = ' "$f" || add="$add\ndies_per_chip = 1\ncache_registers = true\nsector_transfers = false"
    grep -q '^read_priority = ' "$f" || add="$add\nread_priority = false"
    grep -q '^workload_page_status = ' "$f" || add="$add\nworkload_page_status = false\non_the_fly_read_mapping = false"
    [ -n "$add" ] && sed -i "s|^\[device.flash\]$|[device.flash]$add|" "$f"
done
# Since the nineteenth session the reader also maps a page's first read to a page at its plane's
# frontier (on_the_fly_read_mapping, as MQSim does): the reads' runs would use up a 128-block
# sample's spare space and reach GC, which MQSim's whole drive never does, so the description as
# read takes the whole drive in every run (2,048 blocks per plane, GC's reserve with it); the
# controls above keep their sample.
for s in rr-qd1 rr-qd16 mix70-qd16; do
    sed -i 's|^blocks_per_plane = 128$|blocks_per_plane = 2048|; s|^gc_free_superblocks = 6$|gc_free_superblocks = 102|' "$s.toml"
done
# ideal: the description as read with the whole mapping table in DRAM (mapping_cache_kib = 0),
#        compared with MQSim run with Ideal_Mapping_Table = true.
for s in rr-qd1 rr-qd16 rw-qd16 mix70-qd16 trace-tpcc trace-wsrch; do
    sed 's|^\[device.flash\]$|[device.flash]\nmapping_cache_kib = 0|' "$s.toml" |
        sed "1s|.*|# MQSim side by side, the description as read with MQSim's ideal mapping ($s-ideal; written by make_scenarios.sh)|" > "controls/$s-ideal.toml"
done
