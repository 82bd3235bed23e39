"""The one workload description: a fio job file. The guest runs real fio on it with every
`filename=` rewritten to /dev/sda (the guest's disk, the emulated drive); the simulator runs the
scenario `iosched.fio_job` makes of the same file on the same preset (docs/fio.md).

Kernel mode needs jobs on the raw disk (`filename=/dev/...` in every job: the guest has no file
system), O_DIRECT (fio_job refuses a raw device with buffered jobs). The job's `ioscheduler=` is
dropped from the guest's copy (`--scheduler` sets the elevator). fio's `cgroup`/`cgroup_weight`
would write cgroup v1's blkio.weight, which Linux 6.1 under blk-mq does not have: the guest's
copy drops them, and /init runs each job as its own fio process inside a cgroup v2 group of
that name with the weight as `io.bfq.weight` (and `io.weight`), as the simulator runs the
job's processes in a group of that weight.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

from .errors import KernelError

GUEST_DISK = "/dev/sda"
_FILENAME = re.compile(r"^(\s*)filename(\s*)=.*$", re.IGNORECASE)
_IOSCHED = re.compile(r"^\s*ioscheduler\s*(=|$)", re.IGNORECASE)
_CGROUP_LINE = re.compile(r"^\s*(cgroup|cgroup_weight|cgroup_nodelete)\s*(=|$)", re.IGNORECASE)
_CGROUP_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")
# fio's job names kernel mode can pass to `fio --section` in the guest's shell.
_JOB_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")
REFUSED = {
    "directory": "kernel mode runs fio on the guest's raw disk: use filename=/dev/... instead",
    "filename_format": "kernel mode runs fio on the guest's raw disk: use filename=/dev/... instead",
}

# Linux's elevator names -> the simulator's scheduler names.
SIM_SCHEDULER = {"none": "noop", "mq-deadline": "mq-deadline", "bfq": "bfq", "kyber": "kyber"}
# Guest tunables under queue/ (not iosched/) that the simulator's [block] section would take; not
# passed to the simulator (its block layer is absent in fio scenarios): reported as guest-only.
QUEUE_TUNABLES = {"nr_requests", "read_ahead_kb", "max_sectors_kb", "rq_affinity", "nomerges", "add_random"}


@dataclass
class Workload:
    path: Path
    text: str
    guest_text: str
    scenario: dict                       # fio_job's conversion (TOML-ready dicts)
    job_names: List[str]                 # the processes' names, in fio's job order (clones .0, .1 ...)
    notes: List[str] = field(default_factory=list)
    # With cgroups: every job section in order as (job, cgroup name or "", weight); /init runs
    # each as its own fio process in its group. Empty: one fio runs the whole file.
    groups: List["tuple[str, str, int]"] = field(default_factory=list)


def guest_job_text(text: str, path: str) -> "tuple[str, List[str]]":
    """The guest's copy: every `filename=` line set to /dev/sda, `ioscheduler=` lines dropped.
    Returns (text, notes)."""
    out, notes = [], []
    for line in text.splitlines():
        if _FILENAME.match(line):
            m = _FILENAME.match(line)
            out.append(f"{m.group(1)}filename={GUEST_DISK}")
        elif _IOSCHED.match(line):
            notes.append(f"{path}: `{line.strip()}` dropped in the guest (--scheduler sets the elevator)")
            out.append(f"; {line.strip()}  (dropped by iosched kernel)")
        elif _CGROUP_LINE.match(line):
            out.append(f"; {line.strip()}  (cgroup v2 set up by the guest's /init instead)")
        else:
            out.append(line)
    return "\n".join(out) + "\n", notes


def load(path: Path, device: str) -> Workload:
    """Read and check job file `path` for kernel mode on device preset `device`; KernelError on
    any problem (fio_job's messages name the line, job and option)."""
    from ..fio_job import read
    from ..fio_job.parse import JobFileError, parse_job_file
    from ..scenario import Scenario, ScenarioError

    try:
        text = Scenario.read_text_file(path)
    except (OSError, ScenarioError) as e:
        raise KernelError(f"{path}: {getattr(e, 'strerror', None) or e}") from None
    try:
        jobs = parse_job_file(text, str(path)).jobs
    except JobFileError as e:
        raise KernelError(str(e)) from None
    problems = []
    for job in jobs:
        for opt, why in REFUSED.items():
            if opt in job.settings:
                s = job.settings[opt]
                problems.append(f"{path}: line {s.line}: job [{job.name}], option `{s.shown()}`: {why}")
        fn = job.settings.get("filename")
        if fn is None or not (fn.value or "").startswith("/dev/") or ":" in (fn.value or ""):
            where = f"line {fn.line}: " if fn else ""
            problems.append(f"{path}: {where}job [{job.name}]: filename={fn.value if fn else '(none)'}: kernel mode runs "
                            f"fio on the guest's raw disk: give one filename=/dev/... (rewritten to {GUEST_DISK})")
    if problems:
        raise KernelError("; ".join(dict.fromkeys(problems)))
    try:
        conv = read(path, text, device)
    except ScenarioError as e:
        raise KernelError(str(e)) from None
    if conv.target != "process":
        raise KernelError(f"{path}: buffered jobs (direct=0) run on the simulator's host model, not comparable with "
                          f"fio on the guest's raw disk: set direct=1")
    guest_text, notes = guest_job_text(text, str(path))
    names = [p["name"] for p in conv.scenario["process"]]
    groups = cgroup_plan(jobs, str(path))
    # fio_job's note on the scheduler is about its own default; --scheduler replaces it here.
    kept = [n for n in conv.notes if "ioscheduler=" not in n]
    return Workload(Path(path), text, guest_text, conv.scenario, names, kept + notes, groups)


def cgroup_plan(jobs, path: str) -> "List[tuple[str, str, int]]":
    """(job, cgroup, weight) for every job section when any job names a cgroup, else []. A job
    without one runs in the root group; fio's default weight is 500 (its v1 blkio.weight's), as
    fio_job gives the simulator. Jobs that wait for others (stonewall, wait_for) cannot run as
    separate processes: refused."""
    from ..fio_job.convert import DEFAULT_CGROUP_WEIGHT

    if not any("cgroup" in j.settings for j in jobs):
        return []
    plan, weights, problems = [], {}, []
    for j in jobs:
        for opt in ("stonewall", "wait_for", "new_group"):
            if opt in j.settings:
                s = j.settings[opt]
                problems.append(f"{path}: line {s.line}: job [{j.name}], option `{s.shown()}`: with cgroups kernel mode "
                                f"runs each job as its own fio process in its group, so jobs cannot wait for each other")
        if not _JOB_NAME.match(j.name):
            problems.append(f"{path}: job [{j.name}]: with cgroups the job's name must be letters, digits, `_.-`")
        cg = j.settings.get("cgroup")
        name = (cg.value or "").strip() if cg else ""
        if cg and not _CGROUP_NAME.match(name):
            problems.append(f"{path}: line {cg.line}: job [{j.name}], option `{cg.shown()}`: a cgroup name of "
                            f"letters, digits, `_.-` (one level)")
        w = j.settings.get("cgroup_weight")
        weight = int(w.value) if w and (w.value or "").strip().isdigit() else weights.get(name, DEFAULT_CGROUP_WEIGHT)
        weights.setdefault(name, weight)
        plan.append((j.name, name, weights[name] if name else 0))
    if problems:
        raise KernelError("; ".join(dict.fromkeys(problems)))
    return plan


def sim_scenario(w: Workload, scheduler: str, tunables: Dict[str, float], queue_depth: int = 1,
                 think_us: float = 0.0, seed: int = 1, queue_order: str = "rpo", name_suffix: str = "",
                 command_latency_us: Optional[List[float]] = None):
    """The simulator's Scenario: the job file's, under `scheduler` (Linux's name) with
    `tunables`, the drive's `queue_depth` and `queue_order`, `think_us` added to every process's
    think time, and `command_latency_us` (the guest path's latencies, one per command, cycled)
    as the drive's `command_latency_us`."""
    from ..scenario import Scenario, ScenarioError

    d = copy.deepcopy(w.scenario)
    d["scheduler"] = [dict(name=SIM_SCHEDULER[scheduler], **tunables)]
    d.setdefault("device", {})
    if queue_depth > 1:
        d["device"]["queue_depth"] = queue_depth
        d["device"]["queue_order"] = queue_order
    d.setdefault("run", {})["seed"] = seed
    if command_latency_us:
        d["device"]["command_latency_us"] = list(command_latency_us)
    if think_us > 0:
        for p in d["process"]:
            if p.get("think_every", 1) != 1:
                raise KernelError(f"{w.path}: job {p['name']} thinks every {p['think_every']} blocks: the guest's "
                                  f"think time cannot be added to it")
            p["think_us"] = round(float(p.get("think_us", 0)) + think_us, 3)
    d["name"] = f"{d.get('name', 'kernel')}{name_suffix}"
    try:
        return Scenario.from_dict(d, f"{w.path} (simulator)")
    except ScenarioError as e:
        raise KernelError(str(e)) from None


def split_tunables(sets, scheduler: str) -> "tuple[Dict[str, float], List[str]]":
    """The --set tunables the simulator's `scheduler` has too (same name and unit as Linux's),
    and the notes for those only the guest gets."""
    from ..api import list_schedulers

    sim_name = SIM_SCHEDULER[scheduler]
    known = {t["name"] for s in list_schedulers() if s["name"] == sim_name for t in s["tunables"]}
    sim, notes = {}, []
    for k, v in sets:
        if k in known:
            try:
                x = float(v)
                sim[k] = int(x) if x.is_integer() else x
            except ValueError:
                raise KernelError(f"--set {k}={v}: the simulator's {sim_name} needs a number") from None
        else:
            notes.append(f"--set {k}={v}: guest only (the simulator's {sim_name} has no {k})")
    return sim, notes
