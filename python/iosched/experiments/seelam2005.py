"""`iosched reproduce seelam2005`: Seelam, Romero, Teller & Buros 2005, "Enhancements to Linux I/O
scheduling" (Ottawa Linux Symposium): the microbenchmarks and FFSB profiles of section 5 (Tables
1-4, Figure 3) on the simulated host, and section 6 (Figure 5, the adaptive scheduler) on
simulated RAID-0 arrays (seelam2005_selection.py).

- Table 1 (section 5.4): `while true; do dd if=/dev/zero of=file bs=1M count=2048; done` beside
  `time cat 200mb-file`: the reader's time, the reader's and the writer's disk throughput and
  their sum while the reader runs.
- Table 2 (section 5.5): `while true; do cat big-file; done` (a file larger than memory) beside
  `time find . -type f -exec cat {} \\;` over a tree the size of the Linux source tree:
  program B's time and the aggregate disk throughput while it runs.
- Table 3 and Figure 3 (section 5.6): one, then two concurrent `find -exec cat` over disjoint
  source trees: aggregate throughput.
- Table 4 (sections 5.1, 5.7-5.10): FFSB's web, mail, file server and metadata profiles under
  deadline, LAS, CAS, CFQ and noop.

The paper's claims are rows of catalogues/seelam2005/claims.toml; `tables()` gives the ledger
the run's tables (written beside the report as tables.csv) and `reproduce()` opens the report
with the scoreboard `ledger.write` returns. The report below it shows the data; it judges
nothing itself. A few controlled runs (one knob changed, named in each table's rows) measure the
mechanisms the claims' notes quote.

The schedulers are SCHEDULERS (deadline, and the anticipatory schedulers of the paper's kernel,
Linux 2.6.9: `las-2.6.9`, and the cooperative anticipatory scheduler built on it, `cas-2.6.9`);
one the native library does not register is skipped with a line in the report. STAND_INS are
extra rows, labelled as such: the same schedulers on Linux 2.6.32's as-iosched.c (`las`, `cas`),
whose close test and exit rules changed after the paper, and Iyer & Druschel's anticipatory
framework.

Every point is a generated scenario (kept in OUT/scenarios/); the runs go through the pool.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

from .. import ledger
from ..ledger import Tables
from ..ledger.measures import ratio as _ratio
from ..ledger.rule import AtLeast, AtMost
from ..pool import Pool
from . import seelam2005_selection as selection
from .block import Plan
from .timeline import disk_mb as _disk_mb
from .sweep import markdown_table

NAME = "seelam2005"

# (label in the report, the scenario's [[scheduler]] table). The paper's three schedulers.
SCHEDULERS: List[Tuple[str, dict]] = [
    ("deadline", {"name": "deadline"}),
    ("LAS", {"name": "las-2.6.9"}),
    ("CAS", {"name": "cas-2.6.9"}),
]
# Extra rows, not in the paper: Iyer & Druschel's anticipatory framework (the idea LAS
# implements) around C-LOOK. It is not LAS: its heuristic is the paper's cost-benefit rule, not
# Linux's, and its policy is C-LOOK, not LAS's one-way elevator with read/write batches.
STAND_INS: List[Tuple[str, dict]] = [
    ("LAS of Linux 2.6.32 (las; not the paper's kernel)", {"name": "las"}),
    ("CAS on Linux 2.6.32 (cas; not the paper's kernel)", {"name": "cas"}),
    ("anticipatory (Iyer & Druschel over C-LOOK; a stand-in, not LAS)", {"name": "anticipatory", "policy": "clook"}),
]

# The host (section 5.2: a 2.28 GHz Pentium 4 Xeon with 1 GB of memory, one processor used,
# Linux 2.6.9; an external 7,200 rpm Maxtor 20 GB IDE disk with ext3, remounted before each run).
# The nearest published drive to the paper's (docs/research/drive-specs.md section 3d), its
# file system on the whole disk.
DEVICE = "maxtor-6e020l0"
# The sensitivity rows' drive (the catalogue's drive before the 6E020L0): the 82 GB DiamondMax 10
# of Valente's Table 1, with a 20 GiB file system on its outer zones.
OLD_DEVICE = "maxtor-6l080l0"
OLD_FS_MIB = 20 * 1024
OLD_DRIVE = {"device": {"preset": OLD_DEVICE}, "fs_mib": OLD_FS_MIB}


def _on_old_drive(scn: dict) -> dict:
    """The same scenario on the sensitivity rows' drive (one change: the drive and its partition)."""
    scn["device"].update(OLD_DRIVE["device"])
    scn["host"]["fs_mib"] = OLD_DRIVE["fs_mib"]
    return scn


# The host's CPU costs, from lmbench on the published machine nearest the paper's (a 2.28 GHz
# Pentium 4 Xeon with Linux 2.6.9): a 2.4 GHz Xeon with Linux 2.6.10, lmbench 3.0-a3 (I. Pratt,
# "2.6.11 vs 2.6.10 slowdown on i686", LKML, 17 Mar 2005, Message-Id
# <E1DBtvc-0002c4-00@mta1.cl.cam.ac.uk>): null call 0.49 us, fork+execve 857 us, File reread
# (bw_file_rd: read() of a file in the page cache into a reused buffer, as cat does) 1551.7 MB/s
# (lmbench's MB: 10^6 B). docs/host.md "The CPU a system call costs".
SYSCALL_US = 0.49
COPY_MB_S = 1551.7
EXEC_US = 857


def _host(memory_mib: int, tree: list, files: list, sample_ms: Optional[int]) -> dict:
    h = {
        "memory_mib": memory_mib,
        "fs": "ext3",
        "cpus": 1,
        # Linux 2.6.9's host (docs/host.md): its readahead (current and ahead windows) and its
        # balance_dirty_pages; its vm defaults: dirty_background_ratio 10, dirty_ratio 40
        # (lowered in 2.6.22), read_ahead_kb 128.
        "kernel_release": "2.6.9",
        "dirty_background_ratio": 10,
        "dirty_ratio": 40,
        "read_ahead_kb": 128,
        "syscall_us": SYSCALL_US,
        "copy_mb_s": COPY_MB_S,
        "tree": tree,
        "file": files,
    }
    if sample_ms:
        h["sample_ms"] = sample_ms
    return h


