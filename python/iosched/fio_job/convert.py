"""A fio job file's jobs as an iosched scenario.

Direct I/O jobs (direct=1) become `[[process]]` entries (access = "direct"): one per clone
(numjobs), with its region of the disk, request size, direction and pattern, iodepth, request
count or runtime, think time, rate cap, I/O priority and cgroup. Buffered jobs (fio's default,
direct=0) need a page cache: the whole file then runs on a simulated Linux host (`[host]`), each
clone a `[[task]]` running the fio-like command that matches it (docs/host.md: seq-read,
rand-read, seq-write, rand-write; cat and dd for jobs that end after their size). Whatever a
target cannot express is a problem naming the file, line, job and option. docs/fio.md has the
whole mapping.
"""

from __future__ import annotations

import posixpath
import textwrap
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from .jobs import US_PER_S, JobSpec, Problem, classify_settings, read_job
from .parse import JobFile

MIB = 1 << 20
KIB = 1 << 10
DEFAULT_DEVICE = "ibm-deskstar-34gxp"  # the scenario format's default preset
# A run whose jobs end by their size (not by a time) is capped at this (run.duration_s).
CAP_S = 3600.0
# Files are laid out from the start of the disk on 1 MiB boundaries (ext4's and partitioning
# tools' usual alignment): an assumption, as a fresh file system would place them.
FILE_ALIGN = MIB
# fio sets cgroup v1's blkio.weight (cgroup.c); its default there is 500.
DEFAULT_CGROUP_WEIGHT = 500
CGROUP_ID_BASE = 1_000_000  # group ids for cgroups, away from the pids (1, 2, ...)
# Linux elevator names (fio's ioscheduler=) -> iosched's schedulers.
ELEVATORS = {"none": "noop", "noop": "noop", "mq-deadline": "mq-deadline", "deadline": "deadline",
             "bfq": "bfq", "kyber": "kyber", "cfq": "cfq", "anticipatory": "las"}


class FioJobError(ValueError):
    """The job file cannot be modelled: one line per problem."""


@dataclass
class Clone:
    spec: JobSpec
    k: int
    name: str
    path: str
    raw_device: bool
    offset: int = 0
    region: int = 0
    requests: Optional[int] = None
    group: int = 0
    start: Tuple[str, object] = ("at", 0)   # ("at", microseconds) or ("after", clone name)

    @property
    def end_us(self) -> Optional[int]:
        """When it stops issuing, if known: a runtime from a known start."""
        if self.start[0] != "at" or self.spec.runtime_us is None:
            return None
        return int(self.start[1]) + self.spec.startdelay_us + self.spec.runtime_us


@dataclass
class Conversion:
    """The scenario (as TOML-ready dicts), where each entry came from, and the notes to show."""

    source: str
    scenario: dict
    notes: List[str] = field(default_factory=list)
    origins: List[str] = field(default_factory=list)  # one per [[process]] or [[task]]

    @property
    def target(self) -> str:
        return "host" if "host" in self.scenario else "process"


def _where(path: str, p: Problem) -> str:
    return f"{path}: line {p.line}: job [{p.job}], option `{p.option}`: {p.why}"


def _raise(path: str, problems: List[Problem]) -> None:
    seen, lines = set(), []
    for p in sorted(problems, key=lambda p: p.line):
        key = (p.line, p.option, p.why)
        if key not in seen:
            seen.add(key)
            lines.append(_where(path, p))
    raise FioJobError("\n".join(lines))


def _is_device(path: str) -> bool:
    return path.startswith("/dev/") and not path.startswith("/dev/shm/")


def _clone_path(spec: JobSpec, k: int) -> Tuple[str, bool]:
    """The clone's file (absolute; fio's default name `jobname.N.0` in `directory`) or device."""
    directory = (spec.directory or "").replace("\\:", ":").rstrip("/")
    if spec.filename:
        name = spec.filename.replace("\\:", ":")
        if _is_device(name):
            return name, True
        path = name if name.startswith("/") else f"{directory}/{name}"
    else:
        path = f"{directory}/{spec.name}.{k}.0"
    return posixpath.normpath("/" + path.lstrip("/")), False


