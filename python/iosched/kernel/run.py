"""`iosched kernel`: the guest (repeated), the simulator on the same job, the comparison, the
files in --out:

  repN.serial.log, repN.fio.json, repN.mount.summary.json, repN.mount.requests.csv,
  repN.mount.log, repN.sim.summary.json, repN.sim.requests.csv, repN.sim-think.summary.json,
  repN.sim-think.requests.csv, repN.replay.requests.csv (the simulator's drive replaying the
  mount's requests: compare.replay_mount), comparison.json (everything), comparison.csv (per repeat and
  summary rows), job.guest.fio (the guest's copy of the job).
"""

from __future__ import annotations

import json
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, List, Optional

from . import compare, workload
from .errors import KernelError
from .workload import SIM_SCHEDULER

GUEST_SCHEDULERS = "mq-deadline kyber bfq none"
CONTROLLERS = ("auto", "ide", "ahci")
QUEUE_ORDERS = ("rpo", "fifo")


@dataclass
class Options:
    job: Path
    scheduler: str
    sets: List[str] = field(default_factory=list)
    device: str = "maxtor-stm332061"
    controller: str = "auto"
    repeat: int = 3
    out: Optional[Path] = None
    mount_scheduler: str = "fcfs"
    queue_order: str = "rpo"
    timeout_s: float = 900.0
    seed: int = 1


def check_options(o: Options) -> None:
    """The options alone (no root, nothing fetched); KernelError names the option and value."""
    if o.scheduler not in SIM_SCHEDULER:
        raise KernelError(f"--scheduler {o.scheduler}: guest kernel has: {GUEST_SCHEDULERS}")
    if o.controller not in CONTROLLERS:
        raise KernelError(f"--controller {o.controller}: expected one of {', '.join(CONTROLLERS)}")
    if o.queue_order not in QUEUE_ORDERS:
        raise KernelError(f"--queue-order {o.queue_order}: expected one of {', '.join(QUEUE_ORDERS)}")
    if not 1 <= o.repeat <= 100:
        raise KernelError(f"--repeat {o.repeat}: expected 1 to 100")
    if o.timeout_s <= 0:
        raise KernelError(f"--timeout {o.timeout_s}: expected seconds > 0")


