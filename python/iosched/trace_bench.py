"""`iosched bench --trace-readers` and `--trace-memory`: each reader's speed on a generated trace,
and the peak memory of `trace stats` on a 0.1 GB and a 1 GB trace (docs/benchmarks.md).

Reading speed: the thread CPU time of one native `trace_count` call (open, decompress, parse
every record; nothing kept), best of `repeats`; a reader's error is raised, not reported as a
figure. Memory: each size is summarized by `trace_stats` in a
fresh child process, which reports its own peak resident set (VmHWM), so one measurement cannot
inherit another's peak.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from . import _native
from .trace_gen import FORMATS, write_bytes, write_trace

READER_RECORDS = 200_000


@dataclass
class ReaderResult:
    format: str
    records: int
    file_bytes: int
    cpu_s: float

    @property
    def records_per_s(self) -> float:
        return self.records / self.cpu_s

    @property
    def mb_per_s(self) -> float:
        return self.file_bytes / 1e6 / self.cpu_s

    def as_dict(self) -> dict:
        return {"format": self.format, "records": self.records, "file_bytes": self.file_bytes, "cpu_s": self.cpu_s,
                "records_per_s": self.records_per_s, "mb_per_s": self.mb_per_s}


def _best_cpu_s(run, repeats: int) -> tuple:
    """(the best thread CPU time of `repeats` calls of `run`, its last result)."""
    best, result = float("inf"), None
    for _ in range(max(1, repeats)):
        t0 = time.thread_time()
        result = run()
        best = min(best, time.thread_time() - t0)
    return max(best, 1e-9), result


def run_reader_bench(records: int = READER_RECORDS, repeats: int = 3, tmp: Optional[Path] = None,
                     progress=None) -> list:
    """Every format of FORMATS: `records` requests generated (seed 1) into a temporary
    directory, then read with the format given; plus `trace_stats` on the MQSim file (reading and
    summarizing, as `iosched trace stats` does)."""
    out = []
    with tempfile.TemporaryDirectory(prefix="iosched-trace-bench-", dir=tmp) as d:
        for fmt, name in FORMATS.items():
            path = write_trace(fmt, Path(d) / name, records)
            size = path.stat().st_size
            cpu_s, (n, _skipped, _) = _best_cpu_s(lambda: _native.trace_count(str(path), fmt), repeats)
            out.append(ReaderResult(fmt, n, size, cpu_s))
            if fmt == "mqsim":
                cpu_s, s = _best_cpu_s(lambda: json.loads(_native.trace_stats(str(path), fmt)), repeats)
                out.append(ReaderResult("mqsim + trace stats", s["requests"], size, cpu_s))
            path.unlink()
            if progress:
                progress()
    return out


def _peak_kb() -> dict:
    status = Path("/proc/self/status").read_text().splitlines()
    fields = dict(line.split(":", 1) for line in status if ":" in line)
    return {k: int(fields[k].split()[0]) for k in ("VmHWM", "VmRSS") if k in fields}


def _measure(path: str) -> None:
    """Child process: summarize `path`, print one JSON line (records, times, peak RSS)."""
    before = _peak_kb()
    t0, c0 = time.perf_counter(), time.process_time()
    s = json.loads(_native.trace_stats(path))
    after = _peak_kb()
    print(json.dumps({"records": s["requests"], "wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0,
                      "vmhwm_before_kb": before.get("VmHWM"), "vmhwm_kb": after.get("VmHWM"),
                      "depth_points": len((s.get("queue_depth") or {}).get("series", []))}))


def measure_in_child(path: Path) -> dict:
    r = subprocess.run([sys.executable, "-m", "iosched.trace_bench", "measure", str(path)], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"measuring {path}: {r.stderr.strip()}")
    return json.loads(r.stdout)


def run_memory_bench(gb: float = 1.0, gzip: bool = False, tmp: Optional[Path] = None, progress=None) -> list:
    """Generated traces of 0.1 GB and `gb` GB (decompressed) summarized in child processes: MQSim
    (no completion times), DiskSim validate (every request completes: the queue-depth series
    and Q2C histogram are fed too) and blktrace (Q/D/C events matched into requests); with
    `gzip`, also the `gb` MQSim one gzipped. One dict per
    file: format, size, records, times, peak RSS."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="iosched-trace-mem-", dir=tmp) as d:
        for fmt, size_gb, compress in memory_cases(gb, gzip):
            path = Path(d) / (f"gen_{size_gb:g}gb.{fmt}.trace" + (".gz" if compress else ""))
            t0 = time.perf_counter()
            records = write_bytes(fmt, path, int(size_gb * 1e9), compress=compress)
            gen_s = time.perf_counter() - t0
            m = measure_in_child(path)
            m.update({"format": fmt, "gb": size_gb, "gzip": compress, "file_bytes": path.stat().st_size,
                      "generated_records": records, "generate_s": gen_s,
                      "records_per_s": m["records"] / max(m["cpu_s"], 1e-9)})
            rows.append(m)
            path.unlink()
            if progress:
                progress()
    return rows


def memory_cases(gb: float, gzip: bool) -> list:
    cases = [("mqsim", 0.1, False), ("mqsim", gb, False)]
    if gzip:
        cases.append(("mqsim", gb, True))
    # blktrace: Q, D and C records per request, so the request builder's matching (pending
    # requests, bounded) is fed as well.
    return cases + [("disksim-validate", 0.1, False), ("disksim-validate", gb, False), ("blktrace", 0.1, False), ("blktrace", gb, False)]


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "measure":
        _measure(sys.argv[2])
    else:
        sys.exit("usage: python -m iosched.trace_bench measure PATH")