def _bytes(value: Tuple[int, bool], whole: Optional[int], align: int) -> Optional[int]:
    """A size or offset in bytes; a percentage of `whole` aligned down to `align` (None: no whole)."""
    n, percent = value
    if not percent:
        return n
    if whole is None:
        return None
    return whole * n // 100 // align * align


def _clones(specs: List[JobSpec], capacity: int, problems: List[Problem]) -> List[Clone]:
    clones: List[Clone] = []
    used = set()
    for spec in specs:
        def fail(option: str, why: str) -> None:
            s = spec.setting(option)
            problems.append(Problem(s.line if s else spec.line, spec.name, s.shown() if s else option, why))

        for k in range(spec.numjobs):
            name = spec.name if spec.numjobs == 1 else f"{spec.name}.{k}"
            base, n = name, 2
            while name in used:
                name, n = f"{base}#{n}", n + 1
            used.add(name)
            path, raw = _clone_path(spec, k)
            c = Clone(spec, k, name, path, raw)
            whole = capacity if raw else spec.filesize
            offset = _bytes(spec.offset, whole, spec.offset_align)
            increment = _bytes(spec.offset_increment, whole, spec.offset_align)
            if offset is None or increment is None:
                fail("offset" if offset is None else "offset_increment",
                     "a percentage of a file fio creates: give bytes (or filesize)")
                continue
            c.offset = offset + k * increment
            if c.offset % 4096:
                fail("offset" if spec.offset[0] else "offset_increment",
                     f"clone {k} starts {c.offset} bytes in: iosched places a process's region on 4 KiB boundaries")
                continue
            if spec.filesize is not None:
                region = spec.filesize - c.offset
            elif spec.size is not None:
                region = _bytes(spec.size, whole, spec.bs)
                if region is None:
                    fail("size", "a percentage of a file fio creates: give bytes")
                    continue
                if spec.size[1]:
                    region = min(region, whole - c.offset)
            elif raw:
                region = capacity - c.offset
            else:
                fail("size", "fio needs size= (or filesize=) to create a job's file")
                continue
            if region < spec.bs:
                fail("size", f"clone {k}'s region ({region} bytes from offset {c.offset}) holds no {spec.bs}-byte block")
                continue
            c.region = region
            if spec.time_based:
                c.requests = spec.number_ios
            else:
                amount = spec.io_size or (spec.size[0] if spec.filesize is not None and spec.size and not spec.size[1]
                                          else region)
                c.requests = amount * spec.loops // spec.bs
                if spec.number_ios:
                    c.requests = min(c.requests, spec.number_ios)
                if c.requests == 0:
                    fail("io_size" if spec.io_size else "size", f"less than one {spec.bs}-byte block of I/O")
                    continue
            clones.append(c)
    return clones


def _groups(clones: List[Clone], problems: List[Problem]) -> None:
    """Stonewalls and wait_for as start times or `after`: a group starts when the one before it
    ends, known either as a time (time-based jobs from a known start) or as one process's exit."""
    group = 0
    previous: List[Clone] = []
    current: List[Clone] = []
    start: Tuple[str, object] = ("at", 0)
    by_job: Dict[str, List[Clone]] = {}
    for c in clones:
        spec = c.spec
        first_clone = c.k == 0
        if first_clone and spec.stonewall and current:
            previous, current, group = current, [], group + 1
            ends = [p.end_us for p in previous]
            if all(e is not None for e in ends):
                start = ("at", max(ends))
            elif len(previous) == 1 and (previous[0].requests or previous[0].spec.runtime_us):
                start = ("after", previous[0].name)
            else:
                s = spec.setting("stonewall")
                problems.append(Problem(s.line if s else spec.line, spec.name, s.shown() if s else "stonewall",
                                        f"waits for {len(previous)} jobs that end by their size: iosched's `after` waits for "
                                        f"one process; make them time_based with runtime, or one job"))
        c.group = group
        c.start = start
        if spec.wait_for:
            s = spec.setting("wait_for")
            waitee = by_job.get(spec.wait_for)
            if spec.stonewall:
                problems.append(Problem(s.line, spec.name, s.shown(), "both stonewall and wait_for: give one"))
            elif waitee is None:
                problems.append(Problem(s.line, spec.name, s.shown(), "no earlier job of that name"))
            elif len(waitee) != 1 or not (waitee[0].requests or waitee[0].spec.runtime_us):
                problems.append(Problem(s.line, spec.name, s.shown(),
                                        "the job has several clones or never ends: iosched's `after` waits for one process"))
            else:
                c.start = ("at", waitee[0].end_us) if waitee[0].end_us is not None else ("after", waitee[0].name)
        current.append(c)
        by_job.setdefault(spec.name, []).append(c)