def _scenario(sched: dict, host: dict, tasks: list, duration_s: float) -> dict:
    return {
        # PATA, no command queueing: the drive holds one command (the preset's depth).
        "device": {"preset": DEVICE},
        # Linux 2.6's block layer: plugging, merging, 128 requests per direction.
        "block": {"tags": "legacy"},
        "host": host,
        "task": tasks,
        "scheduler": [sched],
        "run": {"duration_s": duration_s, "seed": 1},
    }


# The Linux source tree (2.6.9: about 17,000 files in about 1,100 directories, about 220 MB),
# as in experiments/host.py: 3 levels of 10 directories (1,111), 16 files in each (17,776 files),
# lognormal sizes of mean 13 KiB (about 225 MiB). --quick: 2 levels (111 directories, 1,776 files).
def _tree(path: str, quick: bool) -> dict:
    return {"path": path, "depth": 2 if quick else 3, "dirs_per_dir": 10, "files_per_dir": 16, "file_mean_kib": 13.0,
            "file_size_sigma": 1.2}


# -- which schedulers run --------------------------------------------------------------------

def registered_names() -> set:
    """Every name and alias the native library registers."""
    from ..api import list_schedulers

    names = set()
    for s in list_schedulers():
        names.add(s["name"])
        names.update(s.get("aliases") or [])
    return names


def split_schedulers(known: set,
                     wanted: Optional[List[Tuple[str, dict]]] = None) -> Tuple[List[Tuple[str, dict]], List[str]]:
    """(the rows to run: `wanted` (default SCHEDULERS then STAND_INS) that are registered; a line
    per skipped one)."""
    rows, skipped = [], []
    for label, sched in (SCHEDULERS + STAND_INS if wanted is None else wanted):
        if sched["name"] in known:
            rows.append((label, sched))
        else:
            skipped.append(f"- {label}: not run: scheduler `{sched['name']}` is not registered "
                           "(`iosched list schedulers` does not know it).")
    return rows, skipped


def _run_duration(p: Plan, key: str) -> float:
    """The run's configured `run.duration_s` (from the scenario as written)."""
    try:
        import tomllib
    except ImportError:  # pragma: no cover - Python < 3.11
        import tomli as tomllib
    return float(tomllib.loads(p.scenarios[key])["run"]["duration_s"])


def _key(label: str) -> str:
    """A label as a scenario key: `LAS of Linux 2.6.32 (...)` -> `las-of-linux-2-6-32`."""
    return "".join(c if c.isalnum() else "-" for c in label.split(" (")[0].lower()).strip("-")


def row_name(label: str) -> str:
    """A label as a row of the ledger's tables: the paper's names as they are (`deadline`, `LAS`,
    `CAS`), a stand-in by its short name (`LAS of Linux 2.6.32`)."""
    return label.split(" (")[0]


# -- helpers ----------------------------------------------------------------------------------

def _window(s: dict, task: dict) -> Tuple[float, float, bool]:
    """The task's lifetime (start, end) in the run; finished = False when the run's end stopped it."""
    start = task["start_s"] or 0.0
    if task["elapsed_s"] is not None:
        return start, start + task["elapsed_s"], True
    return start, s["elapsed_s"], False


def _elapsed(task: dict, duration_s: float):
    """A task's execution time, or a lower bound (`AtLeast`) when the run's end stopped it."""
    if task["elapsed_s"] is None:
        return AtLeast(duration_s - (task["start_s"] or 0.0))
    return task["elapsed_s"]


def show(v, spec: str = ".1f") -> str:
    """A table value as the report shows it: `> N` for a bound (the run's end stopped the program)."""
    if isinstance(v, AtLeast):
        return f"> {v.value:.0f}"
    if isinstance(v, AtMost):
        return f"< {v.value:{spec}}"
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return format(v, spec)


def _tasks(s: dict) -> Dict[str, dict]:
    return {t["name"]: t for t in s["host"]["tasks"]}


def _counters(s: dict, names) -> dict:
    c = s.get("scheduler_counters") or {}
    return {n: c[n] for n in names if n in c}


def paper_values(ids: List[str]) -> Dict[str, float]:
    """The paper's values of the claims `ids` (cells), read from the claims file: the one place
    the paper's numbers are kept."""
    cf = ledger.load(ledger.claims_path(NAME))
    by_id = {c.id: c for c in cf.claims}
    return {i: float(by_id[i].paper) for i in ids}


# -- Table 1: streaming writer against a streaming reader -------------------------------------

def _t1_scenario(sched: dict, quick: bool) -> Tuple[dict, float]:
    memory = 256 if quick else 1024
    reader_mib = 50 if quick else 200
    duration = 60.0 if quick else 300.0
    # The paper's writer is `while true; do dd ... count=2048 bs=1M; done`: a write stream that
    # never stops. Here one dd large enough to outlast the run (each pass of the loop truncates and
    # rewrites the same file; the loop's restarts are not modelled).
    dd_mib = 4096 if quick else 16384
    host = _host(memory, [], [{"path": "/200mb-file", "size_mib": reader_mib}, {"path": "/file", "size_mib": 0}], 250)
    tasks = [
        {"name": "writer", "command": "dd", "path": "/file", "size_mib": dd_mib, "bs_kib": 1024},
        {"name": "reader", "command": "cat", "path": "/200mb-file"},
    ]
    return _scenario(sched, host, tasks, duration), duration


# Controlled runs (one knob each): deadline with today's writeback defaults instead of 2.6.9's;
# deadline, LAS and CAS on the sensitivity rows' drive (OLD_DRIVE).
TODAY_WRITEBACK = {"dirty_throttle": "io-less", "dirty_ratio": 20}
T1_CONTROLS = [
    # (row, base label, host fields changed)
    ("deadline-today-writeback", "deadline", TODAY_WRITEBACK),
    (f"deadline-{OLD_DEVICE}", "deadline", OLD_DRIVE),
    (f"LAS-{OLD_DEVICE}", "LAS", OLD_DRIVE),
    (f"CAS-{OLD_DEVICE}", "CAS", OLD_DRIVE),
]


def _controls(controls: list, rows: list) -> list:
    """The controlled runs whose base scheduler runs: (row, base label, scheduler, change)."""
    by_label = dict(rows)
    return [(row, base, by_label[base], change) for row, base, change in controls if base in by_label]


