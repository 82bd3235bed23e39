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
                best = min(best, time.thread_time() - t0)
            out.append(BenchResult(case, sched, n, best))
            if progress:
                progress()
    return out
