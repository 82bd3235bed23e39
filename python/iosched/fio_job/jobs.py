"""One fio job read into what it asks of the disk: direction, pattern, sizes, depth, pacing,
priority, group; each option's value checked and every problem recorded against its line.

`read_job` gives a `JobSpec` (the job as iosched models it); `convert.py` lays the clones out
and writes the scenario.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, List, Optional, Tuple

from .options import classify
from .parse import Job, Setting
from .units import UnitError, parse_bool, parse_int, parse_size, parse_time_us, split_directions

SECTOR = 512
US_PER_S = 1_000_000

SYNC_ENGINES = ("sync", "psync", "vsync", "pvsync", "pvsync2")
ASYNC_ENGINES = ("libaio", "io_uring", "posixaio")
DEFAULT_ENGINE = "psync"  # fio's default on Linux (HOWTO: ioengine)
DEFAULT_BS = 4096

# rw value -> (op, pattern); op "mixed" for the read/write mixes.
RW = {
    "read": ("read", "sequential"), "write": ("write", "sequential"),
    "randread": ("read", "random"), "randwrite": ("write", "random"),
    "rw": ("mixed", "sequential"), "readwrite": ("mixed", "sequential"), "randrw": ("mixed", "random"),
    # fio's trims (block devices only: BLKDISCARD, a REQ_OP_DISCARD in the kernel) are discards.
    "trim": ("discard", "sequential"), "randtrim": ("discard", "random"),
}
# Trim then write each block: two operations per block, which one process here does not issue.
TRIMS = ("trimwrite", "randtrimwrite")

# fio's prioclass numbers (ionice -c): 1 realtime, 2 best-effort, 3 idle.
PRIO_CLASSES = {1: "rt", 2: "be", 3: "idle"}


@dataclass
class Problem:
    line: int
    job: str
    option: str
    why: str


@dataclass
class JobSpec:
    """A fio job as iosched models it (sizes in bytes, times in microseconds)."""

    name: str
    line: int
    op: str                       # read | write | mixed
    pattern: str                  # sequential | random
    read_fraction: Optional[float]
    bs: int
    engine: str
    async_engine: bool
    iodepth: int                  # what the process keeps in flight (1 for sync engines)
    direct: bool
    numjobs: int
    filename: Optional[str]       # as written (None: fio's default name per clone)
    directory: Optional[str]
    size: Optional[Tuple[int, bool]]       # (bytes, False) or (percent, True)
    io_size: Optional[int]
    filesize: Optional[int]
    offset: Tuple[int, bool]
    offset_increment: Tuple[int, bool]
    offset_align: int
    loops: int
    number_ios: Optional[int]
    runtime_us: Optional[int]     # None: no limit
    time_based: bool
    startdelay_us: int
    think_us: int
    think_every: int
    rate_iops: Optional[float]
    prio_class: Optional[str]
    prio_level: Optional[int]
    cgroup: Optional[str]
    cgroup_weight: Optional[int]
    stonewall: bool
    wait_for: Optional[str]
    ioscheduler: Optional[str]
    o_sync: bool
    end_fsync: bool
    settings: dict                # the job's settings (for messages)

    def setting(self, option: str) -> Optional[Setting]:
        return self.settings.get(option)


class _Reader:
    """Typed access to a job's settings; a bad value is a Problem at its line."""

    def __init__(self, job: Job, problems: List[Problem]):
        self.job = job
        self.problems = problems
        self.kb_base = 1024

    def has(self, option: str) -> bool:
        return option in self.job.settings

    def setting(self, option: str) -> Optional[Setting]:
        return self.job.settings.get(option)

    def fail(self, option: str, why: str) -> None:
        s = self.job.settings.get(option)
        self.problems.append(Problem(s.line if s else self.job.line, self.job.name, s.shown() if s else option, why))

    def _read(self, option: str, default, convert: Callable):
        s = self.job.settings.get(option)
        if s is None:
            return default
        try:
            return convert(s.value)
        except UnitError as e:
            self.fail(option, str(e))
            return default

    def value(self, option: str, default: Optional[str] = None) -> Optional[str]:
        return self._read(option, default, lambda v: (v if v is not None else "").strip())

    def flag(self, option: str, default: bool = False) -> bool:
        return self._read(option, default, parse_bool)

    def integer(self, option: str, default: Optional[int], lo: int, hi: int) -> Optional[int]:
        return self._read(option, default, lambda v: parse_int(v if v is not None else "", lo, hi))

    def size(self, option: str, default=None, percent_ok: bool = False):
        return self._read(option, default, lambda v: parse_size(v if v is not None else "", self.kb_base, percent_ok))

    def time_us(self, option: str, default: Optional[int], unit_us: int) -> Optional[int]:
        def convert(v):
            v = v if v is not None else ""
            if "-" in v.strip()[1:] or ":" in v:
                raise UnitError(f"`{v}`: a range (a random value per job) is not read: give one value")
            return parse_time_us(v, unit_us)
        return self._read(option, default, convert)

    def directions(self, option: str, convert: Callable, default):
        """A per-direction option (bs, rate, ...): [read, write, trim] values."""
        s = self.job.settings.get(option)
        if s is None:
            return [default, default, default]
        try:
            parts = split_directions(s.value or "")
            return [default if p is None else convert(p) for p in parts[:3]]
        except UnitError as e:
            self.fail(option, str(e))
            return [default, default, default]