def plan_t1(p: Plan, rows: list, quick: bool) -> None:
    for label, sched in rows:
        p.add(f"t1-{_key(label)}", _t1_scenario(sched, quick)[0])
    for row, _, sched, change in _controls(T1_CONTROLS, rows):
        scn = _t1_scenario(sched, quick)[0]
        if change is OLD_DRIVE:
            _on_old_drive(scn)
        else:
            scn["host"].update(change)
        p.add(f"t1-{row.lower()}", scn)


def _t1_row(p: Plan, key: str) -> dict:
    """The reader's time (a bound if unfinished), aggregate, reads, writes MB/s while it ran."""
    s, dur = p[key], _run_duration(p, key)
    rd = _tasks(s)["reader"]
    t0, t1, _ = _window(s, rd)
    r_mb, w_mb = _disk_mb(s, t0, t1)
    dt = max(t1 - t0, 1e-9)
    return {"reader_time_s": _elapsed(rd, dur), "aggregate_mb_s": (r_mb + w_mb) / dt, "reads_mb_s": r_mb / dt,
            "writes_mb_s": w_mb / dt}


def tables_t1(p: Plan, rows: list, t: Tables) -> None:
    data = {row_name(label): _t1_row(p, f"t1-{_key(label)}") for label, _ in rows}
    for row, _, _, _ in _controls(T1_CONTROLS, rows):
        data[row] = _t1_row(p, f"t1-{row.lower()}")
    t.add("table1", data)


def report_t1(t: Tables, rows: list, skipped: list, quick: bool) -> str:
    cols = ["reader_time_s", "aggregate_mb_s", "reads_mb_s", "writes_mb_s"]
    table = [[label] + [show(t.ref(f"table1/{row_name(label)}/{c}")) for c in cols] for label, _ in rows]
    controls = [[row] + [show(t.ref(f"table1/{row}/{c}")) for c in cols] for row, _, _, _ in _controls(T1_CONTROLS, rows)]
    size = "50 MiB, 256 MiB of memory" if quick else "200 MiB, 1 GiB of memory"
    head = ["scheduler", "reader time s", "aggregate MB/s", "reads MB/s", "writes MB/s"]
    out = (
        "## Table 1: streaming writes against a streaming read (section 5.4)\n\n"
        "Program 1, `while true; do dd if=/dev/zero of=file count=2048 bs=1M; done` (buffered: asynchronous writes "
        "by the flusher and by the throttled writer), beside program 2, `time cat 200mb-file > /dev/null` "
        f"({size}; the file is on disk, the cache cold), both started at 0. Reader time = cat's execution time; the "
        "throughputs are the disk's reads and writes while the reader runs (MB = 10^6 B), their sum the paper's "
        "aggregate disk throughput (claims `t1-*`).\n\n"
        + markdown_table(head, table)
        + "\n\n" + ("\n".join(skipped) + "\n\n" if skipped else "")
    )
    if controls:
        out += ("Controlled runs (one knob changed each): `deadline-today-writeback`, deadline with today's writeback "
                f"defaults (I/O-less throttling, dirty_ratio 20) instead of 2.6.9's; `-{OLD_DEVICE}`, the same "
                f"on the catalogue's earlier drive, `{OLD_DEVICE}` (82 GB, 55 -> 30 MB/s) with a 20 GiB file system on "
                "its outer zones.\n\n" + markdown_table(["run"] + head[1:], controls) + "\n\n")
    if any(" (" in label for label, _ in rows):
        out += ("The stand-in row `anticipatory` is C-LOOK with Iyer & Druschel's waits, with no deadlines: the writer's "
                "file lies after the reader's on disk and always has requests ahead of the head, so (likely) the sweep "
                "rarely wraps back to the reader's; the waits cannot change that. It shows a non-deadline elevator's "
                "starvation, not LAS (whose read and write FIFOs have expiry times).\n\n")
    return out


# -- Table 2: streaming reader against the chunk reader ------------------------------------

def _t2_scenario(sched: dict, quick: bool) -> dict:
    memory = 256 if quick else 1024
    big = 512 if quick else 2048  # larger than memory: every pass reads the disk
    duration = 400.0 if quick else 5400.0  # the paper's LAS took 4767 s
    host = _host(memory, [_tree("/linux", quick)], [{"path": "/big-file", "size_mib": big}], 1000)
    tasks = [
        {"name": "A", "command": "cat", "path": "/big-file", "loops": 0},
        {"name": "B", "command": "find-exec-cat", "path": "/linux", "exec_us": EXEC_US},
    ]
    return _scenario(sched, host, tasks, duration)


# Controlled runs: the same with no CPU for the system calls (FREE_CALLS taken away).
T2_CONTROLS = ([(f"{lb}-free-calls", lb, {"host": ("syscall_us", "copy_mb_s")}) for lb in ("LAS", "CAS")]
               + [(f"deadline-{OLD_DEVICE}", "deadline", OLD_DRIVE)])


def plan_t2(p: Plan, rows: list, quick: bool) -> None:
    for label, sched in rows:
        p.add(f"t2-{_key(label)}", _t2_scenario(sched, quick))
    for row, _, sched, change in _controls(T2_CONTROLS, rows):
        scn = _t2_scenario(sched, quick)
        if change is OLD_DRIVE:
            _on_old_drive(scn)
        else:
            for field in change["host"]:
                scn["host"].pop(field)
        p.add(f"t2-{row.lower()}", scn)


T2_COUNTERS = ["antic_waits", "break_close", "antic_timeouts", "break_same_process", "break_exited"]


def tables_t2(p: Plan, rows: list, t: Tables) -> None:
    data = {}
    keys = [(row_name(label), f"t2-{_key(label)}") for label, _ in rows]
    keys += [(row, f"t2-{row.lower()}") for row, _, _, _ in _controls(T2_CONTROLS, rows)]
    for name, key in keys:
        s, dur = p[key], _run_duration(p, key)
        b = _tasks(s)["B"]
        t0, t1, _ = _window(s, b)
        r_mb, w_mb = _disk_mb(s, t0, t1)
        dt = max(t1 - t0, 1e-9)
        agg = (r_mb + w_mb) / dt
        b_mb = (b["data_pages_read"] + b["meta_pages_read"]) * 4096 / 1e6 / dt
        proc = next((x for x in s["processes"] if x["name"] == "B"), None)
        row = {"b_time_s": _elapsed(b, dur), "aggregate_mb_s": agg, "b_reads_mb_s": b_mb, "a_reads_mb_s": agg - b_mb,
               "cat_processes": b["children"]}
        if proc:
            row["b_requests"] = proc["requests"]
            row["b_response_ms"] = proc["response_ms"]["mean"]
        row.update(_counters(s, T2_COUNTERS))
        data[name] = row
    t.add("table2", data)


