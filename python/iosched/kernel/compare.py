"""Guest beside simulator: the numbers each side gives, as rows (metric, guest, sim, sim+think,
sim+path).

Guest: fio's JSON (`--output-format=json`): per job the bytes of its direction (read if it
read, else write) over its runtime (MB/s = 10^6 B/s) and clat p50/p99; aggregate = all jobs'
bytes over the longest runtime (fio's group bandwidth). The drive's view: the mount's
`--requests-csv` (requests in the order the drive started them) and summary (`think_us`).

Simulator: the run's summary (`throughput_mb_s`, per process throughput and response p50/p99:
submission to completion, as fio's clat) and its `--requests-csv` rows: the same drive-view
numbers as the mount's.

Drive view, both sides: requests; mean request size (KiB); mean seek distance between
consecutive requests (MiB, from one's end to the next's start, in start order); switches =
consecutive requests more than 1 MiB apart (the mount sees one pid, QEMU, so a change of
stream is read off the addresses); the fraction served from the drive's cache; the mean
service time (start to completion at the drive).
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional

SWITCH_SECTORS = 2048  # 1 MiB


@dataclass
class JobStats:
    name: str
    mb_s: float
    p50_ms: Optional[float]
    p99_ms: Optional[float]
    op: str


@dataclass
class Side:
    """One run's numbers on one side."""

    aggregate_mb_s: float
    jobs: List[JobStats]
    drive: Dict[str, float] = field(default_factory=dict)


def _pct(clat: dict, p: str) -> Optional[float]:
    v = (clat.get("percentile") or {}).get(p)
    return None if v is None else v / 1e6


def fio_side(doc: dict, names: Optional[List[str]] = None) -> Side:
    """fio's JSON as a Side; job k is named names[k] when given (the simulator's process names,
    in the same order), else by fio's jobname."""
    jobs, total, longest = [], 0, 0.0
    fio_jobs = doc.get("jobs") or []
    if not fio_jobs:
        raise ValueError("fio's JSON has no jobs")
    for k, j in enumerate(fio_jobs):
        rd, wr = j.get("read") or {}, j.get("write") or {}
        d = rd if rd.get("io_bytes", 0) >= wr.get("io_bytes", 0) else wr
        op = "read" if d is rd else "write"
        runtime_ms = max(rd.get("runtime", 0), wr.get("runtime", 0))
        nbytes = rd.get("io_bytes", 0) + wr.get("io_bytes", 0)
        total += nbytes
        longest = max(longest, runtime_ms)
        name = names[k] if names and k < len(names) else j.get("jobname", f"job{k}")
        mb_s = nbytes / (runtime_ms / 1e3) / 1e6 if runtime_ms > 0 else 0.0
        clat = d.get("clat_ns") or {}
        jobs.append(JobStats(name, mb_s, _pct(clat, "50.000000"), _pct(clat, "99.000000"), op))
    agg = total / (longest / 1e3) / 1e6 if longest > 0 else 0.0
    return Side(agg, jobs)


def sim_side(summary: dict) -> Side:
    jobs = [JobStats(p["name"], p["throughput_mb_s"], p["response_ms"].get("p50"), p["response_ms"].get("p99"), "")
            for p in summary["processes"]]
    return Side(summary["throughput_mb_s"], jobs)


def drive_view(rows: Iterable[dict]) -> Dict[str, float]:
    """Requests, mean size, mean seek distance and switches of per-request records (CSV rows of
    the mount or the simulator: start_sector, size_sectors, start_ns)."""
    rows = list(rows)
    reqs = sorted(((int(r["start_ns"]), int(r["start_sector"]), int(r["size_sectors"])) for r in rows))
    n = len(reqs)
    if n == 0:
        return {"requests": 0, "request_kib": 0.0, "seek_mib": 0.0, "switches": 0}
    timed = [r for r in rows if r.get("complete_ns") not in (None, "")]
    hits = [r for r in rows if str(r.get("cache_hit", "")).lower() == "true"]
    dists = [abs(s - (ps + pz)) for (_, ps, pz), (_, s, _) in zip(reqs, reqs[1:])]
    return {
        "requests": n,
        "request_kib": sum(z for _, _, z in reqs) / n / 2,
        "seek_mib": (sum(dists) / len(dists) / 2048) if dists else 0.0,
        "switches": sum(1 for d in dists if d > SWITCH_SECTORS),
        "cache_hits": len(hits) / n,
        "service_ms": (sum(int(r["complete_ns"]) - int(r["start_ns"]) for r in timed) / len(timed) / 1e6) if timed else None,
    }


