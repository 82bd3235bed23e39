"""`iosched reproduce valente2014`: Valente 2014, "New version of BFQ, benchmark suite and experimental
results" (technical report; SYSTOR '12 extended): the S benchmark suite on the simulated host (issue 14).

- Aggregate throughput (section 7.2, Figure 3): the background workloads 10r-seq, 10r-rand,
  5r5w-seq, 5r5w-rand (greedy readers and writers on private 5 GB files; writers through the page
  cache) for 120 s, measured after the first 20 s, and the first 15 s second by second.
- Responsiveness (section 7.3, Figures 5-6): the start-up time of applications under each
  workload, replayed from the S suite's real start-up traces (xterm, gnome-terminal, LibreOffice
  Writer; the paper's bash and konsole traces are not in the suite), with the throughput meanwhile.
- NCQ (section 7.3.2, Table 2): the same start-ups with the drive queueing 32 commands.
- Video playback (section 7.4, Figure 7): frames dropped while a command starts every 3 s.
- Code development (section 7.5, Figures 8-9): make -j5 and git checkout progress under load.
- Fairness (section 6, the suite's fairness benchmark): weights 1:2 and 1:1:3 between sequential
  readers whatever the budgets, and cgroup weights.

Schedulers: BFQ+ (`bfq-plus`), BFQ (`bfq-original`), CFQ (`cfq`, Linux ~4.4's: the paper ran
2.6.34's), and, beyond the paper, today's Linux BFQ (`bfq`), deadline and noop. The traces are read
from the directory given at run time (`--traces`, default `$IOSCHED_S_TRACES` or ../shared/traces);
sections that need them are skipped with a line in the report when they are absent. Every point is a
generated scenario (kept in OUT/scenarios/); the runs go through the pool.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

from ..pool import Pool
from .block import Plan
from .seelam2005 import registered_names
from .sweep import markdown_table

PAPER_DISK = "maxtor-stm332061"  # the third system (Table 1): 320 GB, 89 MB/s, no NCQ, ext4
NCQ_DISK = "maxtor-7l250s0"  # the second system: 250 GB, 61 MB/s, NCQ
VIDEO_DISK = "maxtor-6l080l0"  # the first system: 82 GB, 55 MB/s, no NCQ
WORKLOADS = ["10r-seq", "10r-rand", "5r5w-seq", "5r5w-rand"]
APPS = [("xterm", "xterm"), ("gnometerm", "gnome-terminal"), ("lowriter", "LibreOffice Writer")]

# (label, [[scheduler]] table). The paper's three first; then today's Linux schedulers.
BFQ_PLUS = ("BFQ+", {"name": "bfq-plus"})
BFQ_ORIG = ("BFQ", {"name": "bfq-original"})
CFQ = ("CFQ", {"name": "cfq"})
LINUX_BFQ = ("bfq (Linux 6.x)", {"name": "bfq"})
DEADLINE = ("deadline", {"name": "deadline"})
NOOP = ("NOOP", {"name": "noop"})
THROUGHPUT_SCHEDS = [BFQ_PLUS, BFQ_ORIG, CFQ, LINUX_BFQ, DEADLINE, NOOP]
STARTUP_SCHEDS = [BFQ_PLUS, BFQ_ORIG, CFQ, LINUX_BFQ]
NCQ_SCHEDS = [BFQ_PLUS, BFQ_ORIG, CFQ, NOOP, LINUX_BFQ]
VIDEO_SCHEDS = [BFQ_PLUS, BFQ_ORIG, CFQ, LINUX_BFQ]

# The paper's numbers quoted in its text (the figures' bars have no printed values).
PAPER_SEQ_GAIN_OVER_CFQ = 0.24  # 7.2.1: BFQ+ and BFQ about 24% above CFQ on 10r-seq and 5r5w-seq
PAPER_CFQ_SHORT_MB_S = 59.6  # 7.2.1: CFQ's mean over the first 15 s
PAPER_STARTUP_GAIN = (8.0, 9.0)  # 7.3.1: BFQ+ up to 8x (bash) / 9x (konsole) lower than CFQ and BFQ
PAPER_TABLE2 = {  # NCQ start-up ranges, seconds: (bash min, max, konsole min, max)
    "BFQ+": (0.27, 0.32, 10.7, 196.0),
    "BFQ": (0.51, 0.74, 30.9, 188.0),
    "CFQ": (1.05, 7.44, 14.7, 2940.0),
    "NOOP": (6.19, 10.8, 1.55, 408.0),
}
PAPER_VIDEO_RATIO = 1.6  # 7.4: BFQ+'s frame-drop rate at most 1.6x CFQ's


def traces_dir(given: Optional["str | Path"] = None) -> Path:
    if given:
        return Path(given)
    env = os.environ.get("IOSCHED_S_TRACES")
    if env:
        return Path(env)
    return Path("../shared/traces")


def _trace(dirpath: Path, app: str) -> Optional[Path]:
    p = dirpath / f"s_startup_{app}.trace"
    return p.resolve() if p.is_file() else None


# -- scenarios --------------------------------------------------------------------------------

def _scenario(device: str, qd: int, sched: dict, tasks: list, duration_s: float, memory_mib: int = 1024) -> dict:
    return {
        "device": {"preset": device, "queue_depth": qd},
        # Linux's block layer (the paper's 2.6.34: legacy request lists, plugging, merging).
        "block": {},
        "host": {"memory_mib": memory_mib, "fs": "ext3", "sample_ms": 1000},
        "task": tasks,
        "scheduler": [sched],
        "run": {"duration_s": duration_s, "seed": 1},
    }


def _background(workload: str) -> dict:
    return {"name": "background", "command": "s-background", "workload": workload}


def _key(*parts: str) -> str:
    """A file-name key; a scheduler label maps through its scheduler's name ("BFQ+" and "BFQ"
    would both be "bfq" otherwise)."""
    names = {label: sched["name"] for label, sched in THROUGHPUT_SCHEDS + NCQ_SCHEDS}
    parts = tuple(names.get(p, p) for p in parts)
    return "-".join("".join(c if c.isalnum() else "-" for c in p.lower()).strip("-") for p in parts)


def _timeline(s: dict) -> list:
    return (s.get("host") or {}).get("timeline") or []


def _disk_mb(s: dict, t0: float, t1: float) -> float:
    """MB (10^6 B) the disk read and wrote between t0 and t1 (from the per-second timeline)."""
    tl = _timeline(s)

    def at(t: float) -> float:
        prev_t, prev_v = 0.0, 0.0
        for x in tl:
            v = x["disk_read_mib"] + x["disk_written_mib"]
            if x["t_s"] >= t:
                dt = x["t_s"] - prev_t
                return prev_v if dt <= 0 else prev_v + (v - prev_v) * (t - prev_t) / dt
            prev_t, prev_v = x["t_s"], v
        return prev_v

    return (at(t1) - at(t0)) * 2**20 / 1e6


def _per_second(s: dict, seconds: int) -> List[float]:
    return [_disk_mb(s, t, t + 1) for t in range(seconds)]


def _task(s: dict, name: str) -> Optional[dict]:
    for t in (s.get("host") or {}).get("tasks") or []:
        if t["name"] == name:
            return t
    return None


def _fmt(x: Optional[float], digits: int = 1) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


# -- 7.2 aggregate throughput -----------------------------------------------------------------

def _long_s(quick: bool) -> Tuple[float, float]:
    return (12.0, 4.0) if quick else (120.0, 20.0)


def _short_s(quick: bool) -> int:
    return 6 if quick else 15


def plan_throughput(p: Plan, scheds: list, quick: bool) -> None:
    long_s, _ = _long_s(quick)
    for wl in WORKLOADS:
        for label, sched in scheds:
            p.add(_key("tp", wl, label), _scenario(PAPER_DISK, 1, sched, [_background(wl)], long_s))
            p.add(_key("tp-short", wl, label), _scenario(PAPER_DISK, 1, sched, [_background(wl)], _short_s(quick)))
    # The disk's peak rate as the host sees it: one greedy sequential reader alone.
    p.add("tp-peak", _scenario(PAPER_DISK, 1, {"name": "noop"}, [
        {"name": "reader", "command": "seq-read", "path": "/peak"}], long_s / 4))


def report_throughput(p: Plan, scheds: list, out: Path, quick: bool) -> str:
    long_s, skip_s = _long_s(quick)
    short = _short_s(quick)
    peak = _disk_mb(p["tp-peak"], 1, long_s / 4) / (long_s / 4 - 1)
    mb: Dict[Tuple[str, str], float] = {}
    ramp: Dict[Tuple[str, str], List[float]] = {}
    rows = []
    for label, _ in scheds:
        row = [label]
        for wl in WORKLOADS:
            v = _disk_mb(p[_key("tp", wl, label)], skip_s, long_s) / (long_s - skip_s)
            mb[(label, wl)] = v
            ramp[(label, wl)] = _per_second(p[_key("tp-short", wl, label)], short)
            row.append(f"{v:.1f}")
        rows.append(row)
    text = [
        "## Aggregate throughput (section 7.2, Figure 3)\n",
        f"The four background workloads on `{PAPER_DISK}` (no command queueing), {long_s:.0f} s, MB/s read and written by "
        f"the disk after the first {skip_s:.0f} s. The disk's peak rate as the host sees it (one greedy sequential "
        f"reader alone, noop): **{peak:.1f} MB/s** (the paper's Table 1: 89 MB/s).\n",
        markdown_table(["scheduler"] + WORKLOADS, rows),
        "",
    ]
    verdicts = []
    if ("BFQ+", "10r-seq") in mb and ("CFQ", "10r-seq") in mb:
        for wl in ["10r-seq", "5r5w-seq"]:
            for lab in ["BFQ+", "BFQ"]:
                gain = mb[(lab, wl)] / mb[("CFQ", wl)] - 1 if mb[("CFQ", wl)] > 0 else float("nan")
                ok = gain >= PAPER_SEQ_GAIN_OVER_CFQ / 2
                verdicts.append([f"{lab} over CFQ, {wl}", f"+{PAPER_SEQ_GAIN_OVER_CFQ:.0%}", f"{gain:+.0%}",
                                 "reproduced" if ok else ("same direction, smaller" if gain > 0 else "not reproduced")])
        close = mb[("BFQ+", "10r-seq")] / peak
        verdicts.append(["BFQ+ with 10r-seq against the peak rate", "close to the peak", f"{close:.0%} of {peak:.1f} MB/s",
                         "reproduced" if close >= 0.85 else "not reproduced"])
        r = ramp[("BFQ+", "10r-seq")]
        top = mb[("BFQ+", "10r-seq")]
        first = next((i + 1 for i, v in enumerate(r) if v >= 0.9 * top), None)
        verdicts.append(["BFQ+ reaches its top throughput (90% of the long run's)", "within 1-2 s",
                         f"second {first}" if first else f"not within {short} s",
                         "reproduced" if first is not None and first <= 2 else "not reproduced"])
        cfq15 = sum(ramp[("CFQ", "10r-seq")]) / short
        verdicts.append([f"CFQ's mean over the first {short} s, 10r-seq", f"{PAPER_CFQ_SHORT_MB_S} MB/s", f"{cfq15:.1f} MB/s",
                         f"{cfq15 / PAPER_CFQ_SHORT_MB_S:.2f}x the paper's (disks differ: ours peaks at {peak:.0f} MB/s)"])
        text += ["The paper's claims, its metric (aggregate MB/s):\n",
                 markdown_table(["claim", "paper", "ours", "verdict"], verdicts), ""]
    fig = _ramp_figure(ramp, [lab for lab, _ in scheds], short, out / "throughput_first_seconds.png")
    text.append(f"The first {short} s, second by second: ![first seconds]({fig.name})\n")
    return "\n".join(text)


def _ramp_figure(ramp: dict, labels: list, seconds: int, path: Path) -> Path:
    from ..plots import _pyplot

    plt = _pyplot()
    fig, axes = plt.subplots(1, len(WORKLOADS), figsize=(14, 3.4), sharey=True)
    for ax, wl in zip(axes, WORKLOADS):
        for lab in labels:
            ys = ramp.get((lab, wl))
            if ys:
                ax.plot(range(1, seconds + 1), ys, marker=".", label=lab)
        ax.set_title(wl, fontsize=10)
        ax.set_xlabel("time since the start (s)")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("disk MB/s in that second")
    axes[-1].legend(fontsize=7)
    fig.suptitle(f"Throughput in each of the first {seconds} s, per workload (Valente 2014, section 7.2)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


# -- 7.3 responsiveness -----------------------------------------------------------------------

def _iterations(quick: bool) -> int:
    return 1 if quick else 3


def _startup_tasks(trace: Path, workload: Optional[str], quick: bool, s_code: bool = False) -> list:
    app = {"name": "app", "command": "replay-startup", "trace": str(trace), "iterations": _iterations(quick),
           "ends_run": True}
    if s_code:
        # As S's replay-startup-io is compiled: no sleeps between requests, readahead lines
        # submitted asynchronously (docs/s-suite.md).
        app.update(deltas=False, async_ra=True)
    if workload is None:
        return [app]
    # The background starts first and reaches its pace (S starts the workload, then the command).
    app["start_ms"] = 2000.0
    return [_background(workload), app]


def _startup_cap_s(quick: bool, ncq: bool) -> float:
    if quick:
        return 60.0
    return 300.0


def plan_startup(p: Plan, scheds: list, traces: Dict[str, Path], quick: bool, ncq: bool = False,
                 s_code: bool = False) -> None:
    device, qd = (NCQ_DISK, 32) if ncq else (PAPER_DISK, 1)
    cap = _startup_cap_s(quick, ncq)
    apps = [a for a in APPS if a[0] in traces]
    if ncq:
        apps = [a for a in apps if a[0] in ("xterm", "lowriter")]
    tag = "ncq" if ncq else ("sc" if s_code else "su")
    for app, _ in apps:
        p.add(_key(tag, app, "idle"),
              _scenario(device, qd, {"name": "bfq-plus"}, _startup_tasks(traces[app], None, quick, s_code), cap))
        for wl in WORKLOADS:
            for label, sched in scheds:
                p.add(_key(tag, app, wl, label), _scenario(device, qd, sched, _startup_tasks(traces[app], wl, quick, s_code), cap))


def _startup_time(s: dict) -> Tuple[Optional[float], bool]:
    """Mean start-up time over the iterations done; finished = every iteration done."""
    t = _task(s, "app")
    if not t:
        return None, False
    its = t.get("iterations_s") or []
    if not its:
        return None, False
    return sum(its) / len(its), t.get("elapsed_s") is not None


def report_startup(p: Plan, scheds: list, traces: Dict[str, Path], out: Path, quick: bool, s_code: bool = False) -> str:
    tag = "sc" if s_code else "su"
    if s_code:
        text = ["### The same with S's replayer as it is compiled\n"]
    else:
        text = ["## Responsiveness: application start-up (section 7.3.1, Figures 5-6)\n"]
    apps = [a for a in APPS if a[0] in traces]
    if not apps:
        return text[0] + "\nNot run: no S start-up trace found (give `--traces DIR`).\n"
    cap = _startup_cap_s(quick, False)
    if s_code:
        text.append(
            "S's replay-startup-io as compiled does not sleep the recorded gaps and submits readahead lines "
            "asynchronously (docs/s-suite.md): the start-up is the I/O alone, and there are no gaps longer than "
            "slice_idle for the idle timer to end a slot on. Same runs otherwise.\n")
    else:
        text.append(
            f"Each trace replayed as the traces' README describes S's replay-startup-io (one request at a time per original "
            f"process, O_DIRECT, the recorded gap slept before each request), {_iterations(quick)} iteration(s) with the page "
            f"cache dropped and S's pause between, starting 2 s after the background workload, on `{PAPER_DISK}`. Mean "
            f"start-up time in seconds (\">\" = not finished within {cap:.0f} s), and in parentheses the disk's aggregate "
            "MB/s during the test.\n")
    gains = {}
    for app, title in apps:
        idle, _ = _startup_time(p[_key(tag, app, "idle")])
        rows = []
        for label, _ in scheds:
            row = [label]
            for wl in WORKLOADS:
                s = p[_key(tag, app, wl, label)]
                t, done = _startup_time(s)
                mbs = _disk_mb(s, 0, s["elapsed_s"]) / max(s["elapsed_s"], 1e-9)
                shown = f"> {cap:.0f}" if t is None else f"{'' if done else '> '}{t:.2f}"
                row.append(f"{shown} ({mbs:.0f})")
                if t is not None:
                    gains.setdefault((app, label), []).append((wl, t))
            rows.append(row)
        text += [f"{'####' if s_code else '###'} {title} (idle disk: {_fmt(idle, 2)} s)\n",
                 markdown_table(["scheduler"] + WORKLOADS, rows), ""]
    # Claims.
    verdicts = []
    for app, title in apps:
        plus = dict(gains.get((app, "BFQ+"), []))
        for other in ["CFQ", "BFQ"]:
            o = dict(gains.get((app, other), []))
            ratios = [o[w] / plus[w] for w in WORKLOADS if w in o and w in plus and plus[w] > 0]
            if ratios:
                best = max(ratios)
                verdicts.append([f"{title}: BFQ+ faster than {other} by up to", "8-9x", f"{best:.1f}x",
                                 "reproduced" if best >= 6 else ("same direction, smaller" if best > 1 else "not reproduced")])
        idle, _ = _startup_time(p[_key(tag, app, "idle")])
        if plus and idle:
            worst = max(plus.values()) / idle
            verdicts.append([f"{title}: BFQ+ loaded against the idle disk", "close to idle", f"{worst:.1f}x idle (worst workload)",
                             "reproduced" if worst <= 2.5 else "not reproduced"])
    text += ["The paper's claims (its metric: start-up time; \"8x lower\" = CFQ's time / BFQ+'s):\n",
             markdown_table(["claim", "paper", "ours", "verdict"], verdicts), ""]
    return "\n".join(text)


def report_ncq(p: Plan, scheds: list, traces: Dict[str, Path], quick: bool) -> str:
    text = ["## Start-up with NCQ (section 7.3.2, Table 2)\n"]
    apps = [a for a in APPS if a[0] in traces and a[0] in ("xterm", "lowriter")]
    if not apps:
        return text[0] + "\nNot run: no S start-up trace found.\n"
    cap = _startup_cap_s(quick, True)
    text.append(
        f"`{NCQ_DISK}` with the drive queueing 32 commands (rotational-position order), otherwise as above: the range "
        f"(min - max over the four workloads) of the mean start-up time, seconds (\">\" = not finished in {cap:.0f} s). "
        "The paper's Table 2 has bash (small) and konsole (large); the S suite's traces here are xterm (small) and "
        "LibreOffice Writer (large).\n")
    rows = []
    for label, _ in scheds:
        row = [label]
        for app, _title in apps:
            vals = []
            for wl in WORKLOADS:
                t, done = _startup_time(p[_key("ncq", app, wl, label)])
                vals.append((t if t is not None else cap, done))
            lo, hi = min(v for v, _ in vals), max(v for v, _ in vals)
            open_end = any(not d for _, d in vals)
            row.append(f"{lo:.2f} - {'> ' if open_end else ''}{hi:.2f}")
        paper = PAPER_TABLE2.get(label)
        row.append(f"{paper[0]} - {paper[1]}" if paper else "-")
        row.append(f"{paper[2]} - {paper[3]}" if paper else "-")
        rows.append(row)
    text.append(markdown_table(["scheduler"] + [t for _, t in apps] + ["paper: bash", "paper: konsole"], rows))
    text.append("")
    return "\n".join(text)


# -- 7.4 video playback -----------------------------------------------------------------------

def _video_s(quick: bool) -> float:
    return 14.0 if quick else 30.0


def plan_video(p: Plan, scheds: list, traces: Dict[str, Path], quick: bool) -> None:
    if "xterm" not in traces:
        return
    clip = _video_s(quick)
    for wl in WORKLOADS:
        for label, sched in scheds:
            tasks = [
                _background(wl),
                {"name": "video", "command": "video", "path": "/clip.mp4", "fps": 27.0, "clip_s": clip},
                {"name": "command", "command": "periodic", "trace": str(traces["xterm"]), "period_s": 3.0,
                 "start_after_s": 10.0 if not quick else 4.0},
            ]
            p.add(_key("video", wl, label), _scenario(VIDEO_DISK, 1, sched, tasks, clip + 1.0))


def report_video(p: Plan, scheds: list, traces: Dict[str, Path], quick: bool) -> str:
    text = ["## Video playback (section 7.4, Figure 7)\n"]
    if "xterm" not in traces:
        return text[0] + "\nNot run: the xterm start-up trace was not found.\n"
    clip = _video_s(quick)
    window = 20.0 if not quick else clip - 4.0
    text.append(
        f"`{VIDEO_DISK}` (the paper's slowest disk): a {clip:.0f} s clip at 27 frames/s read through the page cache, a frame "
        f"dropped when its data is not read by its display time; xterm's start-up replayed every 3 s from second "
        f"{10 if not quick else 4} with cold caches; one background workload. Drop rate = frames dropped / {window:.0f} s "
        "(the paper's estimate over the last 20 s), frames per second.\n")
    rates: Dict[Tuple[str, str], float] = {}
    rows = []
    for label, _ in scheds:
        row = [label]
        for wl in WORKLOADS:
            t = _task(p[_key("video", wl, label)], "video") or {}
            dropped = (t.get("counts") or {}).get("dropped_frames", 0)
            rates[(label, wl)] = dropped / window
            row.append(f"{dropped / window:.2f}")
        rows.append(row)
    text += [markdown_table(["scheduler"] + WORKLOADS, rows), ""]
    ratios = []
    for wl in WORKLOADS:
        c, b = rates.get(("CFQ", wl)), rates.get(("BFQ+", wl))
        if c is not None and b is not None:
            ratios.append(b / c if c > 0 else (0.0 if b == 0 else float("inf")))
    if ratios:
        worst = max(ratios)
        verdict = "reproduced" if worst <= PAPER_VIDEO_RATIO else "not reproduced"
        text.append(f"Claim: BFQ+'s drop rate at most {PAPER_VIDEO_RATIO}x CFQ's. Ours: at most {worst:.2f}x -> **{verdict}**.\n")
    return "\n".join(text)


# -- 7.5 code development ---------------------------------------------------------------------

def _dev_window(quick: bool) -> Tuple[float, float]:
    """(warm-up, window) seconds: the paper records two minutes after the initial phase."""
    return (5.0, 20.0) if quick else (30.0, 120.0)


def plan_dev(p: Plan, scheds: list, quick: bool) -> None:
    warm, window = _dev_window(quick)
    tree = {"path": "/src", "depth": 2 if quick else 3, "dirs_per_dir": 10, "files_per_dir": 16, "file_mean_kib": 13.0}
    headers = {"path": "/include", "depth": 2, "dirs_per_dir": 5, "files_per_dir": 40, "file_mean_kib": 6.0}
    for wl in ["10r-seq", "10r-rand"]:
        for label, sched in scheds:
            for task in [{"name": "make", "command": "make", "path": "/src", "headers": "/include"},
                         {"name": "checkout", "command": "git-checkout", "path": "/src", "to": "/worktree"}]:
                task = dict(task, warmup_s=warm, window_s=window, start_ms=2000.0)
                scn = _scenario(PAPER_DISK, 1, sched, [_background(wl), task], warm + window + 2.0)
                scn["host"]["tree"] = [tree, headers] if task["name"] == "make" else [tree]
                scn["host"]["cpus"] = 1  # the third system's Athlon 64 3200+
                p.add(_key("dev", task["name"], wl, label), scn)


def report_dev(p: Plan, scheds: list, quick: bool) -> str:
    warm, window = _dev_window(quick)
    text = ["## Code development under load (section 7.5, Figures 8-9)\n",
            f"make -j5 (files compiled in the {window:.0f} s window after {warm:.0f} s) and git checkout (share of the files "
            "written in that window) "
            "beside 10r-seq and 10r-rand (the paper reports only these two: with writers the tasks starve under every "
            "scheduler). docs/s-suite.md describes both tasks.\n"]
    rows = []
    for label, _ in scheds:
        row = [label]
        for wl in ["10r-seq", "10r-rand"]:
            m = (_task(p[_key("dev", "make", wl, label)], "make") or {}).get("counts") or {}
            c = (_task(p[_key("dev", "checkout", wl, label)], "checkout") or {}).get("counts") or {}
            total = c.get("files_total") or 0
            done = c.get("done_in_window", 0)
            row += [str(m.get("compiled_in_window", 0)), f"{100.0 * done / total:.1f}%" if total else "-"]
        rows.append(row)
    text += [markdown_table(["scheduler", "make, 10r-seq", "checkout, 10r-seq", "make, 10r-rand", "checkout, 10r-rand"], rows), ""]
    # The paper's claims (7.5): compilation about the same under BFQ+ and CFQ, BFQ worse; checkout
    # better under BFQ+ and BFQ than CFQ.
    get = {}
    for label, _ in scheds:
        for wl in ["10r-seq", "10r-rand"]:
            m = (_task(p[_key("dev", "make", wl, label)], "make") or {}).get("counts") or {}
            c = (_task(p[_key("dev", "checkout", wl, label)], "checkout") or {}).get("counts") or {}
            get[(label, wl)] = (m.get("compiled_in_window", 0), c.get("done_in_window", 0))
    if all((lab, "10r-seq") in get for lab in ("BFQ+", "BFQ", "CFQ")):
        verdicts = []
        for wl in ["10r-seq", "10r-rand"]:
            bp, b, c = get[("BFQ+", wl)], get[("BFQ", wl)], get[("CFQ", wl)]
            same = c[0] > 0 and abs(bp[0] / c[0] - 1) <= 0.1
            verdicts.append([f"make, {wl}: BFQ+ about CFQ, BFQ behind", f"BFQ+ {bp[0]}, CFQ {c[0]}, BFQ {b[0]}",
                             "reproduced" if same and b[0] < min(bp[0], c[0]) else ("partly" if same else "not reproduced")])
            verdicts.append([f"checkout, {wl}: BFQ+ and BFQ ahead of CFQ", f"BFQ+ {bp[1]}, BFQ {b[1]}, CFQ {c[1]} files",
                             "reproduced" if bp[1] > c[1] and b[1] > c[1] else ("partly" if max(bp[1], b[1]) > c[1] else "not reproduced")])
        text += ["The paper's claims (section 7.5), its metric (progress in the window):\n",
                 markdown_table(["claim", "ours", "verdict"], verdicts), ""]
    return "\n".join(text)


# -- fairness ---------------------------------------------------------------------------------

FAIRNESS_CASES = [
    ("1:2", [(1, None), (2, None)], ""),
    ("1:1:3", [(1, None), (1, None), (3, None)], ""),
    ("1:2, max_budget 2048", [(1, None), (2, None)], "2048"),
    ("1:1:3, max_budget 2048", [(1, None), (1, None), (3, None)], "2048"),
    ("cgroups 100:200 (1 + 2 readers)", [(1, (1, 100)), (1, (2, 200)), (1, (2, 200))], ""),
]


def _fair_scenario(sched: dict, procs: list, max_budget: str, seconds: float) -> dict:
    s = dict(sched)
    s["low_latency"] = False
    if max_budget:
        s["max_budget"] = int(max_budget)
    ps = []
    for i, (w, g) in enumerate(procs):
        pr = {"name": f"r{i}", "pattern": "sequential", "request_kib": 128, "file_mib": 4000, "file_offset_mib": i * 4000,
              "weight": w}
        if g:
            pr["group"], pr["group_weight"] = g
        ps.append(pr)
    return {"device": {"preset": PAPER_DISK}, "block": {}, "process": ps, "scheduler": [s],
            "run": {"duration_s": seconds, "seed": 1}}


def plan_fairness(p: Plan, scheds: list, quick: bool) -> None:
    for name, procs, mb in FAIRNESS_CASES:
        for label, sched in scheds:
            p.add(_key("fair", name, label), _fair_scenario(sched, procs, mb, 10.0 if quick else 30.0))


def report_fairness(p: Plan, scheds: list) -> str:
    rows = []
    for name, procs, _ in FAIRNESS_CASES:
        if procs[0][1]:
            gw = [g[1] for _, g in procs]
            per_group = {}
            for (_, g), w in zip(procs, gw):
                per_group.setdefault(g[0], []).append(w)
            want = []
            total_w = sum(ws[0] for ws in per_group.values())
            for (_, g) in procs:
                members = len([1 for (_, h) in procs if h[0] == g[0]])
                want.append(g[1] / total_w / members)
        else:
            tw = sum(w for w, _ in procs)
            want = [w / tw for w, _ in procs]
        for label, _ in scheds:
            s = p[_key("fair", name, label)]
            b = [q["bytes"] for q in s["processes"]]
            got = [x / sum(b) for x in b]
            err = max(abs(g - w) for g, w in zip(got, want))
            rows.append([name, label, " : ".join(f"{g:.3f}" for g in got), " : ".join(f"{w:.3f}" for w in want),
                         f"{err:.3f}", "honoured" if err < 0.04 else "not honoured"])
    return "\n".join([
        "## Fairness (the suite's fairness benchmark; section 3.1's claim)\n",
        f"Sequential readers of neighbouring 4000 MiB files (one zone) on `{PAPER_DISK}`, `low_latency` off; share of the "
        "bytes read. \"max_budget 2048\" caps the budgets at 1 MiB: the shares must not move (B-WF2Q+ shares by weight "
        "whatever the budgets).\n",
        markdown_table(["case", "scheduler", "shares", "weights' shares", "max error", "verdict"], rows), ""])


# -- entry point ------------------------------------------------------------------------------

def _split(known: set, rows: list) -> Tuple[list, list]:
    ok, skipped = [], []
    for label, sched in rows:
        (ok if sched["name"] in known else skipped).append((label, sched))
    return ok, [f"- {label}: `{s['name']}` is not registered" for label, s in skipped]


def reproduce(out_dir: "str | Path", quick: bool = False, progress: Optional[Callable[[int, int], None]] = None,
              pool: Optional[Pool] = None, known: Optional[set] = None, traces: Optional["str | Path"] = None) -> Path:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    known = known if known is not None else registered_names()
    tdir = traces_dir(traces)
    found = {app: t for app, _ in APPS if (t := _trace(tdir, app)) is not None}
    tp, s1 = _split(known, THROUGHPUT_SCHEDS)
    su, s2 = _split(known, STARTUP_SCHEDS)
    nq, s3 = _split(known, NCQ_SCHEDS)
    vi, s4 = _split(known, VIDEO_SCHEDS)
    fair, s5 = _split(known, [BFQ_PLUS, BFQ_ORIG, LINUX_BFQ])
    p = Plan(out, pool or Pool())
    t0 = time.perf_counter()
    plan_throughput(p, tp, quick)
    plan_startup(p, su, found, quick)
    plan_startup(p, su, found, quick, s_code=True)
    plan_startup(p, nq, found, quick, ncq=True)
    plan_video(p, vi, found, quick)
    plan_dev(p, su, quick)
    plan_fairness(p, fair, quick)
    p.execute(progress)
    wall = time.perf_counter() - t0
    skipped = sorted(set(s1 + s2 + s3 + s4 + s5))
    missing = [app for app, _ in APPS if app not in found]
    sections = [
        "# Valente 2014: BFQ, BFQ+ and the S benchmark suite\n\n"
        "P. Valente, \"New version of BFQ, benchmark suite and experimental results\" (technical report, 2014; SYSTOR '12 "
        f"extended), section 7 on the simulated host. Generated by `iosched reproduce valente2014`{' --quick' if quick else ''}: "
        f"{len(p.results)} runs in {wall:.1f} s (every scenario in scenarios/). Traces read from `{tdir}`"
        + (f" (not found: {', '.join(missing)})" if missing else "") + ".\n\n"
        + ("Not run:\n\n" + "\n".join(skipped) + "\n\n" if skipped else "")
        + "The paper's schedulers: BFQ+ = `bfq-plus`, BFQ = `bfq-original` (docs/schedulers/bfq.md), CFQ = `cfq` (Linux "
        "~4.4's rules; the paper ran 2.6.34's), NOOP = `noop`. Extra rows, not in the paper: `bfq` (Linux 6.x), `deadline`. "
        "The host: 1 GiB of page cache, ext3-like layout (the paper's third system ran ext4), Linux's block layer, today's "
        "writeback and readahead; the workloads are docs/s-suite.md's.\n",
        report_throughput(p, tp, out, quick),
        report_startup(p, su, found, out, quick),
        report_startup(p, su, found, out, quick, s_code=True),
        report_ncq(p, nq, found, quick),
        report_video(p, vi, found, quick),
        report_dev(p, su, quick),
        report_fairness(p, fair),
    ]
    report = out / "report.md"
    report.write_text("\n".join(sections))
    return report