def report_t2(t: Tables, rows: list, skipped: list, quick: bool) -> str:
    cols = [("b_time_s", ".1f"), ("aggregate_mb_s", ".1f"), ("b_reads_mb_s", ".2f"), ("a_reads_mb_s", ".1f"),
            ("cat_processes", ".0f"), ("b_requests", ".0f"), ("b_response_ms", ".1f")]
    table = [[label] + [show(t.ref(f"table2/{row_name(label)}/{c}"), f) for c, f in cols] for label, _ in rows]
    controls = [[row] + [show(t.ref(f"table2/{row}/{c}"), f) for c, f in cols] for row, _, _, _ in _controls(T2_CONTROLS, rows)]
    tree = ("111 directories, 1,776 files (about 22 MiB), 256 MiB of memory, a 512 MiB big-file" if quick else
            "1,111 directories, 17,776 files, lognormal sizes of mean 13 KiB (about 225 MiB: the Linux 2.6 source tree), "
            "1 GiB of memory, a 2 GiB big-file")
    anticip = [label for label, _ in rows if "antic_waits" in t.ref(f"table2/{row_name(label)}/*")]
    counters = [[label] + [show(t.ref(f"table2/{row_name(label)}/{c}"), ".0f") for c in T2_COUNTERS] for label in anticip]
    return (
        "## Table 2: a streaming reader against a chunk reader (section 5.5)\n\n"
        "Program A, `while true; do cat big-file > /dev/null; done`, beside program B, `time find . -type f -exec cat "
        f"'{{}}' ';' > /dev/null` over a tree the size of the Linux source tree ({tree}; every cat a new process, "
        f"fork + exec {EXEC_US} us; every read() 0.49 us and its copy at 1551.7 MB/s of CPU: lmbench). Program B's time, and the aggregate disk throughput while B runs (MB = 10^6 B; to the "
        "run's end when B did not finish); B's requests and their mean response time (queue to completion) from the "
        "run's per-process table (claims `t2-*`).\n\n"
        + markdown_table(["scheduler", "B time s", "aggregate MB/s", "B's reads MB/s", "A's reads MB/s", "cat processes",
                          "B's requests", "B's mean response ms"], table)
        + "\n\n" + ("\n".join(skipped) + "\n\n" if skipped else "")
        + ("Controlled runs, one change each: `-free-calls`, no CPU for the system calls (no `syscall_us` and `copy_mb_s`); "
           f"`-{OLD_DEVICE}`, the catalogue's earlier drive.\n\n"
           + markdown_table(["run", "B time s", "aggregate MB/s", "B's reads MB/s", "A's reads MB/s", "cat processes",
                             "B's requests", "B's mean response ms"], controls) + "\n\n" if controls else "")
        + ("The anticipatory schedulers' counters (which rule ended each anticipation, or dispatched instead of waiting): "
           "waits, ended by a close request of another process, ended by the timeout; dispatches where the anticipated "
           "process's own next request was queued; dispatches because the anticipated process (a cat) had exited.\n\n"
           + markdown_table(["scheduler"] + T2_COUNTERS, counters) + "\n\n" if counters else "")
        + "In 2.6.9 a request of another process ends LAS's anticipation only if it lies within 32 KiB of A's last "
        "request (growing to 1 MiB after 6 ms of waiting) or nearer than A's own mean seek distance; A's streaming keeps "
        "its next request queued, so LAS dispatches A in elevator order and B's cat is served only when its read expires "
        "in the FIFO (125 ms, checked at most once per 125 ms): about two expiries per file. In 2.6.32 the window starts "
        "at 4 MiB and grows to 256 MiB, and a close request updates A's seek history, so B's requests near the head end "
        "the waits: no starvation (docs/schedulers/las.md).\n\n"
    )


# -- Table 3 and Figure 3: one and two chunk readers ----------------------------------------

def _t3_scenario(sched: dict, instances: int, quick: bool) -> dict:
    paths = ["/linux-1", "/linux-2"][:instances]
    host = _host(256 if quick else 1024, [_tree(p, quick) for p in ["/linux-1", "/linux-2"]], [], None)
    tasks = [{"name": f"B{i + 1}", "command": "find-exec-cat", "path": path, "exec_us": EXEC_US} for i, path in enumerate(paths)]
    return _scenario(sched, host, tasks, 600.0 if quick else 3600.0)


# Controlled runs: the same one and two instances with no fork + exec time per cat (exec_us = 0
# instead of EXEC_US), to show how much of the times is the per-file CPU cost; and with the
# host's CPU per system call taken away (no syscall_us, no copy_mb_s: each read() free).
FREE_CALLS = ("syscall_us", "copy_mb_s")
T3_CONTROLS = ([(f"{lb}-no-exec", lb, {"exec_us": 0}) for lb in ("deadline", "LAS", "CAS")]
               + [(f"{lb}-free-calls", lb, {"host": FREE_CALLS}) for lb in ("deadline", "LAS", "CAS")])
T3_COUNTERS = ["antic_waits", "antic_timeouts", "break_close", "break_exited"]


def plan_t3(p: Plan, rows: list, quick: bool) -> None:
    for label, sched in rows:
        for n in (1, 2):
            p.add(f"t3-{_key(label)}-{n}", _t3_scenario(sched, n, quick))
    for row, _, sched, change in _controls(T3_CONTROLS, rows):
        for n in (1, 2):
            scn = _t3_scenario(sched, n, quick)
            for task in scn["task"]:
                task.update({k: v for k, v in change.items() if k != "host"})
            for field in change.get("host", ()):
                scn["host"].pop(field)
            p.add(f"t3-{row.lower()}-{n}", scn)