def read_csv_rows(path: Path, run: Optional[int] = None) -> List[dict]:
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if run is not None and rows and "run" in rows[0]:
        rows = [r for r in rows if int(r["run"]) == run]
    return rows


# The simulator's variants, the columns beside the guest: as the job file says; with the
# guest's think time added to each process; with the guest path's measured latencies as the
# drive's command latency (`device.command_latency_us`).
SIM_COLUMNS = ("sim", "sim_think", "sim_path")


def rows_for(guest: Side, sim: Side, sim_think: Optional[Side], sim_path: Optional[Side] = None) -> List[dict]:
    """One repeat's rows: metric, unit, guest and each of SIM_COLUMNS (None where a side lacks it)."""
    out = []
    variants = {"sim": sim, "sim_think": sim_think, "sim_path": sim_path}
    jobs = {c: ({j.name: j for j in v.jobs} if v else {}) for c, v in variants.items()}

    def add(metric, unit, g, value):
        out.append({"metric": metric, "unit": unit, "guest": g, **{c: value(c, v) for c, v in variants.items()}})

    add("aggregate", "MB/s", guest.aggregate_mb_s, lambda c, v: v.aggregate_mb_s if v else None)
    for j in guest.jobs:
        for suffix, unit, attr in (("", "MB/s", "mb_s"), (" p50", "ms", "p50_ms"), (" p99", "ms", "p99_ms")):
            add(f"{j.name}{suffix}", unit, getattr(j, attr),
                lambda c, v, a=attr, n=j.name: getattr(jobs[c][n], a) if n in jobs[c] else None)
    for k, label, unit in (("requests", "drive requests", "count"), ("request_kib", "drive request size", "KiB"),
                           ("seek_mib", "drive seek", "MiB"), ("switches", "drive switches", ">1 MiB"),
                           ("cache_hits", "drive cache hits", "fraction"), ("service_ms", "drive service", "ms")):
        add(label, unit, guest.drive.get(k), lambda c, v, k=k: v.drive.get(k) if v else None)
    return out


# An idle gap longer than this is the guest doing something other than I/O (booting, fio
# starting up, the shutdown), not the path's latency: the path's own gaps here are 0.2-5 ms
# (p99), and a guest that stops issuing for a tenth of a second is not waiting on the path.
PATH_GAP_MAX_NS = 100_000_000


def path_latencies_us(rows: List[dict]) -> List[float]:
    """The guest path's latency before each command, from the mount's requests (start order):
    how long the drive sat idle between a completion and the next request's arrival (0 when
    the request was already there). Only the fio job's requests count: everything up to the
    longest idle gap (the guest booting between its partition probe and fio) is left out, and
    so is any gap above PATH_GAP_MAX_NS (fio starting, the guest shutting down)."""
    rs = sorted(rows, key=lambda r: int(r["start_ns"]))
    gaps = [max(0, int(b["issue_ns"]) - int(a["complete_ns"])) for a, b in zip(rs, rs[1:])]
    if not gaps:
        return []
    boot = max(range(len(gaps)), key=lambda i: gaps[i])
    return [round(g / 1000, 3) for g in gaps[boot + 1:] if g <= PATH_GAP_MAX_NS]


def ratio(a: Optional[float], b: Optional[float]) -> Optional[float]:
    if a is None or b is None or b == 0:
        return None
    return a / b