def classify_settings(job: Job, problems: List[Problem], notes: dict) -> None:
    """Refusals of options iosched does not model; no-effect ones into `notes` (why -> lines)."""
    for s in job.settings.values():
        kind, why = classify(s.option, s.value)
        if kind == "refused":
            problems.append(Problem(s.line, job.name, s.shown(), why))
        elif kind == "no-effect":
            notes.setdefault((s.written, why), set()).add(s.line)


def read_job(job: Job, problems: List[Problem]) -> JobSpec:
    """The job's options read and checked (problems appended; defaults kept where a value is bad)."""
    r = _Reader(job, problems)
    kb = r.integer("kb_base", 1024, 1000, 1024)
    if kb not in (1000, 1024):
        r.fail("kb_base", "fio reads 1000 or 1024")
        kb = 1024
    r.kb_base = kb

    rw_value = (r.value("rw", "read") or "read").lower()
    op, pattern = "read", "sequential"
    if ":" in rw_value:
        r.fail("rw", "an offset modifier (`:N`: holes between sequential I/Os, or N I/Os per random offset) is not modelled")
    elif rw_value in TRIMS:
        r.fail("rw", "a trim then a write of each block: an iosched process issues one operation (give a trim "
                     "job and a write job)")
    elif rw_value not in RW:
        r.fail("rw", f"unknown I/O pattern (fio's: {', '.join(list(RW) + list(TRIMS))})")
    else:
        op, pattern = RW[rw_value]

    # rwmixread and rwmixwrite: the later line wins (fio: "the latter of the two overrides").
    read_fraction = None
    mix_settings = sorted((s for s in (r.setting("rwmixread"), r.setting("rwmixwrite")) if s), key=lambda s: s.line)
    mix = 50
    for s in mix_settings:
        pct = r.integer(s.option, None, 0, 100)
        if pct is not None:
            mix = pct if s.option == "rwmixread" else 100 - pct
    if op == "mixed":
        read_fraction = mix / 100

    engine = (r.value("ioengine", DEFAULT_ENGINE) or DEFAULT_ENGINE).lower()
    async_engine = engine in ASYNC_ENGINES
    if engine not in SYNC_ENGINES and not async_engine:
        r.fail("ioengine", f"iosched models the engines that read and write a file or device: {', '.join(SYNC_ENGINES)} "
                           f"(one I/O at a time) and {', '.join(ASYNC_ENGINES)} (iodepth in flight)")
    iodepth = r.integer("iodepth", 1, 1, 4096)

    direct = False  # fio's default: buffered
    d = r.setting("direct")
    if d is not None:
        try:
            direct = parse_bool(d.value)
            if d.written.lower() == "buffered":
                direct = not direct
        except UnitError as e:
            r.fail("direct", str(e))

    if op == "discard":
        # fio trims a block device with the BLKDISCARD ioctl: no page cache whatever `direct` says.
        direct = True

    def block_size(v: str) -> int:
        n, _ = parse_size(v, kb)
        if n <= 0 or n % SECTOR:
            raise UnitError(f"`{v}` ({n} bytes) must be a positive multiple of the 512-byte sector")
        return n

    bs_r, bs_w, bs_t = r.directions("bs", block_size, DEFAULT_BS)
    if op == "read":
        bs = bs_r
    elif op == "write":
        bs = bs_w
    elif op == "discard":
        bs = bs_t
    else:
        bs = bs_r
        if bs_r != bs_w:
            r.fail("bs", f"reads of {bs_r} and writes of {bs_w} bytes in one job: an iosched process has one request size")
    if r.has("ba"):
        ba_r, ba_w, ba_t = r.directions("ba", block_size, None)
        for ba in ((ba_r,) if op == "read" else (ba_w,) if op == "write" else (ba_t,) if op == "discard" else (ba_r, ba_w)):
            if pattern == "random" and ba is not None and ba != bs:
                r.fail("ba", f"random offsets aligned to {ba} bytes, not the block size ({bs}): iosched aligns them to the block size")

    numjobs = r.integer("numjobs", 1, 1, 4096)
    filename = r.value("filename")
    directory = r.value("directory")
    if filename is not None:
        if not filename:
            r.fail("filename", "empty")
            filename = None
        elif ":" in filename.replace("\\:", ""):
            r.fail("filename", "several files in one job (`:`-separated): a job here has one file")
        elif filename == "-":
            r.fail("filename", "stdin/stdout: not a disk")
    if directory is not None and ":" in directory.replace("\\:", ""):
        r.fail("directory", "several directories (`:`-separated): give one")
    nrfiles = r.integer("nrfiles", 1, 1, 1 << 20)
    if nrfiles and nrfiles > 1 and filename is None:
        r.fail("nrfiles", "several files per job: a job here has one file (give a job per file)")

    size = r.size("size", None, percent_ok=True)
    io_size = r.size("io_size", None)
    io_size = io_size[0] if io_size else None
    filesize = None
    if r.has("filesize"):
        fs_value = r.value("filesize") or ""
        if "-" in fs_value or ":" in fs_value:
            r.fail("filesize", "a range of file sizes: give one size")
        else:
            fsz = r.size("filesize", None)
            filesize = fsz[0] if fsz else None
    offset = r.size("offset", (0, False), percent_ok=True)
    offset_increment = r.size("offset_increment", (0, False), percent_ok=True)
    align = r.size("offset_align", (0, False))
    offset_align = align[0] if align[0] else bs
    loops = r.integer("loops", 1, 1, 1_000_000)
    number_ios = r.integer("number_ios", None, 1, 10**12)
    runtime_us = r.time_us("runtime", 0, US_PER_S) or None
    time_based = r.flag("time_based")
    if time_based and runtime_us is None:
        r.fail("time_based", "time_based without runtime: fio would run until stopped; give runtime")
    startdelay_us = r.time_us("startdelay", 0, US_PER_S)

    think_us = r.time_us("thinktime", 0, 1)
    spin_us = r.time_us("thinktime_spin", 0, 1)
    # fio spins thinktime_spin, then sleeps the rest of thinktime: the stall is the longer of the two.
    think_us = max(think_us, spin_us) if think_us else 0
    think_every = r.integer("thinktime_blocks", 1, 1, 1_000_000_000)
    blocks_type = (r.value("thinktime_blocks_type", "complete") or "complete").lower()
    if blocks_type not in ("complete", "issue"):
        r.fail("thinktime_blocks_type", "fio reads complete or issue")

    if think_us and async_engine and (iodepth or 1) > 1:
        r.fail("thinktime", f"a think time with {engine} at iodepth={iodepth}: fio waits for every I/O in flight "
                            f"before each think (backend.c, handle_thinktime), iosched's processes think per slot; "
                            f"use iodepth=1 or a synchronous engine")
    rate_process = (r.value("rate_process", "linear") or "linear").lower()
    if rate_process != "linear":
        r.fail("rate_process", "a Poisson arrival of rated I/O: iosched paces rated I/O linearly (fio's default)")

    def rate_value(v: str) -> int:
        return parse_size(v, kb)[0]

    def iops_value(v: str) -> int:
        return parse_int(v, 0, 10**9)

    rate_bytes = r.directions("rate", rate_value, 0)
    rate_ops = r.directions("rate_iops", iops_value, 0)
    rate_iops = None
    used = (0,) if op == "read" else (1,) if op == "write" else (2,) if op == "discard" else (0, 1)
    if op == "mixed" and any(rate_bytes[d] or rate_ops[d] for d in used):
        which = "rate" if any(rate_bytes[d] for d in used) else "rate_iops"
        r.fail(which, "a rate on a read/write mix: fio caps each direction on its own; iosched caps a process as a whole")
    elif op != "mixed":
        d = used[0]
        if rate_ops[d]:
            rate_iops = float(rate_ops[d])
        if rate_bytes[d]:
            from_bytes = rate_bytes[d] / bs
            rate_iops = from_bytes if rate_iops is None else min(rate_iops, from_bytes)

    prio_level = r.integer("prio", None, 0, 7)
    prio_class_number = r.integer("prioclass", None, 0, 3)
    prio_class = None
    if prio_level is not None or prio_class_number is not None:
        # fio's ioprio_value(): no class (0) means best-effort; a class without prio has level 0.
        prio_class = PRIO_CLASSES.get(prio_class_number or 2, "be")
        prio_level = prio_level if prio_level is not None else 0

    cgroup = r.value("cgroup")
    cgroup_weight = r.integer("cgroup_weight", None, 100, 1000)
    if cgroup_weight is not None and not cgroup:
        r.fail("cgroup_weight", "a weight without cgroup=NAME: fio sets the weight of the job's cgroup")

    stonewall = r.flag("stonewall")
    wait_for = r.value("wait_for")
    ioscheduler = r.value("ioscheduler")

    sync_value = (r.value("sync", "none") or "none").lower()
    o_sync = False
    if sync_value in ("1", "sync", "dsync"):
        o_sync = True
    elif sync_value not in ("0", "none"):
        r.fail("sync", "fio reads none, 0, sync, 1 or dsync")
    end_fsync = r.flag("end_fsync") or r.flag("fsync_on_close") or r.flag("end_syncfs")

    iodepth = iodepth or 1
    name_value = r.value("name")
    return JobSpec(
        name=name_value or job.name, line=job.line, op=op, pattern=pattern, read_fraction=read_fraction, bs=bs,
        engine=engine, async_engine=async_engine, iodepth=iodepth if async_engine else 1, direct=direct,
        numjobs=numjobs or 1, filename=filename, directory=directory, size=size, io_size=io_size,
        filesize=filesize, offset=offset, offset_increment=offset_increment, offset_align=offset_align,
        loops=loops or 1, number_ios=number_ios, runtime_us=runtime_us, time_based=time_based,
        startdelay_us=startdelay_us or 0, think_us=think_us or 0, think_every=think_every or 1,
        rate_iops=rate_iops, prio_class=prio_class, prio_level=prio_level, cgroup=cgroup,
        cgroup_weight=cgroup_weight, stonewall=stonewall, wait_for=wait_for, ioscheduler=ioscheduler,
        o_sync=o_sync, end_fsync=end_fsync, settings=job.settings,
    )