def _t3_figures(p: Plan, key: str) -> Tuple[float, object]:
    """(aggregate MB/s from the first start to the last exit, that time: a bound if one did not
    finish, the aggregate then over the run's duration)."""
    s = p[key]
    tasks = s["host"]["tasks"]
    done = all(t["elapsed_s"] is not None for t in tasks)
    end = max((t["start_s"] or 0) + t["elapsed_s"] for t in tasks) if done else _run_duration(p, key)
    mb = sum((t["data_pages_read"] + t["meta_pages_read"]) * 4096 for t in tasks) / 1e6
    return mb / max(end, 1e-9), (end if done else AtLeast(end))


def _t3_row(p: Plan, key: str) -> dict:
    one, t_one = _t3_figures(p, f"{key}-1")
    two, t_two = _t3_figures(p, f"{key}-2")
    row = {"one_mb_s": one, "two_mb_s": two, "one_s": t_one, "two_s": t_two,
           "time_factor": _ratio(t_two, t_one), "one_cats": sum(x["children"] for x in p[f"{key}-1"]["host"]["tasks"])}
    row.update({f"one_{k}": v for k, v in _counters(p[f"{key}-1"], T3_COUNTERS).items()})
    row.update({f"two_{k}": v for k, v in _counters(p[f"{key}-2"], T3_COUNTERS).items()})
    return row


def tables_t3(p: Plan, rows: list, t: Tables) -> None:
    data = {row_name(label): _t3_row(p, f"t3-{_key(label)}") for label, _ in rows}
    for row, _, _, _ in _controls(T3_CONTROLS, rows):
        data[row] = _t3_row(p, f"t3-{row.lower()}")
    t.add("table3", data)


def report_t3(t: Tables, rows: list, skipped: list, out: Path, quick: bool) -> str:
    cols = [("one_mb_s", ".1f"), ("two_mb_s", ".1f"), ("one_s", ".1f"), ("two_s", ".1f"), ("time_factor", ".2f")]
    table = [[label] + [show(t.ref(f"table3/{row_name(label)}/{c}"), f) for c, f in cols] for label, _ in rows]
    controls = [[row] + [show(t.ref(f"table3/{row}/{c}"), f) for c, f in cols] for row, _, _, _ in _controls(T3_CONTROLS, rows)]
    anticip = [row_name(label) for label, _ in rows if "one_antic_waits" in t.ref(f"table3/{row_name(label)}/*")]
    ccols = [f"{n}_{c}" for n in ("one", "two") for c in T3_COUNTERS]
    counters = [[r] + [show(t.ref(f"table3/{r}/{c}"), ".0f") for c in ccols] for r in anticip]
    plot = _figure3(t, rows, out / "figure3.png")
    tree = "111 directories, 1,776 files each" if quick else "1,111 directories, 17,776 files, about 225 MiB each"
    head = ["scheduler", "1 instance MB/s", "2 instances MB/s", "1 instance s", "2 instances s", "time factor (2 / 1)"]
    return (
        "## Table 3 and Figure 3: one and two chunk readers (section 5.6)\n\n"
        f"`find . -type f -exec cat '{{}}' ';'` over one source tree, then two instances at once over two disjoint "
        f"trees ({tree}; /linux-1 then /linux-2, laid out one after the other). Aggregate throughput = the pages the "
        "instances read (data and metadata) over the time to the last one's exit (MB = 10^6 B) (claims `t3-*`).\n\n"
        + markdown_table(head, table)
        + "\n\n" + ("\n".join(skipped) + "\n\n" if skipped else "")
        + (f"Controlled runs, one change each: `-no-exec`, no fork + exec time per cat (`exec_us` = 0 instead of "
           f"{EXEC_US} us); `-free-calls`, no CPU for the system calls (no `syscall_us` and `copy_mb_s`).\n\n"
           + markdown_table(["run"] + head[1:], controls) + "\n\n" if controls else "")
        + ("The anticipatory schedulers' counters, one instance then two: waits, ended by the timeout, ended by a "
           "close request of another process, dispatches because the anticipated cat had exited.\n\n"
           + markdown_table(["scheduler"] + ccols, counters) + "\n\n" if counters else "")
        + f"![Figure 3]({plot.name})\n\n"
    )


