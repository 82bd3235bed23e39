"""`iosched bench`: simulated requests per CPU-second on fixed scenarios.

Each case is run `repeats` times; the CPU time of the native call (thread CPU time, so other
processes on the machine do not count) is measured, and the best repeat is reported. The
simulation includes the summary accumulated as it runs (no per-request records are kept).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from . import _native

OPEN_RANDOM = """
[device]
preset = "ibm-deskstar-34gxp"
[workload]
kind = "poisson"
rate_iops = 60
request_kib = 4
requests = {requests}
[[scheduler]]
name = "{scheduler}"
"""

CLOSED_Q1000 = """
[device]
preset = "fujitsu-m2361a"
[workload]
kind = "closed-queue"
queue_depth = 1000
request_kib = 4
requests = {requests}
[[scheduler]]
name = "{scheduler}"
"""

# Random 4 KiB reads, 32 outstanding, with the drive holding 1 or 32 of them (the engine's and
# the drive queue's cost per request at depth 32 against depth 1) through the block layer.
CLOSED_Q32_NCQ = """
[device]
preset = "wd-ultrastar-hc310"
queue_depth = {depth}
[block]
[workload]
kind = "closed-queue"
queue_depth = 32
request_kib = 4
requests = {requests}
[[scheduler]]
name = "{scheduler}"
"""

# A sequential reader issuing 4 KiB bios, 32 in flight: plugging and merging on every request.
MERGING = """
[device]
preset = "wd-ultrastar-hc310"
[block]
[[process]]
name = "reader"
access = "direct"
request_kib = 4
iodepth = 32
file_mib = 1000000
requests = {requests}
[[scheduler]]
name = "{scheduler}"
"""

# The host: a dd of {requests} MiB through the page cache and writeback (per page: a cache
# insert, dirtying, throttling; the flusher's chunks), and find -exec cat over 1,776 small files
# (metadata lookups, a process per file); the count is the disk requests the run made.
HOST_DD = """
[device]
preset = "wd-ultrastar-hc310"
queue_depth = 32
[block]
[host]
memory_mib = 256
[[host.file]]
path = "/big"
[[task]]
name = "dd"
command = "dd"
path = "/big"
size_mib = {requests}
bs_kib = 1024
[[scheduler]]
name = "{scheduler}"
[run]
duration_s = 3600
"""

HOST_FIND = """
[device]
preset = "ibm-deskstar-34gxp"
[block]
[host]
memory_mib = 512
[[host.tree]]
path = "/src"
depth = 2
dirs_per_dir = 10
files_per_dir = 16
file_mean_kib = 13
[[task]]
name = "find"
command = "find-exec-cat"
path = "/src"
[[scheduler]]
name = "{scheduler}"
[run]
duration_s = 3600
"""

# A RAID-0 of four drives (a lane each: scheduler, block layer, drive), random 64 KiB reads, 32
# outstanding: the engine's cost of cutting bios into pieces and joining them (the rate is of
# the workload's bios, each one or two pieces).
RAID0 = """
[device]
preset = "maxtor-6l080l0"
[array]
members = 4
chunk_kib = 64
[block]
[workload]
kind = "closed-queue"
queue_depth = 32
request_kib = 64
requests = {requests}
[[scheduler]]
name = "{scheduler}"
"""

# Sixteen processes each reading 4 KiB at random, one request outstanding each ({requests} per
# process; the count is the run's disk requests): per-process queues for CFQ and BFQ, with their
# idling, budgets or slices, and the engine's process events.
PROCESSES16 = """
[device]
preset = "wd-ultrastar-hc310"
[block]
[[process]]
name = "reader"
count = 16
access = "direct"
pattern = "random"
request_kib = 4
file_mib = 10000
requests = {requests}
[[scheduler]]
name = "{scheduler}"
[run]
duration_s = 360000
"""

SCHEDULERS = ["fcfs", "clook", "sptf"]
CASES = [
    ("open random, 60 IOPS, Deskstar", OPEN_RANDOM, 1_000_000, SCHEDULERS),
    ("closed queue Q=1000, Eagle", CLOSED_Q1000, 200_000, SCHEDULERS),
    ("closed Q=32, HC310, drive depth 1", CLOSED_Q32_NCQ.replace("{depth}", "1"), 500_000, ["noop", "clook"]),
    ("closed Q=32, HC310, NCQ depth 32", CLOSED_Q32_NCQ.replace("{depth}", "32"), 500_000, ["noop", "clook"]),
    # The same with a FIFO drive: the engine's own cost at depth 32, without the firmware's search.
    ("closed Q=32, HC310, depth 32 FIFO drive",
     CLOSED_Q32_NCQ.replace("{depth}", "32").replace("[block]", 'queue_order = "fifo"\n[block]'), 500_000, ["noop"]),
    ("4 KiB bios x 32 merged (bios/CPU-s)", MERGING, 2_000_000, ["noop"]),
    ("RAID-0 4 x Maxtor, closed Q=32, 64 KiB", RAID0, 200_000, ["deadline", "las-2.6.9"]),
    ("16 random readers, HC310 (disk requests)", PROCESSES16, 20_000, ["cfq", "bfq"]),
    ("host: dd through the page cache (disk requests)", HOST_DD, 4096, ["mq-deadline"]),
    ("host: find -exec cat, 1,776 files (disk requests)", HOST_FIND, 1, ["clook"]),
]


@dataclass
class BenchResult:
    case: str
    scheduler: str
    requests: int
    cpu_s: float

    @property
    def requests_per_cpu_s(self) -> float:
        return self.requests / self.cpu_s


def run_validate_bench(drive: str, trace: str, repeats: int = 3) -> BenchResult:
    """Replay speed of a drive validation trace: the CPU time of one native `validate_trace`
    call (read and parse the trace, load the drive, replay under FCFS, demerit and per-class
    breakdown), best of `repeats`. DiskSim's own figure, about 85,000 requests per CPU-second,
    is for the same whole run."""
    best = float("inf")
    requests = 0
    for _ in range(repeats):
        t0 = time.thread_time()
        out = _native.validate_trace(drive, trace)
        best = min(best, time.thread_time() - t0)
        if not requests:
            import json

            requests = json.loads(out)["requests"]
    return BenchResult(f"validate {Path(trace).name} on {Path(drive).name}", "fcfs", requests, max(best, 1e-9))


def run_bench(repeats: int = 3, scale: float = 1.0, progress=None) -> list[BenchResult]:
    """Runs every case x its schedulers; `scale` shrinks the request counts (quick checks). The
    merging case counts bios (accesses), each 4 KiB; 32 of them make one request."""
    out = []
    for case, template, requests, schedulers in CASES:
        n = max(1000, int(requests * scale))
        for sched in schedulers:
            text = template.format(requests=n, scheduler=sched)
            best = float("inf")
            for _ in range(repeats):
                t0 = time.thread_time()
                (summary, _cols), = _native.run_scenario(text, f"<bench {case}>", None, False)
                if isinstance(summary, str):
                    import json

                    summary = json.loads(summary)
                best = min(best, time.thread_time() - t0)
            # Host cases and the 16 readers: the run's own request count (the parameter sizes the
            # work, not the requests).
            count = summary["requests"] if case.endswith("(disk requests)") else n
            out.append(BenchResult(case, sched, count, best))
            if progress:
                progress()
    return out


# `iosched bench --sched-scaling`: a scheduler's own cost per request against the number of
# backlogged processes (iosched::sched::scaling; docs/benchmarks.md). Each process keeps two
# random 4 KiB reads outstanding on a flat device serving one request per simulated ms; the
# measured part is add + next + completed per request through the Scheduler API (no engine, no
# disk model). `max_budget = 8` (sectors: one 4 KiB request) makes every BFQ request a service
# slot of its own (a B-WF2Q+ selection and requeue per request): the worst case for the trees.
# Stride and lottery (Iyer & Druschel's proportional-share policies) choose among every
# backlogged process at each dispatch.
SCALING_PROCESSES = [10, 100, 1_000, 10_000]
SCALING_CASES = [
    ("bfq", {}),
    ("bfq", {"max_budget": 8}),
    ("bfq-plus", {}),
    ("bfq-plus", {"max_budget": 8}),
    ("cfq", {}),
    ("deadline", {}),
    ("stride", {}),
    ("lottery", {}),
]
SCALING_REQUESTS = 200_000


@dataclass
class ScalingResult:
    scheduler: str
    tunables: dict
    processes: int
    requests: int
    cpu_s: float
    slots: int  # BFQ's service slots begun in the measured run (0 for others)

    @property
    def ns_per_request(self) -> float:
        return self.cpu_s * 1e9 / self.requests

    @property
    def setting(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.tunables.items()) or "defaults"


def run_sched_scaling(repeats: int = 3, scale: float = 1.0, processes=None, progress=None) -> list[ScalingResult]:
    """Every SCALING_CASES x `processes` (default SCALING_PROCESSES): thread CPU time of serving
    SCALING_REQUESTS x `scale` requests after a warm-up (setup and warm-up not counted), best of
    `repeats`, each repeat a fresh scheduler."""
    import json

    out = []
    n = max(1000, int(SCALING_REQUESTS * scale))
    for sched, tunables in SCALING_CASES:
        for procs in processes or SCALING_PROCESSES:
            best, slots = float("inf"), 0
            for _ in range(repeats):
                r = json.loads(_native.sched_scaling(sched, procs, n, tunables={k: float(v) for k, v in tunables.items()}))
                if r["cpu_s"] < best:
                    best, slots = r["cpu_s"], r["counters"].get("slots", 0) - r["counters_at_start"].get("slots", 0)
            out.append(ScalingResult(sched, tunables, procs, n, max(best, 1e-9), slots))
            if progress:
                progress()
    return out