def mount_supports_queue_depth(fuse_command: List[str]) -> bool:
    """Whether this build's `iosched mount` takes --queue-depth (its usage names it)."""
    try:
        p = subprocess.run([*fuse_command, "mount", "--help"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "--queue-depth" in (p.stdout + p.stderr)


def queue_depth_max(device: str) -> int:
    from ..api import list_devices

    for d in list_devices():
        if d.get("name") == device:
            return int(d.get("queue_depth_max") or 1)
    raise KernelError(f"--device {device}: unknown preset (iosched list devices)")


def choose_controller(asked: str, qmax: int, mount_has_queue: bool) -> "tuple[str, int, List[str]]":
    """(controller, drive queue depth, notes). auto: AHCI at the drive's depth when the drive
    queues and the mount can model it, else IDE at depth 1."""
    notes = []
    if asked == "auto":
        if qmax > 1 and mount_has_queue:
            return "ahci", qmax, notes
        if qmax > 1:
            notes.append(f"controller auto: IDE (depth 1): this iosched mount has no --queue-depth, so the drive's "
                         f"queue of {qmax} cannot be modelled")
        return "ide", 1, notes
    if asked == "ahci":
        if qmax > 1 and mount_has_queue:
            return "ahci", qmax, notes
        notes.append("controller ahci: the guest queues 32 commands, but the mount serves them one at a time "
                     + ("(the drive has no queue)" if qmax <= 1 else "(this iosched mount has no --queue-depth)")
                     + "; the simulator runs at depth 1")
        return "ahci", 1, notes
    return "ide", 1, notes


def default_out(o: Options) -> Path:
    return Path(f"iosched-kernel.{o.job.stem}.{o.scheduler}.{time.strftime('%Y%m%d-%H%M%S')}")


def run(o: Options, log: Callable[[str], None] = lambda s: None, fuse_command: Optional[List[str]] = None) -> dict:
    """The whole command; returns the comparison document (also written to OUT/comparison.json)."""
    from ..fio_job import device_capacity_bytes
    from ..scenario import ScenarioError
    from . import cache, guest, initramfs

    check_options(o)
    tunables = initramfs.check_tunables(o.sets)
    w = workload.load(o.job, o.device)
    sim_tunables, notes = workload.split_tunables(tunables, o.scheduler)
    notes = list(w.notes) + notes
    try:
        capacity = device_capacity_bytes(o.device)
    except ScenarioError as e:
        raise KernelError(str(e)) from None
    qmax = queue_depth_max(o.device)
    guest.preflight()
    if fuse_command is None:
        from ..cli import _fuse_command
        fuse_command = _fuse_command()
    controller, depth, cnotes = choose_controller(o.controller, qmax, mount_supports_queue_depth(fuse_command))
    notes += cnotes
    params = initramfs.encode_params(controller, o.scheduler, tunables, w.groups)
    out = o.out or default_out(o)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise KernelError(f"--out {out}: {e.strerror}") from None
    (out / "job.guest.fio").write_text(w.guest_text)
    pieces = cache.ensure(log=log)
    base = initramfs.base(pieces, log)
    mount_args = ["--scheduler", o.mount_scheduler, "--device", o.device]
    if depth > 1:
        mount_args += ["--queue-depth", str(depth), "--queue-order", o.queue_order]
    for n in notes:
        log(f"note: {n}")

    repeats, per_repeat_rows = [], []
    with guest.signals_interrupt():
        for i in range(o.repeat):
            prefix = out / f"rep{i + 1}"
            log(f"repeat {i + 1}/{o.repeat}: booting the guest ({controller}, {o.scheduler}) on {o.device}")
            session = guest.Session(fuse_command, log)
            try:
                b = guest.boot(session, pieces, base, w.guest_text, params, controller, capacity, mount_args, prefix,
                               o.timeout_s)
            finally:
                session.teardown()
            mount_summary = json.loads(Path(f"{prefix}.mount.summary.json").read_text())["runs"][0]
            g = compare.fio_side(b.fio, w.job_names if len(b.fio.get("jobs", [])) == len(w.job_names) else None)
            mount_rows = compare.read_csv_rows(Path(f"{prefix}.mount.requests.csv"))
            g.drive = compare.drive_view(mount_rows)
            think_us = float((mount_summary.get("think_us") or {}).get("p50") or 0.0)
            path_us = compare.path_latencies_us(mount_rows)
            sides = {}
            for tag, think, path in (("sim", 0.0, None), ("sim-think", think_us, None), ("sim-path", 0.0, path_us)):
                summary, csv_path = run_simulator(w, o.scheduler, sim_tunables, depth, think, o.seed + i, o.queue_order,
                                                  path, prefix, tag)
                side = compare.sim_side(summary)
                side.drive = compare.drive_view(compare.read_csv_rows(csv_path, run=0))
                sides[tag] = side
            rows = compare.rows_for(g, sides["sim"], sides["sim-think"], sides["sim-path"])
            replay = compare.replay_mount(Path(f"{prefix}.mount.requests.csv"), Path(f"{prefix}.replay.requests.csv"),
                                          o.device, depth, o.queue_order)
            rows += compare.replay_rows(g.drive, mount_summary.get("throughput_mb_s"), replay)
            per_repeat_rows.append(rows)
            repeats.append({"repeat": i + 1, "rows": rows, "guest_facts": b.facts, "host_s": round(b.host_s, 2),
                            "think_us_p50": think_us, "mount_throughput_mb_s": mount_summary.get("throughput_mb_s"),
                            "path_latency_us": _latency_stats(path_us)})
            agg = rows[0]
            log(f"repeat {i + 1}: guest {compare.fmt_num(agg['guest'])} MB/s, sim {compare.fmt_num(agg['sim'])}, "
                f"sim+think({think_us:.0f} us) {compare.fmt_num(agg['sim_think'])}, "
                f"sim+path {compare.fmt_num(agg['sim_path'])}; {b.host_s:.1f} s")
    summary_rows = compare.summarize(per_repeat_rows)
    doc = {"job": str(o.job), "scheduler": o.scheduler, "tunables": dict(tunables), "sim_tunables": sim_tunables,
           "device": o.device, "controller": controller, "queue_depth": depth, "queue_order": o.queue_order if depth > 1 else None, "mount_scheduler": o.mount_scheduler,
           "kernel": pieces.kernel_release, "repeats": repeats, "summary": summary_rows, "notes": notes,
           "out": str(out),
           "sim_think": "sim+think: the simulator with each process's think time increased by the mount's think_us "
                        "p50 of that repeat (the guest path between a completion and the next request)",
           "sim_path": "sim+path: the simulator with the guest path's latencies measured by the mount in that repeat "
                       "(the drive idle between a completion and the next request's arrival, one per command, in "
                       "order) as the drive's command latency (device.command_latency_us)"}
    (out / "comparison.json").write_text(json.dumps(doc, indent=1) + "\n")
    write_csv(out / "comparison.csv", per_repeat_rows, summary_rows)
    return doc


def run_simulator(w, scheduler: str, tunables: dict, depth: int, think_us: float, seed: int, queue_order: str,
                  path_us: Optional[List[float]], prefix: Path, tag: str) -> "tuple[dict, Path]":
    """One simulator variant of a repeat (workload.sim_scenario's arguments), its summary and
    requests written beside the guest's files as PREFIX.TAG.summary.json and
    PREFIX.TAG.requests.csv; returns (summary, the CSV's path)."""
    from .. import api

    scn = workload.sim_scenario(w, scheduler, tunables, depth, think_us, seed, queue_order, command_latency_us=path_us)
    csv_path = Path(f"{prefix}.{tag}.requests.csv")
    summary = api.run(scn, records=False, requests_csv=csv_path).summaries[0]
    Path(f"{prefix}.{tag}.summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    return summary, csv_path


def write_csv(path: Path, per_repeat: List[List[dict]], summary: List[dict]) -> None:
    import csv

    with open(path, "w", newline="") as f:
        wr = csv.writer(f)
        cols = compare.SIM_COLUMNS
        wr.writerow(["repeat", "metric", "unit", "guest", *cols, "guest_sd", *(f"{c}_sd" for c in cols),
                     *(f"ratio_{c}" for c in cols)])
        for i, rows in enumerate(per_repeat, 1):
            for r in rows:
                wr.writerow([i, r["metric"], r["unit"], r["guest"], *(r.get(c) for c in cols), "", *("" for _ in cols),
                             *(compare.ratio(r["guest"], r.get(c)) for c in cols)])
        for r in summary:
            wr.writerow(["mean", r["metric"], r["unit"], r["guest_mean"], *(r[f"{c}_mean"] for c in cols),
                         r["guest_sd"], *(r[f"{c}_sd"] for c in cols), *(r[f"ratio_{c}"] for c in cols)])


def _latency_stats(us: List[float]) -> dict:
    """Count, mean and quantiles of the path latencies (µs) fed to sim+path."""
    if not us:
        return {"samples": 0}
    s = sorted(us)
    q = lambda p: s[min(len(s) - 1, int(p * len(s)))]  # noqa: E731
    return {"samples": len(s), "mean": round(sum(s) / len(s), 1), "p50": q(0.5), "p90": q(0.9), "p99": q(0.99),
            "max": s[-1]}