def _figure3(t: Tables, rows: list, path: Path) -> Path:
    from ..plots import _pyplot

    # Stand-ins are ticked by their scheduler's name and a star (their labels are long).
    ours = {(label if " (" not in label else f"{sched['name']} *"):
            (t.ref(f"table3/{row_name(label)}/one_mb_s"), t.ref(f"table3/{row_name(label)}/two_mb_s"))
            for label, sched in rows}
    names = [lb for lb, _ in SCHEDULERS]
    pv = paper_values([f"t3-{lb.lower()}-{n}" for lb in names for n in ("one", "two")])
    paper = {lb: (pv[f"t3-{lb.lower()}-one"], pv[f"t3-{lb.lower()}-two"]) for lb in names}
    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, (title, data) in zip(axes, [("Seelam et al. 2005, Table 3", paper), ("ours (simulated host)", ours)]):
        labels = list(data)
        xs = range(len(labels))
        w = 0.38
        b1 = ax.bar([x - w / 2 for x in xs], [data[k][0] for k in labels], w, label="1 instance")
        b2 = ax.bar([x + w / 2 for x in xs], [data[k][1] for k in labels], w, label="2 instances")
        ax.bar_label(b1, fmt="%.1f", fontsize=7)
        ax.bar_label(b2, fmt="%.1f", fontsize=7)
        ax.set_xticks(list(xs), labels, fontsize=8)
        ax.set_title(title, fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("aggregate throughput (MB/s)")
    axes[1].legend(fontsize=8)
    if any(k.endswith(" *") for k in ours):
        fig.text(0.5, 0.01, "* not the paper's schedulers: 2.6.32's LAS and CAS (las, cas), and Iyer & Druschel's "
                 "framework over C-LOOK (anticipatory)", ha="center", fontsize=8)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# -- Table 4: FFSB's web, mail, file server and metadata profiles (sections 5.1, 5.7-5.10) ------

# Table 4's five schedulers, in the paper's row order, as the paper's kernel (2.6.9) had them:
# `cfq-2.6.9` is the CFQ merged in 2.6.9 (docs/schedulers/cfq-2.6.9.md). Its queue has 8192
# requests per direction (2.6.9's cfq_init raises nr_requests from 128 to 8192), and with the
# queue full a process is exempted unless it has more than clamp((8192 - 8) / busy, 3, 128)
# requests of that direction in its tree (cfq_may_queue, consulted by 2.6.9's get_request only
# then); the other schedulers keep 2.6.9's 128 (BLKDEV_MAX_RQ).
CFQ_269_NR_REQUESTS = 8192
T4_SCHEDULERS: List[Tuple[str, dict]] = [  # LAS and CAS of the paper's kernel, as in SCHEDULERS
    ("deadline", {"name": "deadline"}),
    ("LAS", {"name": "las-2.6.9"}),
    ("CAS", {"name": "cas-2.6.9"}),
    ("CFQ", {"name": "cfq-2.6.9"}),
    ("noop", {"name": "noop"}),
]
# (key, column title, operation weights: FFSB's read/write/create/append/delete).
T4_PROFILES: List[Tuple[str, str, dict]] = [
    ("web", "Web server", {"read": 1}),                               # 5.7: random reads of whole files
    ("mail", "Mail server", {"read": 40, "create": 40, "delete": 20}),  # 5.9
    ("file", "File server", {"read": 80, "write": 20}),               # 5.8
    ("meta", "MetaData", {"create": 40, "append": 40, "delete": 20}),  # 5.10: no reads
]


def t4_size(quick: bool) -> dict:
    """The file set, operations and memory. Full: the paper's (100,000 files in 100
    directories, 4-64 KiB, four threads of 20,000 operations, 1 GiB). Quick: 1/25 of the
    files, 1/40 of the operations and memory scaled with the file set (the file set still
    about 3.3 times memory)."""
    if quick:
        return {"files": 4000, "dirs": 20, "ops": 500, "memory_mib": 40}
    return {"files": 100_000, "dirs": 100, "ops": 20_000, "memory_mib": 1024}


def t4_rows(known: set) -> Tuple[List[Tuple[str, dict]], List[str]]:
    return split_schedulers(known, T4_SCHEDULERS)


def _t4_scenario(sched: dict, weights: dict, quick: bool, cfq_269_pool: bool = False) -> dict:
    z = t4_size(quick)
    host = _host(z["memory_mib"], [], [], None)
    ffsb = {
        "dirs": z["dirs"], "files": z["files"], "min_kib": 4, "max_kib": 64, "threads": 4, "ops": z["ops"],
        # FFSB's 4 KiB read and write block sizes; a write operation overwrites 4 KiB, an append
        # adds 4 KiB; no fsync (FFSB's default; Filebench's varmail would fsync).
        "read_bs_kib": 4, "write_bs_kib": 4, "write_kib": 4, "append_kib": 4,
    }
    ffsb.update(weights)
    tasks = [{"name": "ffsb", "command": "ffsb", "path": "/data", "ffsb": ffsb}]
    scn = _scenario(sched, host, tasks, 600.0 if quick else 20_000.0)
    if cfq_269_pool:
        scn["block"]["nr_requests"] = CFQ_269_NR_REQUESTS
    return scn


# Controlled runs, one knob each: the web profile with 64 KiB read()s (every file, at most 64 KiB,
# in one read() and so in one readahead window) under deadline, CAS and noop; today's CFQ (Linux
# ~4.4's: time slices, service trees, idling) in place of 2.6.9's on every profile.
T4_WHOLE_READ_KIB = 64
T4_CONTROLS = [
    # (row, base label, profiles, ffsb fields changed, scheduler tunables changed)
    (f"deadline-read{T4_WHOLE_READ_KIB}", "deadline", ["web"], {"read_bs_kib": T4_WHOLE_READ_KIB}, {}),
    (f"CAS-read{T4_WHOLE_READ_KIB}", "CAS", ["web"], {"read_bs_kib": T4_WHOLE_READ_KIB}, {}),
    (f"noop-read{T4_WHOLE_READ_KIB}", "noop", ["web"], {"read_bs_kib": T4_WHOLE_READ_KIB}, {}),
    ("CFQ-4.4", "CFQ", [k for k, _, _ in T4_PROFILES], {}, {"name": "cfq"}),
    (f"CAS-{OLD_DEVICE}", "CAS", [k for k, _, _ in T4_PROFILES], {}, {}),
    (f"deadline-{OLD_DEVICE}", "deadline", [k for k, _, _ in T4_PROFILES], {}, {}),
]
T4_COUNTERS = ["antic_waits", "break_exited", "break_close"]


def _t4_controls(rows: list) -> list:
    by_label = dict(rows)
    return [c for c in T4_CONTROLS if c[1] in by_label]


def plan_t4(p: Plan, known: set, quick: bool) -> None:
    rows, _ = t4_rows(known)
    for label, sched in rows:
        for key, _, weights in T4_PROFILES:
            p.add(f"t4-{key}-{_key(label)}", _t4_scenario(sched, weights, quick, sched.get("name") == "cfq-2.6.9"))
    weights = {k: w for k, _, w in T4_PROFILES}
    by_label = dict(rows)
    for row, base, profiles, ffsb, tunables in _t4_controls(rows):
        for key in profiles:
            # A control changes one thing: CFQ's keeps 2.6.9's pool of 8192 with today's cfq.
            scn = _t4_scenario(dict(by_label[base], **tunables), weights[key], quick,
                               by_label[base].get("name") == "cfq-2.6.9")
            scn["task"][0]["ffsb"].update(ffsb)
            if row.endswith(OLD_DEVICE):
                _on_old_drive(scn)
            p.add(f"t4-{key}-{row.lower()}", scn)


def _t4_task(p: Plan, key: str) -> dict:
    return _tasks(p[key])["ffsb"]


def tables_t4(p: Plan, known: set, t: Tables) -> None:
    """table4 (rows: schedulers and controlled runs; columns: the profiles' times, s),
    table4_throttled_s (the FFSB threads' time throttled by balance_dirty_pages, summed),
    table4_pages_read (data and metadata pages FFSB caused to be read) and table4_counters (LAS's
    and CAS's counters by profile)."""
    rows, _ = t4_rows(known)
    times, throttled, pages, counters = {}, {}, {}, {}
    for label, _ in rows:
        for key, _, _ in T4_PROFILES:
            k = f"t4-{key}-{_key(label)}"
            task = _t4_task(p, k)
            times.setdefault(label, {})[key] = _elapsed(task, _run_duration(p, k))
            throttled.setdefault(label, {})[key] = task["throttled_s"]
            pages.setdefault(label, {})[key] = task["data_pages_read"] + task["meta_pages_read"]
            if label in ("LAS", "CAS"):
                for c, v in _counters(p[k], T4_COUNTERS).items():
                    counters.setdefault(key, {})[f"{label}_{c}"] = v
    for row, _, profiles, _, _ in _t4_controls(rows):
        for key in profiles:
            k = f"t4-{key}-{row.lower()}"
            times.setdefault(row, {})[key] = _elapsed(_t4_task(p, k), _run_duration(p, k))
    t.add("table4", times)
    t.add("table4_throttled_s", throttled)
    t.add("table4_pages_read", pages)
    if counters:
        t.add("table4_counters", counters)


def report_t4(t: Tables, known: set, quick: bool) -> str:
    rows, skipped = t4_rows(known)
    keys = [k for k, _, _ in T4_PROFILES]
    table = [[label] + [show(t.ref(f"table4/{label}/{k}")) for k in keys] for label, _ in rows]
    head = ["scheduler"] + [f"{title} s" for _, title, _ in T4_PROFILES]
    controls = []
    for row, _, profiles, _, _ in _t4_controls(rows):
        controls.append([row] + [show(t.ref(f"table4/{row}/{k}")) if k in profiles else "" for k in keys])
    throttled = [[label] + [show(t.ref(f"table4_throttled_s/{label}/{k}")) for k in keys]
                 + [show(t.ref(f"table4_pages_read/{label}/{k}"), ".0f") for k in keys] for label, _ in rows]
    order = []
    for key, title, _ in T4_PROFILES:
        done = sorted((_sortable(t.ref(f"table4/{label}/{key}")), label) for label, _ in rows)
        order.append(f"- {title}: " + ", ".join(f"{lb} {show(t.ref(f'table4/{lb}/{key}'))}" for _, lb in done))
    counters = []
    if "table4_counters/web/LAS_antic_waits" in t:
        ccols = [f"{lb}_{c}" for c in T4_COUNTERS for lb in ("LAS", "CAS")]
        counters = [[k] + [show(t.ref(f"table4_counters/{k}/{c}"), ".0f") for c in ccols] for k in keys]
    z = t4_size(quick)
    scale = ("the paper's sizes" if not quick else
             f"--quick: {z['files']:,} files in {z['dirs']} directories, {z['ops']} operations per thread, "
             f"{z['memory_mib']} MiB of memory")
    return (
        "## Table 4: FFSB's server and metadata profiles (sections 5.1, 5.7-5.10)\n\n"
        f"FFSB ({scale}): {z['files']:,} files in {z['dirs']} directories below /data, sizes uniform in 4-64 KiB, "
        f"built before the run (creation not timed); one process with four threads, each running {z['ops']:,} "
        "operations on the files of its own quarter of the directories, every operation picked by weight. Web: read "
        "a whole file; mail: read 40, create 40, delete 20; file server: read 80, write 20; metadata: create 40, "
        "append 40, delete 20. Times are the FFSB process's execution time (seconds), a cold cache, one seed (the "
        "paper reports the mean of three runs) (claims `t4-*`).\n\n"
        + markdown_table(head, table)
        + "\n\n" + ("\n".join(skipped) + "\n\n" if skipped else "")
        + "Ours, fastest first:\n\n" + "\n".join(order) + "\n\n"
        + ("Controlled runs (one knob changed each): `deadline-read64`, `CAS-read64` and `noop-read64`, the web profile with 64 KiB "
           "read()s (every file, at most 64 KiB, in one read() and so in one readahead window); `CFQ-4.4`, today's `cfq` "
           "(Linux ~4.4's: 100 ms time slices, service trees, idling) in place of the paper's 2.6.9 CFQ (`cfq-2.6.9`: "
           "its first CFQ, per-process queues refilled from the head of a round-robin list, no slices, no idling).\n\n"
           + markdown_table(["run"] + head[1:], controls) + "\n\n" if controls else "")
        + "Time the four threads spent throttled in balance_dirty_pages (s, summed over the threads), and the pages "
        "(data and metadata) FFSB caused to be read:\n\n"
        + markdown_table(["scheduler"] + [f"{title} throttled s" for _, title, _ in T4_PROFILES]
                         + [f"{title} pages read" for _, title, _ in T4_PROFILES], throttled) + "\n\n"
        + ("LAS's and CAS's counters by profile: anticipation waits, dispatches because the anticipated thread had "
           "exited, waits ended by a close request of another thread.\n\n"
           + markdown_table(["profile"] + [f"{lb} {c}" for c in T4_COUNTERS for lb in ("LAS", "CAS")], counters)
           + "\n\n" if counters else "")
        + T4_NOTE + "\n"
    )


def _sortable(v) -> float:
    return v.value if isinstance(v, (AtLeast, AtMost)) else float(v)


T4_NOTE = (
    "Where the paper is silent, FFSB's and Filebench's personalities decide: reads are whole files in 4 KiB read()s "
    "(FFSB's readall); a write overwrites 4 KiB at a random 4 KiB-aligned offset inside the file (FFSB's write); "
    "create writes the new file's whole size (uniform 4-64 KiB) in 4 KiB writes; append adds 4 KiB at the end "
    "(FFSB's append; Filebench's fileserver appends 16 KiB); delete unlinks (inode and blocks freed and reused, cached "
    "pages dropped, dirty ones never written); no fsync (FFSB's default; Filebench's varmail fsyncs, not followed: the "
    "paper names FFSB); a file is picked uniformly among the thread's files as they are at that moment. The four "
    "threads are tasks of one process, each with its own pid for the scheduler: Linux 2.6.9 gives every task its own "
    "io_context (CLONE_IO came in 2.6.25), so LAS and CAS keep think-time and seek statistics per thread, and CFQ "
    "gives each thread its own queue. ext3's journal is modelled (docs/host.md): metadata (directory, inode table, "
    "bitmap blocks) is committed to a 32 MiB journal every 5 s in ordered data mode by kjournald, then written in place "
    "by the flusher. The readahead "
    "is 2.6.9's (docs/host-readahead.md): the first read of an open file reads 16 pages (64 KiB) at once, so a "
    "4-64 KiB file read in 4 KiB read()s reaches the disk as one request."
)


# -- measures of this paper (passed to ledger.write) ------------------------------------------

def _no_single_best(times: dict):
    """Table 4 (`{profile: {scheduler: time}}`): for each scheduler, its largest time over the
    profile's best time, over the profiles; the smallest of these over the schedulers. Above 1:
    no scheduler is the best (or tied for it) on every profile."""
    schedulers = set.intersection(*(set(col) for col in times.values()))
    if not schedulers:
        raise ValueError("no_single_best: no scheduler has a time in every profile")
    worst = {}
    for s in schedulers:
        gaps = []
        for col in times.values():
            best = min(col.values(), key=_sortable)
            if isinstance(best, (AtLeast, AtMost)) or isinstance(col[s], (AtLeast, AtMost)):
                return math.nan
            gaps.append(float(col[s]) / float(best))
        worst[s] = max(gaps)
    return min(worst.values())


MEASURES = {"no_single_best": _no_single_best}


# -- the ledger's tables ------------------------------------------------------------------------

def tables(p: Plan, rows: list, known: set) -> Tables:
    """Every figure the report shows and the claims are judged on: table1, table2, table3 (rows:
    the schedulers by their row names, and controlled runs), table4 (+ table4_throttled_s,
    table4_counters), fig5_ARRAY and adaptive_ARRAY (seelam2005_selection.tables)."""
    t = Tables()
    tables_t1(p, rows, t)
    tables_t2(p, rows, t)
    tables_t3(p, rows, t)
    tables_t4(p, known, t)
    selection.tables(p, known, t)
    return t


# -- entry point ----------------------------------------------------------------------------

HOST_NOTE = (
    "The host: the paper's machine (section 5.2) had 1 GB of memory, one processor used (a 2.28 GHz Pentium 4 Xeon), "
    "Linux 2.6.9, and an external 7,200 rpm Maxtor 20 GB IDE disk with ext3, remounted before every run. Here: "
    "`memory_mib` = 1024 (the page cache is the whole memory: processes' own memory is not modelled), `cpus` = 1, "
    "`fs = \"ext3\"` (ext2's layout with Linux 2.6.9's journal, ordered data) on the whole disk, a cold cache, "
    "Linux 2.6.9's host (`kernel_release = \"2.6.9\"`: its readahead and its balance_dirty_pages) and vm defaults "
    "(dirty_background_ratio 10, dirty_ratio 40, read_ahead_kb 128), and Linux 2.6's block layer (`[block]`, legacy "
    "request lists, 128 requests per direction (8192 under `cfq-2.6.9`, whose cfq_init raised it, with its "
    "cfq_may_queue exemption when the queue is full), plugging and merging). The CPU per system call and fork + exec "
    f"are lmbench's on a 2.4 GHz Xeon with Linux 2.6.10 ({SYSCALL_US} us, {COPY_MB_S} MB/s, {EXEC_US} us; docs/host.md). "
    f"The device is `{DEVICE}` (Maxtor DiamondMax Plus 8, 20.8 GB, 7200 rpm PATA, no command queueing, 2 MB cache; "
    "its capacity and cache from an hdparm report, its zones and seeks estimated: docs/research/drive-specs.md 3d): "
    "the nearest published drive to the paper's \"7,200 RPM Maxtor 20 GB IDE disk\". Sensitivity rows (`-"
    f"{OLD_DEVICE}`) run on the catalogue's earlier drive, `{OLD_DEVICE}` (DiamondMax 10, 82 GB, 55 -> 30 MB/s), "
    "with a 20 GiB file system on its outer zones. A time shown as \"> N\" is a program "
    "the run's end stopped (its duration) before it finished: a lower bound, which decides a claim only when every "
    "value above it gives the same verdict."
)


def reproduce(out_dir: "str | Path", quick: bool = False, progress: Optional[Callable[[int, int], None]] = None,
              pool: Optional[Pool] = None, known: Optional[set] = None) -> Path:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    known = known if known is not None else registered_names()
    rows, skipped = split_schedulers(known)
    p = Plan(out, pool or Pool())
    t0 = time.perf_counter()
    plan_t1(p, rows, quick)
    plan_t2(p, rows, quick)
    plan_t3(p, rows, quick)
    plan_t4(p, known, quick)
    f5_skipped = selection.plan_f5(p, quick, known)
    p.execute(progress)
    wall = time.perf_counter() - t0
    t = tables(p, rows, known)
    _, ledger_lines = ledger.write(NAME, t, out, measures=MEASURES, partial=quick)
    ran = ", ".join(f"`{s['name']}`" for _, s in rows)
    head = [
        "# Seelam et al. 2005: the anticipatory schedulers' microbenchmarks",
        "",
        "Seelam, Romero, Teller & Buros, \"Enhancements to Linux I/O scheduling\", Ottawa Linux Symposium 2005, "
        "section 5 (Tables 1-4, Figure 3) on the simulated host, and section 6 (Figure 5, the adaptive scheduler) on "
        "simulated RAID-0 arrays. Generated by `iosched reproduce seelam2005`"
        f"{' --quick' if quick else ''}: {len(p.results)} runs in {wall:.1f} s (every scenario in scenarios/; every "
        f"figure the claims are judged on in tables.csv, the verdicts in claims.csv). Schedulers run: {ran}, and "
        "`cfq-2.6.9` (Table 4, with `cfq`, Linux ~4.4's, as a controlled run), `cfq` (Figure 5: the paper ran 2.6.11, whose CFQ v2 is neither), `noop` in Table 4 and Figure 5.",
        "",
    ]
    if quick:
        head += ["**Quick mode: smaller files, trees and memory, shorter runs. A smoke test; the verdicts below judge "
                 "these small runs, not the reproduction.**", ""]
    sections = [
        "\n".join(head + ledger_lines),
        ("Not run:\n\n" + "\n".join(skipped) + "\n" if skipped else ""),
        HOST_NOTE + "\n",
        report_t1(t, rows, skipped, quick),
        report_t2(t, rows, skipped, quick),
        report_t3(t, rows, skipped, out, quick),
        report_t4(t, known, quick),
        selection.report_f5(p, t, out, quick, known, f5_skipped),
    ]
    report = out / "report.md"
    report.write_text("\n".join(s for s in sections if s))
    return report
