"""`iosched bench`: simulated requests per CPU-second on fixed scenarios.

Each case is run `repeats` times; the CPU time of the native call (thread CPU time, so other
processes on the machine do not count) is measured, and the best repeat is reported. The
simulation includes the per-request records and the summary; Python conversion is excluded
(records are not handed to Python).
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

CASES = [
    ("open random, 60 IOPS, Deskstar", OPEN_RANDOM, 1_000_000),
    ("closed queue Q=1000, Eagle", CLOSED_Q1000, 200_000),
]
SCHEDULERS = ["fcfs", "clook", "sptf"]


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
    """Runs every case x scheduler; `scale` shrinks the request counts (for quick checks)."""
    out = []
    for case, template, requests in CASES:
        n = max(1000, int(requests * scale))
        for sched in SCHEDULERS:
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