def _layout(clones: List[Clone], capacity: int, problems: List[Problem]) -> Dict[str, Tuple[int, int]]:
    """Files back to back from the start of the disk, 1 MiB aligned, in order of first use:
    path -> (start byte, length). A raw device is the whole disk from 0."""
    devices = sorted({c.path for c in clones if c.raw_device})
    files = [c for c in clones if not c.raw_device]
    if len(devices) > 1:
        c = next(c for c in clones if c.raw_device and c.path == devices[1])
        problems.append(Problem(c.spec.line, c.spec.name, "filename", f"devices {', '.join(devices)}: iosched simulates one disk"))
    if devices and files:
        c = files[0]
        problems.append(Problem(c.spec.line, c.spec.name, "filename",
                                f"files and the raw device {devices[0]} in one job file: iosched simulates one disk and "
                                f"cannot tell where a file system on it would put the files"))
    lengths: Dict[str, int] = {}
    for c in clones:
        lengths[c.path] = max(lengths.get(c.path, 0), c.offset + c.region)
    placed: Dict[str, Tuple[int, int]] = {}
    cursor = 0
    for path, length in lengths.items():
        if path in devices:
            placed[path] = (0, capacity)
            continue
        start = -(-cursor // FILE_ALIGN) * FILE_ALIGN
        placed[path] = (start, length)
        cursor = start + length
    for c in clones:
        start, _ = placed[c.path]
        if start + c.offset + c.region > capacity:
            s = c.spec.setting("offset") if c.offset else None
            s = s or c.spec.setting("size") or c.spec.setting("filesize")
            problems.append(Problem(s.line if s else c.spec.line, c.spec.name, s.shown() if s else "size",
                                    f"{c.path}: bytes {start + c.offset} to {start + c.offset + c.region} of the disk "
                                    f"(files laid out back to back) pass its end ({capacity} bytes)"))
            break
    return placed


def _scheduler_names(specs: List[JobSpec], chosen: Optional[List[str]], notes: List[str],
                     problems: List[Problem]) -> List[str]:
    wanted = {s.ioscheduler for s in specs if s.ioscheduler}
    if chosen:
        if wanted:
            notes.append(f"ioscheduler={', '.join(sorted(wanted))} in the job file: replaced by --scheduler "
                         f"{' '.join(chosen)}")
        return list(chosen)
    if len(wanted) > 1:
        s = next(s for s in specs if s.ioscheduler and s.ioscheduler != specs[0].ioscheduler)
        problems.append(Problem(s.setting("ioscheduler").line, s.name, "ioscheduler",
                                f"jobs ask for different schedulers ({', '.join(sorted(wanted))}): a scenario runs "
                                f"each of its schedulers on the whole workload"))
        return []
    if not wanted:
        notes.append("no ioscheduler= in the job file: the scenario's default scheduler (fcfs) runs; "
                     "`iosched import-fio --scheduler NAME ...` or ioscheduler= chooses")
        return []
    name = wanted.pop()
    if name not in ELEVATORS:
        s = next(s for s in specs if s.ioscheduler)
        problems.append(Problem(s.setting("ioscheduler").line, s.name, "ioscheduler",
                                f"`{name}`: known Linux elevators: {', '.join(ELEVATORS)}"))
        return []
    return [ELEVATORS[name]]


def _prio_and_group(c: Clone, entry: dict, cgroups: Dict[str, int]) -> None:
    spec = c.spec
    if spec.prio_class:
        entry["prio_class"] = spec.prio_class
        entry["prio_level"] = spec.prio_level
    if spec.cgroup:
        entry["group"] = CGROUP_ID_BASE + list(cgroups).index(spec.cgroup)
        entry["group_weight"] = cgroups[spec.cgroup]


def _cgroups(specs: List[JobSpec], problems: List[Problem]) -> Dict[str, int]:
    weights: Dict[str, int] = {}
    for s in specs:
        if not s.cgroup:
            continue
        w = s.cgroup_weight
        if s.cgroup in weights and w is not None and weights[s.cgroup] != w:
            problems.append(Problem(s.setting("cgroup_weight").line, s.name, "cgroup_weight",
                                    f"cgroup `{s.cgroup}` has weight {weights[s.cgroup]} from an earlier job"))
        if w is not None or s.cgroup not in weights:
            weights[s.cgroup] = w if w is not None else DEFAULT_CGROUP_WEIGHT
    return weights


def _number(x: float):
    """An int where the value is whole (cleaner TOML), else the float."""
    return int(x) if float(x).is_integer() else x


def _processes(clones: List[Clone], placed, cgroups, problems: List[Problem]) -> Tuple[List[dict], List[str]]:
    entries, origins = [], []
    for c in clones:
        spec = c.spec

        def fail(option: str, why: str) -> None:
            s = spec.setting(option)
            problems.append(Problem(s.line if s else spec.line, spec.name, s.shown() if s else option, why))

        writes = spec.op in ("write", "mixed")
        if spec.o_sync and writes:
            fail("sync", "O_SYNC/O_DSYNC direct writes wait for the drive's write cache (FUA): not modelled")
        if spec.end_fsync and writes:
            opt = next(o for o in ("end_fsync", "fsync_on_close", "end_syncfs") if spec.setting(o))
            fail(opt, "with direct I/O this is the drive's cache flush at the end: not modelled")
        if spec.op == "discard" and not c.raw_device:
            fail("rw", "trims of a file: fio trims Linux block devices only (filename=/dev/...)")
        file_start, _ = placed[c.path]
        e = {"name": c.name, "pattern": spec.pattern, "op": spec.op}
        if spec.op == "mixed":
            e["read_fraction"] = spec.read_fraction
        e["request_kib"] = _number(spec.bs / KIB)
        e["file_offset_mib"] = _number((file_start + c.offset) / MIB)
        e["file_mib"] = _number(c.region / MIB)
        e["access"] = "direct"
        if spec.iodepth > 1:
            e["iodepth"] = spec.iodepth
        if c.requests:
            e["requests"] = c.requests
        if spec.runtime_us:
            e["runtime_s"] = _number(spec.runtime_us / US_PER_S)
        if spec.think_us:
            e["think_us"] = spec.think_us
            if spec.think_every > 1:
                e["think_every"] = spec.think_every
        if spec.rate_iops:
            e["rate_iops"] = _number(spec.rate_iops)
        if c.start[0] == "after":
            e["after"] = c.start[1]
            start_us = spec.startdelay_us
        else:
            start_us = int(c.start[1]) + spec.startdelay_us
        if start_us:
            e["start_us"] = start_us
        _prio_and_group(c, e, cgroups)
        entries.append(e)
        origins.append(_origin(c))
    return entries, origins


def _origin(c: Clone) -> str:
    spec = c.spec
    clone = f", clone {c.k} of {spec.numjobs}" if spec.numjobs > 1 else ""
    return f"[{spec.name}] (line {spec.line}{clone}): {c.path}"


# Buffered jobs on the host: the command for (op, pattern, time_based).
HOST_COMMANDS = {
    ("read", "sequential", True): "seq-read", ("read", "random", True): "rand-read",
    ("write", "sequential", True): "seq-write", ("write", "random", True): "rand-write",
    ("read", "sequential", False): "cat", ("write", "sequential", False): "dd",
}


def _tasks(clones: List[Clone], problems: List[Problem], notes: List[str]) -> Tuple[dict, List[dict], List[str]]:
    files: Dict[str, int] = {}
    tasks, origins = [], []
    for c in clones:
        spec = c.spec

        def fail(option: str, why: str) -> None:
            s = spec.setting(option)
            problems.append(Problem(s.line if s else spec.line, spec.name, s.shown() if s else option, why))

        before = len(problems)
        if c.raw_device:
            fail("filename", "buffered I/O on a raw device (the block device's page cache): the host's tasks read and "
                             "write files; use direct=1 for the device")
        if spec.op == "mixed":
            fail("rw", "a buffered read/write mix: the host's fio-like commands read or write (direct=1 models it)")
        if c.offset:
            fail("offset" if spec.setting("offset") else "offset_increment",
                 "an offset with buffered I/O: the host's commands work on whole files (direct=1 models it)")
        if spec.async_engine and spec.iodepth > 1 and spec.engine != "libaio":
            fail("ioengine", f"{spec.engine} runs buffered I/O asynchronously in the kernel: the host's tasks make one "
                             f"call at a time (direct=1 models iodepth)")
        if spec.think_us:
            fail("thinktime", "a think time with buffered I/O: the host's fio-like commands do not think (direct=1 models it)")
        if spec.cgroup:
            fail("cgroup", "cgroups with buffered I/O: the host's tasks have no cgroup (direct=1 models it)")
        if spec.number_ios:
            fail("number_ios", "an I/O count with buffered I/O: the host's commands run to the end of the file or the run")
        if spec.io_size and spec.io_size != c.region:
            fail("io_size", "an amount of I/O other than the file with buffered I/O: the host's commands read or write "
                            "whole files")
        key = (spec.op, spec.pattern, spec.time_based)
        command = HOST_COMMANDS.get(key)
        if command is None and spec.op != "mixed":
            fail("rw", f"a buffered {spec.pattern} {spec.op} job that ends after its size: the host's rand-read and "
                       f"rand-write run until the run ends; give time_based=1 and runtime, or direct=1")
        if spec.rate_iops and (spec.op != "write" or not spec.time_based):
            fail("rate" if spec.setting("rate") else "rate_iops",
                 "a rate cap on a buffered job other than a time-based writer: not modelled on the host (direct=1 models it)")
        if spec.direct and command in ("seq-write", "rand-write"):
            fail("direct", f"a direct writer mixed with buffered jobs: the host's {command} is buffered")
        if spec.direct and command == "seq-read":
            fail("direct", "a time-based direct sequential reader mixed with buffered jobs: the host's seq-read is buffered")
        if spec.o_sync and spec.op == "write" and command != "dd":
            fail("sync", "O_SYNC writes: only the host's dd (a buffered sequential writer that ends) takes them")
        if spec.end_fsync and spec.op == "write" and command != "dd":
            fail("end_fsync", "an fsync at the end: only the host's dd (a sequential writer that ends) takes it")
        if spec.loops > 1 and command == "dd":
            fail("loops", "a writer that loops over its file: give time_based=1 and runtime")
        if len(problems) > before or command is None:
            continue
        if spec.async_engine and spec.iodepth > 1:
            notes.append(f"[{spec.name}] ioengine=libaio, iodepth={spec.iodepth}, buffered: one I/O at a time (fio's HOWTO: "
                         f"buffered I/O is not asynchronous on Linux)")
        files[c.path] = max(files.get(c.path, 0), c.region)
        t = {"name": c.name, "command": command, "path": c.path, "bs_kib": _number(spec.bs / KIB)}
        if command in ("seq-read", "rand-read", "seq-write", "rand-write", "dd"):
            t["size_mib"] = _number(c.region / MIB)
        if command == "cat":
            t["loops"] = spec.loops
        if spec.direct:
            t["flag"] = "direct"
        elif spec.o_sync and command == "dd":  # O_SYNC changes writes only
            t["flag"] = "sync"
        if command == "dd" and spec.end_fsync:
            t["fsync"] = True
        if spec.rate_iops:
            t["rate_kib_s"] = _number(spec.rate_iops * spec.bs / KIB)
        if c.start[0] == "after":
            t["after"] = c.start[1]
            start_ms = spec.startdelay_us / 1000
        else:
            start_ms = (int(c.start[1]) + spec.startdelay_us) / 1000
        if start_ms:
            t["start_ms"] = _number(start_ms)
        if spec.prio_class:
            t["prio_class"] = spec.prio_class
            t["prio_level"] = spec.prio_level
        tasks.append(t)
        origins.append(_origin(c))
    host = {"file": [{"path": p, "size_mib": _number(n / MIB)} for p, n in files.items()]}
    return host, tasks, origins


def _notes_of_options(path: str, no_effect: dict) -> List[str]:
    out = []
    by_why: Dict[str, List[str]] = {}
    for (written, why), lines in sorted(no_effect.items(), key=lambda kv: min(kv[1])):
        where = ", ".join(str(n) for n in sorted(lines))
        by_why.setdefault(why, []).append(f"{written} (line {where})")
    for why, options in by_why.items():
        out.append(f"accepted, no effect on the I/O: {', '.join(options)}: {why}")
    return out


def convert(job_file: JobFile, capacity_bytes: int, device: str = DEFAULT_DEVICE,
            schedulers: Optional[List[str]] = None) -> Conversion:
    """The scenario for `job_file` on a disk of `capacity_bytes` (preset `device`); raises
    FioJobError naming every option it cannot model."""
    path = job_file.path
    # Whole MiB: a scenario's regions are in MiB up to the disk's whole MiB (its last partial
    # MiB, under 1 MiB of tens of GB, is not used).
    capacity_bytes = capacity_bytes // MIB * MIB
    problems: List[Problem] = []
    no_effect: dict = {}
    specs = []
    for job in job_file.jobs:
        classify_settings(job, problems, no_effect)
        specs.append(read_job(job, problems))
    if problems:
        _raise(path, problems)
    notes: List[str] = []
    for s in specs:
        if s.setting("name") and s.name != s.settings["name"].section:
            notes.append(f"[{s.settings['name'].section}] name={s.name} (line {s.settings['name'].line}): names the job's processes")
        depth = s.setting("iodepth")
        if depth is not None and not s.async_engine and (depth.value or "1").strip() != "1":
            notes.append(f"[{s.name}] iodepth={depth.value} with ioengine={s.engine}: one I/O at a time "
                         f"(fio's HOWTO: iodepth does not affect synchronous engines)")
        for opt in ("rwmixread", "rwmixwrite"):
            if s.setting(opt) and s.op != "mixed":
                notes.append(f"[{s.name}] {opt} (line {s.setting(opt).line}): no effect on a job that only "
                             f"{ {'read': 'reads', 'write': 'writes'}.get(s.op, 'trims')}")
        if s.setting("thinktime_blocks") and not s.think_us:
            notes.append(f"[{s.name}] thinktime_blocks without thinktime: no effect")
    notes += _notes_of_options(path, no_effect)
    clones = _clones(specs, capacity_bytes, problems)
    _groups(clones, problems)
    sched = _scheduler_names(specs, schedulers, notes, problems)
    cgroups = _cgroups(specs, problems)
    buffered = [c for c in clones if not c.spec.direct]
    scenario: dict = {
        "name": posixpath.splitext(posixpath.basename(path))[0] or "fio",
        "description": f"fio job file {path}, as `iosched import-fio` reads it (docs/fio.md)",
        "device": {"preset": device},
    }
    if problems:
        _raise(path, problems)
    if not buffered:
        placed = _layout(clones, capacity_bytes, problems)
        entries, origins = _processes(clones, placed, cgroups, problems)
        scenario["process"] = entries
        if any(not c.raw_device for c in clones):
            notes.append("files are laid out back to back from the start of the disk, 1 MiB aligned, in the order "
                         "the jobs name them (an assumption: a fresh file system); edit file_offset_mib to move them")
    else:
        host, entries, origins = _tasks(clones, problems, notes)
        runtimes = {c.spec.runtime_us for c in clones}
        if len(runtimes) > 1:
            c = next(c for c in clones if c.spec.runtime_us != clones[0].spec.runtime_us)
            problems.append(Problem(c.spec.setting("runtime").line if c.spec.setting("runtime") else c.spec.line,
                                    c.spec.name, "runtime", "buffered jobs with different runtimes: the host's tasks "
                                                            "share one run duration (run.duration_s)"))
        late = next((c for c in clones if c.start[0] == "at" and c.start[1]), None)
        if late is not None:
            s = late.spec.setting("stonewall") or late.spec.setting("wait_for")
            problems.append(Problem(s.line if s else late.spec.line, late.spec.name, s.shown() if s else "stonewall",
                                    "buffered jobs after time-based ones: the host's tasks cannot stop at a time of "
                                    "their own (direct=1 models it)"))
        scenario["host"] = host
        scenario["task"] = entries
        notes.append(f"direct=0 (fio's default: buffered I/O): the jobs run as tasks on a simulated Linux host "
                     f"(page cache of {1024} MiB: [host] memory_mib; ext2 layout of the files); results count the "
                     f"disk's requests, not fio's read()/write() calls")
    if problems:
        _raise(path, problems)
    ends = [c.end_us for c in clones]
    if all(e is not None for e in ends):
        duration_s = max(ends) / US_PER_S
    else:
        duration_s = max([CAP_S] + [e / US_PER_S for e in ends if e is not None])
        notes.append(f"run.duration_s = {duration_s:g}: a cap for the jobs that end by their size (they stop issuing "
                     f"at it); the run ends when the last job does")
    scenario["run"] = {"duration_s": _number(duration_s)}
    if sched:
        scenario["scheduler"] = [{"name": n} for n in sched]
    if any(c.spec.pattern == "random" for c in clones):
        notes.append("random offsets are uniform with replacement (fio's random map visits each block once per loop; "
                     "fio's norandommap is what iosched does)")
    return Conversion(path, scenario, notes, origins)


def to_toml(conv: Conversion) -> str:
    """The scenario as TOML, with the notes and each entry's job in comments."""
    import tomli_w

    def comment(text: str, indent: str = "") -> str:
        return "\n".join(f"# {indent}{line}" for line in textwrap.wrap(text, 96 - len(indent)))

    out = [f"# Made by `iosched import-fio` from {conv.source} (docs/fio.md). Edit freely: it is an",
           "# ordinary scenario (docs/scenarios.md).", "#", "# Notes:"]
    for n in conv.notes:
        wrapped = textwrap.wrap(n, 92)
        out.append("# - " + wrapped[0])
        out += ["#   " + w for w in wrapped[1:]]
    out.append("")
    s = conv.scenario

    def table(header: str, entries: dict) -> str:
        # Written by hand: tomli_w writes a short array of tables inline, which would then
        # belong to the table above it.
        return f"{header}\n{tomli_w.dumps(entries)}"

    out.append(tomli_w.dumps({k: s[k] for k in ("name", "description")}))
    out.append(table("[device]", s["device"]))
    out.append(table("[run]", s["run"]))
    if "host" in s:
        out.append(table("[host]", {k: v for k, v in s["host"].items() if k != "file"}).rstrip("\n"))
        out += [table("[[host.file]]", f) for f in s["host"].get("file", [])]
    key = "task" if "host" in s else "process"
    for entry, origin in zip(s[key], conv.origins):
        out.append(comment(origin))
        out.append(table(f"[[{key}]]", entry))
    for sched in s.get("scheduler") or []:
        out.append(table("[[scheduler]]", sched))
    return "\n".join(out)
