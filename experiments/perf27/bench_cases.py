"""Thread CPU time of one native run of each scenario file, as `iosched bench` measures its cases
(best of REPEATS; the simulation and its summary, not Python's start-up nor the JSON output):
    python experiments/perf27/bench_cases.py REPEATS FILE...
For an A/B of two builds, run it alternately under each (PYTHONPATH pointing at the other
build's package) and take the best of each."""

import json
import sys
import time

from iosched import _native

repeats = int(sys.argv[1])
for path in sys.argv[2:]:
    text = open(path).read()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.thread_time()
        runs = _native.run_scenario(text, path, None, False)
        best = min(best, time.thread_time() - t0)
    n = sum((json.loads(s) if isinstance(s, str) else s)["requests"] for s, _cols in runs)
    print(f"{path.split('/')[-1]:28s} {n:8d} requests {best:7.3f} s {n / best / 1e6:6.3f} M/s {best / n * 1e9:7.0f} ns/request")
