"""`iosched reproduce seelam2005`: Seelam, Romero, Teller & Buros 2005, "Enhancements to Linux I/O
scheduling" (Ottawa Linux Symposium): the microbenchmarks of section 5 (Tables 1-3, Figure 3) on
the simulated host (issue 13).

- Table 1 (section 5.4): `while true; do dd if=/dev/zero of=file bs=1M count=2048; done` beside
  `time cat 200mb-file`: the reader's time, the reader's and the writer's disk throughput and
  their sum while the reader runs.
- Table 2 (section 5.5): `while true; do cat big-file; done` (a file larger than memory) beside
  `time find . -type f -exec cat {} \\;` over a tree the size of the Linux source tree:
  program B's time and the aggregate disk throughput while it runs.
- Table 3 and Figure 3 (section 5.6): one, then two concurrent `find -exec cat` over disjoint
  source trees: aggregate throughput.

The schedulers are the constant SCHEDULERS (deadline, and the anticipatory schedulers of the
paper's kernel, Linux 2.6.9: `las-2.6.9`, and the cooperative anticipatory scheduler built on it,
`cas-2.6.9`); one that the native library does not register is skipped with a line in the report.
STAND_INS are extra rows, labelled as such: the same schedulers on Linux 2.6.32's as-iosched.c
(`las`, `cas`), whose close test and exit rules changed after the paper, and Iyer & Druschel's
anticipatory framework.

Every point is a generated scenario (kept in OUT/scenarios/); the runs go through the pool.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable, List, Optional, Tuple

from ..pool import Pool
from . import seelam2005_selection as selection
from .block import Plan
from .sweep import markdown_table

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

# The paper's numbers (section 5): label -> figures.
PAPER_T1 = {"deadline": (129.0, 25.0), "LAS": (10.0, 33.0), "CAS": (9.0, 33.0)}  # reader time s, aggregate MB/s
PAPER_T2 = {"deadline": (297.0, 9.0), "LAS": (4767.0, 35.0), "CAS": (255.0, 34.0)}  # program B time s, aggregate MB/s
PAPER_T3 = {"deadline": (14.5, 4.0), "LAS": (15.5, 4.0), "CAS": (15.5, 11.6)}  # MB/s: one instance, two instances

# The host (section 5.2: a 2.28 GHz Pentium 4 Xeon with 1 GB of memory, one processor used,
# Linux 2.6.9; an external 7,200 rpm Maxtor 20 GB IDE disk with ext3, remounted before each run).
DEVICE = "maxtor-6l080l0"
FS_MIB = 20 * 1024


def _host(memory_mib: int, tree: list, files: list, sample_ms: Optional[int]) -> dict:
    h = {
        "memory_mib": memory_mib,
        "fs": "ext3",
        "fs_mib": FS_MIB,
        "cpus": 1,
        # Linux 2.6.9's vm defaults: dirty_background_ratio 10, dirty_ratio 40 (lowered in
        # 2.6.22), read_ahead_kb 128; balance_dirty_pages as in 2.6 (writers write back).
        "dirty_background_ratio": 10,
        "dirty_ratio": 40,
        "dirty_throttle": "2.6",
        "read_ahead_kb": 128,
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
    return "".join(c if c.isalnum() else "-" for c in label.split(" (")[0].lower()).strip("-")


# -- helpers ----------------------------------------------------------------------------------

def _at(timeline: list, field: str, t: float) -> float:
    """`field` of the timeline linearly interpolated at time t (0 before the first sample)."""
    prev_t, prev_v = 0.0, 0.0
    for x in timeline:
        if x["t_s"] >= t:
            dt = x["t_s"] - prev_t
            return prev_v if dt <= 0 else prev_v + (x[field] - prev_v) * (t - prev_t) / dt
        prev_t, prev_v = x["t_s"], x[field]
    return prev_v


def _window(s: dict, task: dict) -> Tuple[float, float, bool]:
    """The task's lifetime (start, end) in the run; finished = False when the run's end stopped it."""
    start = task["start_s"] or 0.0
    if task["elapsed_s"] is not None:
        return start, start + task["elapsed_s"], True
    return start, s["elapsed_s"], False


def _disk_mb(s: dict, t0: float, t1: float) -> Tuple[float, float]:
    """MB (10^6 B) the disk read and wrote in [t0, t1] (from the host's timeline)."""
    tl = s["host"]["timeline"]
    r = (_at(tl, "disk_read_mib", t1) - _at(tl, "disk_read_mib", t0)) * 2**20 / 1e6
    w = (_at(tl, "disk_written_mib", t1) - _at(tl, "disk_written_mib", t0)) * 2**20 / 1e6
    return r, w


def _duration(s: dict, task: dict, duration_s: float) -> float:
    """How long the task could run: the run's configured duration less its start."""
    return duration_s - (task["start_s"] or 0.0)


def _time(task: dict, s: dict, duration_s: float) -> str:
    if task["elapsed_s"] is None:
        return f"> {_duration(s, task, duration_s):.0f} (not finished: the run's duration)"
    return f"{task['elapsed_s']:.1f}"


def _ratio_verdict(ours: float, paper: float, what: str) -> str:
    r = ours / paper if paper else float("inf")
    if 0.8 <= r <= 1.25:
        return f"{what} close ({r:.2f}x the paper's)"
    if 1 / 3 <= r <= 3:
        return f"{what} same order ({r:.2f}x)"
    return f"{what} differs ({r:.2f}x)"


def _time_verdict(task: dict, s: dict, paper: float, duration_s: float) -> str:
    if task["elapsed_s"] is None:
        left = _duration(s, task, duration_s)
        if paper > left:
            return f"time consistent (paper's {paper:.0f} s is beyond the run's {left:.0f} s)"
        return f"time differs (paper {paper:.0f} s; ours did not finish in {left:.0f} s)"
    return _ratio_verdict(task["elapsed_s"], paper, "time")


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


# A sensitivity run: deadline with today's writeback defaults instead of 2.6.9's.
TODAY_WRITEBACK = {"dirty_throttle": "io-less", "dirty_ratio": 20}


def plan_t1(p: Plan, rows: list, quick: bool) -> None:
    for label, sched in rows:
        p.add(f"t1-{_key(label)}", _t1_scenario(sched, quick)[0])
    if any(label == "deadline" for label, _ in rows):
        scn = _t1_scenario({"name": "deadline"}, quick)[0]
        scn["host"].update(TODAY_WRITEBACK)
        p.add("t1-deadline-today", scn)


def _t1_figures(p: Plan, key: str) -> Tuple[dict, float, float, float, float]:
    """(the reader's task, its run's duration, aggregate, reads, writes MB/s while it ran)."""
    s, dur = p[key], _run_duration(p, key)
    rd = {t["name"]: t for t in s["host"]["tasks"]}["reader"]
    t0, t1, _ = _window(s, rd)
    r_mb, w_mb = _disk_mb(s, t0, t1)
    dt = max(t1 - t0, 1e-9)
    return rd, dur, (r_mb + w_mb) / dt, r_mb / dt, w_mb / dt


def report_t1(p: Plan, rows: list, skipped: list, quick: bool) -> str:
    table, ours = [], {}
    for label, _ in rows:
        key = f"t1-{_key(label)}"
        s = p[key]
        rd, dur, agg, rs, ws = _t1_figures(p, key)
        ours[label] = (rd["elapsed_s"], agg)
        paper = PAPER_T1.get(label)
        verdict = "-" if paper is None else _time_verdict(rd, s, paper[0], dur) + "; " + _ratio_verdict(agg, paper[1], "throughput")
        table.append([label, f"{paper[0]:.0f}" if paper else "-", _time(rd, s, dur), f"{paper[1]:.0f}" if paper else "-",
                      f"{agg:.1f}", f"{rs:.1f}", f"{ws:.1f}", verdict])
    shape = _shape_t1(ours)
    if "t1-deadline-today" in p.results:
        rd, dur, agg, rs, ws = _t1_figures(p, "t1-deadline-today")
        shape += (f"\n\nSensitivity: deadline with today's writeback defaults (I/O-less throttling, dirty_ratio 20) "
                  f"instead of 2.6.9's: reader time {_time(rd, p['t1-deadline-today'], dur)} s, aggregate {agg:.1f} MB/s "
                  f"(reads {rs:.1f}, writes {ws:.1f}). The reader's time depends on how the writer's dirty pages reach "
                  "the queue (who writes them, in what bursts), not only on the scheduler.")
    if any(" (" in label for label, _ in rows):
        shape += ("\n\nThe stand-in row is C-LOOK with Iyer & Druschel's waits, with no deadlines: the writer's file lies "
                  "after the reader's on disk and always has requests ahead of the head, so (likely) the sweep rarely "
                  "wraps back to the reader's; the waits cannot change that. It shows a non-deadline elevator's "
                  "starvation, not LAS (whose read and write FIFOs have expiry times).")
    size = "50 MiB, 256 MiB of memory" if quick else "200 MiB, 1 GiB of memory"
    return (
        "## Table 1: streaming writes against a streaming read (section 5.4)\n\n"
        "Program 1, `while true; do dd if=/dev/zero of=file count=2048 bs=1M; done` (buffered: asynchronous writes "
        "by the flusher and by the throttled writer), beside program 2, `time cat 200mb-file > /dev/null` "
        f"({size}; the file is on disk, the cache cold), both started at 0. Reader time = cat's execution time; the "
        "throughputs are the disk's reads and writes while the reader runs (MB = 10^6 B), their sum the paper's "
        "aggregate disk throughput.\n\n"
        + markdown_table(["scheduler", "paper: reader time s", "ours: reader time s", "paper: aggregate MB/s",
                          "ours: aggregate MB/s", "ours: reads MB/s", "ours: writes MB/s", "verdict"], table)
        + "\n\n" + ("\n".join(skipped) + "\n\n" if skipped else "")
        + shape + "\n"
    )


def _shape_t1(ours: dict) -> str:
    d, las = ours.get("deadline"), ours.get("LAS")
    if d and las and d[0] and las[0]:
        return (f"The paper's claim (LAS: reader an order of magnitude faster, 32% more throughput than deadline): ours "
                f"{d[0] / las[0]:.1f}x faster, {100 * (las[1] / d[1] - 1):+.0f}% throughput (paper 12.9x, +32%).")
    return ("The paper's claim (LAS and CAS: the reader an order of magnitude faster than under deadline, 32% more "
            "throughput) needs LAS and CAS; under deadline each read waits behind a batch of the writer's requests.")


# -- Table 2: streaming reader against the chunk reader ------------------------------------

def _t2_scenario(sched: dict, quick: bool) -> dict:
    memory = 256 if quick else 1024
    big = 512 if quick else 2048  # larger than memory: every pass reads the disk
    duration = 400.0 if quick else 5400.0  # the paper's LAS took 4767 s
    host = _host(memory, [_tree("/linux", quick)], [{"path": "/big-file", "size_mib": big}], 1000)
    tasks = [
        {"name": "A", "command": "cat", "path": "/big-file", "loops": 0},
        {"name": "B", "command": "find-exec-cat", "path": "/linux"},
    ]
    return _scenario(sched, host, tasks, duration)


def plan_t2(p: Plan, rows: list, quick: bool) -> None:
    for label, sched in rows:
        p.add(f"t2-{_key(label)}", _t2_scenario(sched, quick))


def report_t2(p: Plan, rows: list, skipped: list, quick: bool) -> str:
    table = []
    for label, _ in rows:
        key = f"t2-{_key(label)}"
        s, dur = p[key], _run_duration(p, key)
        tasks = {t["name"]: t for t in s["host"]["tasks"]}
        b = tasks["B"]
        t0, t1, _ = _window(s, b)
        r_mb, w_mb = _disk_mb(s, t0, t1)
        dt = max(t1 - t0, 1e-9)
        agg = (r_mb + w_mb) / dt
        b_mb = (b["data_pages_read"] + b["meta_pages_read"]) * 4096 / 1e6 / dt
        paper = PAPER_T2.get(label)
        verdict = "-" if paper is None else _time_verdict(b, s, paper[0], dur) + "; " + _ratio_verdict(agg, paper[1], "throughput")
        table.append([label, f"{paper[0]:.0f}" if paper else "-", _time(b, s, dur), f"{paper[1]:.0f}" if paper else "-",
                      f"{agg:.1f}", f"{b_mb:.2f}", f"{agg - b_mb:.1f}", str(b["children"]), verdict])
    tree = ("111 directories, 1,776 files (about 22 MiB), 256 MiB of memory, a 512 MiB big-file" if quick else
            "1,111 directories, 17,776 files, lognormal sizes of mean 13 KiB (about 225 MiB: the Linux 2.6 source tree), "
            "1 GiB of memory, a 2 GiB big-file")
    return (
        "## Table 2: a streaming reader against a chunk reader (section 5.5)\n\n"
        "Program A, `while true; do cat big-file > /dev/null; done`, beside program B, `time find . -type f -exec cat "
        f"'{{}}' ';' > /dev/null` over a tree the size of the Linux source tree ({tree}; every cat a new process, "
        "fork + exec 1 ms). Program B's time, and the aggregate disk throughput while B runs (MB = 10^6 B; to the "
        "run's end when B did not finish).\n\n"
        + markdown_table(["scheduler", "paper: B time s", "ours: B time s", "paper: aggregate MB/s", "ours: aggregate MB/s",
                          "ours: B's reads MB/s", "ours: A's reads MB/s", "cat processes", "verdict"], table)
        + "\n\n" + ("\n".join(skipped) + "\n\n" if skipped else "")
        + "The paper: LAS anticipates for A's single process and never for B's short-lived cats, so B starves (4767 s) "
        "while the disk streams A (35 MB/s); deadline alternates between the two (B in 297 s, 9 MB/s); CAS "
        "anticipates for whichever process's request is near the head, B's next cat included (255 s, 34 MB/s).\n"
        + _las_t2_note(p, rows)
    )


def _las_t2_note(p: Plan, rows: list) -> str:
    """Why LAS of 2.6.9 starves B and LAS of 2.6.32 does not: their counters (which rule ended each wait)."""
    parts = []
    for label, _ in rows:
        if label.split(" (")[0] not in ("LAS", "LAS of Linux 2.6.32"):
            continue
        s = p[f"t2-{_key(label)}"]
        c = s.get("scheduler_counters", {})
        b = {t["name"]: t for t in s["host"]["tasks"]}["B"]
        fate = "B did not finish" if b["elapsed_s"] is None else f"B took {b['elapsed_s']:.0f} s"
        parts.append(f"{label.split(' (')[0]}: {fate}; anticipation waits {c.get('antic_waits', 0)}, ended by a close request "
                     f"{c.get('break_close', 0)}, by the timeout {c.get('antic_timeouts', 0)}; dispatch decisions where A's own "
                     f"next request was queued {c.get('break_same_process', 0)}; dispatches because the anticipated cat had exited {c.get('break_exited', 0)}")
    if not parts:
        return ""
    return ("\nWhy (mechanism, from the schedulers' counters): " + "; ".join(parts) + ". In 2.6.9 a request of another "
            "process ends LAS's anticipation only if it lies within 32 KiB of A's last request (growing to 1 MiB after 6 ms "
            "of waiting) or nearer than A's own mean seek distance; A's streaming keeps its next request queued, so LAS "
            "dispatches A in elevator order and B's cat is served only when its read expires in the FIFO (125 ms, checked "
            "at most once per 125 ms): about two expiries per file, 17,776 files. In 2.6.32 the window starts at 4 MiB and "
            "grows to 256 MiB, and a close request updates A's seek history, so B's requests near the head end the waits: "
            "no starvation (docs/schedulers/las.md).\n")


# -- Table 3 and Figure 3: one and two chunk readers ----------------------------------------

def _t3_scenario(sched: dict, instances: int, quick: bool) -> dict:
    paths = ["/linux-1", "/linux-2"][:instances]
    host = _host(256 if quick else 1024, [_tree(p, quick) for p in ["/linux-1", "/linux-2"]], [], None)
    tasks = [{"name": f"B{i + 1}", "command": "find-exec-cat", "path": path} for i, path in enumerate(paths)]
    return _scenario(sched, host, tasks, 600.0 if quick else 3600.0)


def plan_t3(p: Plan, rows: list, quick: bool) -> None:
    for label, sched in rows:
        for n in (1, 2):
            p.add(f"t3-{_key(label)}-{n}", _t3_scenario(sched, n, quick))


def _t3_figures(p: Plan, key: str) -> Tuple[float, float, bool]:
    """(aggregate MB/s from the first start to the last exit, that time, whether all finished;
    unfinished: over the run's duration)."""
    s = p[key]
    tasks = s["host"]["tasks"]
    done = all(t["elapsed_s"] is not None for t in tasks)
    end = max((t["start_s"] or 0) + t["elapsed_s"] for t in tasks) if done else _run_duration(p, key)
    mb = sum((t["data_pages_read"] + t["meta_pages_read"]) * 4096 for t in tasks) / 1e6
    return mb / max(end, 1e-9), end, done


def report_t3(p: Plan, rows: list, skipped: list, out: Path, quick: bool) -> str:
    table, fig = [], {}
    for label, _ in rows:
        one, t_one, d1 = _t3_figures(p, f"t3-{_key(label)}-1")
        two, t_two, d2 = _t3_figures(p, f"t3-{_key(label)}-2")
        fig[label] = (one, two)
        paper = PAPER_T3.get(label)
        verdict = "-"
        if paper:
            verdict = (_ratio_verdict(one, paper[0], "one") + "; " + _ratio_verdict(two, paper[1], "two")
                       + f"; two/one {two / one:.2f} (paper {paper[1] / paper[0]:.2f})")
        ft = lambda t, d: f"{t:.1f}" if d else f"> {t:.0f}"  # noqa: E731
        table.append([label, f"{paper[0]:.1f}" if paper else "-", f"{one:.1f}", f"{paper[1]:.1f}" if paper else "-",
                      f"{two:.1f}", ft(t_one, d1), ft(t_two, d2), f"{t_two / t_one:.1f}" if d1 and d2 else "-", verdict])
    plot = _figure3(fig, out / "figure3.png")
    tree = "111 directories, 1,776 files each" if quick else "1,111 directories, 17,776 files, about 225 MiB each"
    return (
        "## Table 3 and Figure 3: one and two chunk readers (section 5.6)\n\n"
        f"`find . -type f -exec cat '{{}}' ';'` over one source tree, then two instances at once over two disjoint "
        f"trees ({tree}; /linux-1 then /linux-2, laid out one after the other). Aggregate throughput = the pages the "
        "instances read (data and metadata) over the time to the last one's exit (MB = 10^6 B).\n\n"
        + markdown_table(["scheduler", "paper: 1 instance MB/s", "ours: 1 instance MB/s", "paper: 2 instances MB/s",
                          "ours: 2 instances MB/s", "ours: 1 instance s", "ours: 2 instances s", "ours: time factor",
                          "verdict"], table)
        + "\n\n" + ("\n".join(skipped) + "\n\n" if skipped else "")
        + f"![Figure 3]({plot.name})\n\n"
        "The paper: with two instances deadline and LAS seek back and forth between the trees (execution time x7); CAS "
        "keeps serving the tree whose cats' requests are near the head (x2.5 for twice the data).\n"
    )


def _figure3(ours: dict, path: Path) -> Path:
    from ..plots import _pyplot

    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, (title, data) in zip(axes, [("Seelam et al. 2005, Table 3", PAPER_T3), ("ours (simulated host)", ours)]):
        labels = list(data)
        xs = range(len(labels))
        w = 0.38
        b1 = ax.bar([x - w / 2 for x in xs], [data[k][0] for k in labels], w, label="1 instance")
        b2 = ax.bar([x + w / 2 for x in xs], [data[k][1] for k in labels], w, label="2 instances")
        ax.bar_label(b1, fmt="%.1f", fontsize=7)
        ax.bar_label(b2, fmt="%.1f", fontsize=7)
        ax.set_xticks(list(xs), [k.split(" (")[0] + (" *" if " (" in k else "") for k in labels], fontsize=8)
        ax.set_title(title, fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("aggregate throughput (MB/s)")
    axes[1].legend(fontsize=8)
    if any(" (" in k for k in ours):
        fig.text(0.5, 0.01, "* stand-in: Iyer & Druschel's anticipatory framework over C-LOOK, not LAS", ha="center", fontsize=8)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# -- Table 4: FFSB's web, mail, file server and metadata profiles (sections 5.1, 5.7-5.10) ------

# Table 4's five schedulers, in the paper's row order. `cfq` follows Linux ~4.4's CFQ (slices,
# service trees, idling), not 2.6.9's unsliced round-robin CFQ that the paper ran.
T4_SCHEDULERS: List[Tuple[str, dict]] = [  # LAS and CAS of the paper's kernel, as in SCHEDULERS
    ("deadline", {"name": "deadline"}),
    ("LAS", {"name": "las-2.6.9"}),
    ("CAS", {"name": "cas-2.6.9"}),
    ("CFQ", {"name": "cfq"}),
    ("noop", {"name": "noop"}),
]
# (key, column title, operation weights: FFSB's read/write/create/append/delete).
T4_PROFILES: List[Tuple[str, str, dict]] = [
    ("web", "Web server", {"read": 1}),                               # 5.7: random reads of whole files
    ("mail", "Mail server", {"read": 40, "create": 40, "delete": 20}),  # 5.9
    ("file", "File server", {"read": 80, "write": 20}),               # 5.8
    ("meta", "MetaData", {"create": 40, "append": 40, "delete": 20}),  # 5.10: no reads
]
PAPER_T4 = {  # seconds: web, mail, file, meta
    "deadline": (924.0, 118.0, 1127.0, 305.0),
    "LAS": (863.0, 177.0, 916.0, 295.0),
    "CAS": (855.0, 109.0, 890.0, 288.0),
    "CFQ": (931.0, 112.0, 1099.0, 253.0),
    "noop": (910.0, 125.0, 1127.0, 319.0),
}


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


def _t4_scenario(sched: dict, weights: dict, quick: bool) -> dict:
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
    return _scenario(sched, host, tasks, 600.0 if quick else 20_000.0)


# A sensitivity run, not in the paper: the web profile with 64 KiB read()s (every file, at most
# 64 KiB, in one read() and so in one readahead window) under deadline and CAS, to show how much of
# the gap between them comes from each file being read in several requests.
T4_WHOLE_READ_KIB = 64


def plan_t4(p: Plan, known: set, quick: bool) -> None:
    rows, _ = t4_rows(known)
    for label, sched in rows:
        for key, _, weights in T4_PROFILES:
            p.add(f"t4-{key}-{_key(label)}", _t4_scenario(sched, weights, quick))
    for label, sched in rows:
        if label in ("deadline", "CAS"):
            scn = _t4_scenario(sched, T4_PROFILES[0][2], quick)
            scn["task"][0]["ffsb"]["read_bs_kib"] = T4_WHOLE_READ_KIB
            p.add(f"t4-web-{_key(label)}-read{T4_WHOLE_READ_KIB}", scn)


def _t4_rank(times: list) -> str:
    """`a < b ≈ c`: fastest first, ≈ between times within 1% of each other."""
    out = ""
    prev = None
    for t, lb in sorted(times):
        if prev is not None:
            out += " ≈ " if t <= prev * 1.01 else " < "
        out += lb
        prev = t
    return out


def _t4_time(p: Plan, key: str) -> Optional[float]:
    """The FFSB process's execution time (None: the run's end stopped it)."""
    task = {t["name"]: t for t in p[key]["host"]["tasks"]}["ffsb"]
    return task["elapsed_s"]


def report_t4(p: Plan, known: set, quick: bool) -> str:
    rows, skipped = t4_rows(known)
    ours: dict = {}
    for label, _ in rows:
        for key, _, _ in T4_PROFILES:
            ours[(label, key)] = _t4_time(p, f"t4-{key}-{_key(label)}")
    table = []
    for label, _ in rows:
        paper = PAPER_T4[label]
        cells = [label]
        for i, (key, _, _) in enumerate(T4_PROFILES):
            t = ours[(label, key)]
            k = f"t4-{key}-{_key(label)}"
            cells += [f"{paper[i]:.0f}", f"{t:.1f}" if t is not None else f"> {_run_duration(p, k):.0f} (not finished)"]
        table.append(cells)
    head = ["scheduler"]
    for _, title, _ in T4_PROFILES:
        head += [f"paper: {title} s", f"ours: {title} s"]
    labels = [label for label, _ in rows]
    rank_lines = []
    for i, (key, title, _) in enumerate(T4_PROFILES):
        done = [(ours[(lb, key)], lb) for lb in labels if ours[(lb, key)] is not None]
        mine = _t4_rank(done)
        theirs = _t4_rank([(PAPER_T4[lb][i], lb) for lb in labels])
        rank_lines.append(f"- {title}: ours {mine or '-'}; paper (same schedulers) {theirs}.")
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
        "append 40, delete 20. Times are the FFSB process's execution time (seconds), a cold cache.\n\n"
        + markdown_table(head, table)
        + "\n\n" + ("\n".join(skipped) + "\n\n" if skipped else "")
        + "Rankings (fastest first):\n\n" + "\n".join(rank_lines) + "\n\n"
        + _t4_claims(ours, labels) + "\n\n" + _t4_sensitivity(p, labels) + T4_NOTE + "\n"
    )


def _t4_sensitivity(p: Plan, labels: list) -> str:
    keys = {lb: f"t4-web-{_key(lb)}-read{T4_WHOLE_READ_KIB}" for lb in ("deadline", "CAS") if lb in labels}
    if not keys:
        return ""
    got = {lb: _t4_time(p, k) for lb, k in keys.items()}
    base = {lb: _t4_time(p, f"t4-web-{_key(lb)}") for lb in keys}
    parts = [f"{lb} {fmt_s(got[lb])} s (4 KiB read()s: {fmt_s(base[lb])} s)" for lb in keys]
    gap = ""
    if all(got.get(lb) and base.get(lb) for lb in ("deadline", "CAS")):
        gap = (f" Deadline's time over CAS's: {got['deadline'] / got['CAS']:.2f}x with whole-file reads, "
               f"{base['deadline'] / base['CAS']:.2f}x with 4 KiB reads.")
    return (f"Sensitivity (not in the paper): the web profile with {T4_WHOLE_READ_KIB} KiB read()s, each file in one "
            f"read() and so in one readahead window and one request: " + "; ".join(parts) + "." + gap + "\n\n")


def fmt_s(t: Optional[float]) -> str:
    return "-" if t is None else f"{t:.1f}"


def _t4_claims(ours: dict, labels: list) -> str:
    out = ["The paper's claims, checked:"]
    for key, title, _ in T4_PROFILES[:3]:
        done = {lb: ours[(lb, key)] for lb in labels if ours[(lb, key)] is not None}
        if "CAS" not in done:
            out.append(f"- CAS best on {title}: not checked (CAS not run or not finished).")
            continue
        best = min(done, key=done.get)
        behind = done["CAS"] / done[best] - 1
        # Within 1%: the paper's own LAS-CAS gap on the web server (LAS "trails the CAS by less than 1%").
        verdict = "yes" if best == "CAS" else ("tied (within 1%)" if behind < 0.01 else "no")
        out.append(f"- CAS best on {title}: {verdict} (ours: {best} best"
                   + ("" if best == "CAS" else f", CAS {100 * behind:+.1f}%") + ").")
    las, cas = ours.get(("LAS", "mail")), ours.get(("CAS", "mail"))
    if las and cas:
        out.append(f"- LAS trails CAS on the mail server by 62%: ours {100 * (las / cas - 1):+.1f}%.")
    else:
        out.append("- LAS trails CAS on the mail server by 62%: not checked (LAS or CAS not run).")
    if "CFQ" in labels:
        done = {lb: ours[(lb, "meta")] for lb in labels if ours[(lb, "meta")] is not None}
        best = min(done, key=done.get) if done else None
        out.append(f"- CFQ best on MetaData: {'yes' if best == 'CFQ' else 'no'} (ours: {best} best).")
    else:
        out.append("- CFQ best on MetaData: not checked (no CFQ scheduler yet).")
    return "\n".join(out)


T4_NOTE = (
    "Where the paper is silent, FFSB's and Filebench's personalities decide (docs/reproductions/seelam2005/"
    "table4.md): reads are whole files in 4 KiB read()s (FFSB's readall); a write overwrites 4 KiB at a random "
    "4 KiB-aligned offset inside the file; create writes the new file's whole size (uniform 4-64 KiB) in 4 KiB "
    "writes; append adds 4 KiB at the end; delete unlinks (inode and blocks freed and reused, cached pages "
    "dropped, dirty ones never written); no fsync (FFSB's default). The four threads are tasks of one process, "
    "each with its own pid for the scheduler: Linux 2.6.9 gives every task its own io_context (CLONE_IO came in "
    "2.6.25), so LAS and CAS keep think-time and seek statistics per thread. ext3's journal is not modelled: "
    "metadata (directory, inode table, bitmap blocks) is written back in place by the flusher like data, not "
    "committed to a journal every 5 s."
)


# -- entry point ----------------------------------------------------------------------------

HOST_NOTE = (
    "The host: the paper's machine (section 5.2) had 1 GB of memory, one processor used (a 2.28 GHz Pentium 4 Xeon), "
    "Linux 2.6.9, and an external 7,200 rpm Maxtor 20 GB IDE disk with ext3, remounted before every run. Here: "
    "`memory_mib` = 1024 (the page cache is the whole memory: processes' own memory is not modelled), `cpus` = 1, "
    "`fs = \"ext3\"` (laid out as ext2: no journal) on the first 20 GiB of the disk (`fs_mib` = 20480), a cold cache, "
    "Linux 2.6.9's vm defaults (dirty_background_ratio 10, dirty_ratio 40, read_ahead_kb 128) with 2.6's "
    "balance_dirty_pages (`dirty_throttle = \"2.6\"`), and Linux 2.6's block layer (`[block]`, legacy request lists, "
    "128 requests per direction, plugging and merging). The readahead is today's on-demand algorithm, not 2.6.9's. "
    f"The device is `{DEVICE}` (Maxtor DiamondMax 10, 7200 rpm PATA, no command queueing, 2 MB cache, 55 -> 30 MB/s): "
    "of `iosched list devices`, the one of the paper's maker, interface, speed and era; the IBM Deskstar 34GXP "
    "(22 MB/s) could not reach the paper's 33-35 MB/s, the 7L250S0 is SATA with NCQ. It holds 82 GB, four times the "
    "paper's disk: the file system spans its outer 20 GiB, so seeks across the file system are shorter than a 20 GB "
    "drive's full stroke and its media rate is the outer zones' (about 50 MB/s)."
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
    ran = ", ".join(f"`{s['name']}`" for _, s in rows)
    sections = [
        "# Seelam et al. 2005: the anticipatory schedulers' microbenchmarks\n\n"
        "Seelam, Romero, Teller & Buros, \"Enhancements to Linux I/O scheduling\", Ottawa Linux Symposium 2005, "
        "section 5 (Tables 1-4, Figure 3) on the simulated host, and section 6 (Figure 5, the adaptive scheduler) on "
        "simulated RAID-0 arrays. Generated by `iosched reproduce seelam2005`"
        f"{' --quick' if quick else ''}: {len(p.results)} runs in {wall:.1f} s (every scenario in scenarios/). "
        f"Schedulers run: {ran}.\n\n"
        + ("Not run:\n\n" + "\n".join(skipped) + "\n\n" if skipped else "")
        + HOST_NOTE + " A time shown as \"> N\" is a program the run's end stopped (its duration) before it finished.\n",
        report_t1(p, rows, skipped, quick),
        report_t2(p, rows, skipped, quick),
        report_t3(p, rows, skipped, out, quick),
        report_t4(p, known, quick),
        selection.report_f5(p, out, quick, known, f5_skipped),
    ]
    report = out / "report.md"
    report.write_text("\n".join(sections))
    return report