def mean_sd(xs: List[Optional[float]]) -> "tuple[Optional[float], Optional[float]]":
    """Mean and sample standard deviation of the values present (sd 0 for one value)."""
    v = [x for x in xs if x is not None and not (isinstance(x, float) and math.isnan(x))]
    if not v:
        return None, None
    m = sum(v) / len(v)
    sd = math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1)) if len(v) > 1 else 0.0
    return m, sd


def summarize(per_repeat: List[List[dict]]) -> List[dict]:
    """Rows of every repeat (same metrics in the same order) -> one row per metric with mean
    and sd of each column and the ratios of the means guest/sim, guest/sim_think, guest/sim_path."""
    out = []
    by_metric: Dict[str, List[dict]] = {}
    order: List[str] = []
    for rows in per_repeat:
        for r in rows:
            if r["metric"] not in by_metric:
                order.append(r["metric"])
            by_metric.setdefault(r["metric"], []).append(r)
    for m in order:
        rs = by_metric[m]
        row = {"metric": m, "unit": rs[0]["unit"], "repeats": len(rs)}
        for col in ("guest", *SIM_COLUMNS):
            row[f"{col}_mean"], row[f"{col}_sd"] = mean_sd([r.get(col) for r in rs])
            if col != "guest":
                row[f"ratio_{col}"] = ratio(row["guest_mean"], row[f"{col}_mean"])
        out.append(row)
    return out


def fmt_num(x: Optional[float]) -> str:
    if x is None:
        return "-"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    if abs(x) >= 100:
        return f"{x:.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


def fmt_pm(m: Optional[float], sd: Optional[float]) -> str:
    if m is None:
        return "-"
    return fmt_num(m) if not sd else f"{fmt_num(m)} ± {fmt_num(sd)}"


def fmt_ratio(x: Optional[float]) -> str:
    return "-" if x is None else f"{x:.2f}"


def replay_mount(mount_csv: Path, out_csv: Path, device: str, queue_depth: int = 1, queue_order: str = "rpo") -> dict:
    """The mount's own request stream replayed in the simulator's drive model ("dependent":
    each request after the previous one completes plus the think time observed in the mount,
    fcfs, same preset and drive queue): the check that the emulated drive and the simulator's
    drive agree on the same arrivals. Returns its drive view and throughput."""
    from .. import api
    from ..scenario import Scenario

    src = out_csv.with_suffix(".input.csv")
    with open(mount_csv, newline="") as f, open(src, "w", newline="") as g:
        r, w = csv.reader(f), csv.writer(g)
        header = next(r)
        w.writerow(["run", "scheduler", *header])
        for row in r:
            w.writerow(["0", "fcfs", *row])
    device_sec = {"preset": device}
    if queue_depth > 1:
        device_sec.update(queue_depth=queue_depth, queue_order=queue_order)
    scn = Scenario.from_dict({"name": "mount-replay", "device": device_sec,
                              "workload": {"kind": "trace", "trace": str(src.resolve()), "format": "requests-csv",
                                           "replay": "dependent"},
                              "scheduler": [{"name": "fcfs"}]}, "mount replay")
    try:
        res = api.run(scn, records=False, requests_csv=out_csv)
    finally:
        src.unlink()
    summary = res.summaries[0]
    view = drive_view(read_csv_rows(out_csv, run=0))
    view["throughput_mb_s"] = summary["throughput_mb_s"]
    return view


def replay_rows(mount: Dict[str, float], mount_mb_s: float, replay: Dict[str, float]) -> List[dict]:
    """Rows "replay ...": guest column = the mount's drive, sim column = the simulator's drive
    replaying the mount's requests (replay_mount); no sim+think."""
    out = []
    for k, label, unit in (("throughput_mb_s", "replay drive MB/s", "MB/s"), ("cache_hits", "replay cache hits", "fraction"),
                           ("service_ms", "replay service", "ms")):
        g = mount_mb_s if k == "throughput_mb_s" else mount.get(k)
        out.append({"metric": label, "unit": unit, "guest": g, "sim": replay.get(k), "sim_think": None, "sim_path": None})
    return out
