"""Plots of a trace summary (`iosched trace stats --plot DIR`): matplotlib, imported only here."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

from .plots import _pyplot


def _save(plt, fig, path: Path, paths: list) -> None:
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    paths.append(path)


def _bucket_label(b: dict, unit_bytes: bool) -> str:
    if b["min"] == b["max"]:
        return _size(b["min"]) if unit_bytes else f"{b['min']:,}"
    return _size(b["min"]) if unit_bytes else f"{b['min']:,}+"


def _size(sectors: int) -> str:
    n = sectors * 512
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:g} {unit}"
        n /= 1024
    return f"{n:g}"


def _bar_counts(ax, bars, counts: list) -> None:
    """Each bar's count and share above it (a chart of one or two bars says its numbers)."""
    total = sum(counts) or 1
    ax.bar_label(bars, [f"{c:,}\n{c / total:.0%}" if c else "" for c in counts], fontsize="x-small")
    # Room for the labels (a set ylim: stacked bars' sticky edges would stop margins).
    ax.set_ylim(0, max(max(counts, default=0), 1) * 1.18)


def _log_ms_axis(ax) -> None:
    from .plots import plain_log_ticks

    plain_log_ticks(ax.xaxis)


def trace_plots(s: dict, out: Path, notes: Optional[list] = None) -> List[Path]:
    """sizes.png, interarrival_cdf.png, seeks.png, queue_depth.png and processes.png in `out`;
    returns the paths written. queue_depth.png needs completion times and processes.png more
    than one process: when the trace has not, the figure is not written and `notes` (a list,
    when given) gets a line saying why."""
    plt = _pyplot()
    out.mkdir(parents=True, exist_ok=True)
    name = Path(s["source"]).name
    paths: list = []
    notes = notes if notes is not None else []

    hist = s["size_sectors"]["histogram"]
    counts = [b["requests"] for b in hist]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    bars = ax.bar(range(len(hist)), counts, color="tab:blue")
    _bar_counts(ax, bars, counts)
    ax.set_xticks(range(len(hist)), [_bucket_label(b, True) for b in hist], rotation=45, ha="right", fontsize="small")
    ax.set_xlabel("request size (each bar: from this size to just under twice it)")
    ax.set_ylabel("requests")
    filled = [b for b in hist if b["requests"]]
    alike = ""
    if len(filled) == 1:
        b = filled[0]
        alike = f", all {_size(b['min'])}" if b["min"] == b["max"] else f", all from {_size(b['min'])} to under {_size(b['max'] + 1)}"
    ax.set_title(f"{name}: request sizes\n{s['size_sectors']['requests']:,} requests{alike}", fontsize=10)
    _save(plt, fig, out / "sizes.png", paths)

    cdf = s["interarrival_cdf"]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    if cdf["ms"]:
        xs = [max(x, 1e-6) for x in cdf["ms"]]
        ax.step(xs, cdf["q"], where="post")
        ax.set_xscale("log")
        _log_ms_axis(ax)
    ax.set_xlabel("time between two arrivals (ms, log scale; 0 drawn at 1 ns)")
    ax.set_ylabel("fraction of the gaps")
    ax.set_title(f"{name}: inter-arrival time CDF")
    ax.grid(True, which="both", alpha=0.3)
    _save(plt, fig, out / "interarrival_cdf.png", paths)

    hist = s["seek_sectors"]["histogram"]
    counts = [b["requests"] for b in hist]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.bar(range(len(hist)), counts, color="tab:orange")
    ax.set_xticks(range(len(hist)), [_bucket_label(b, False) for b in hist], rotation=45, ha="right", fontsize="small")
    ax.set_xlabel("seek distance (sectors; each bar: from this distance to just under twice it, 0 alone)")
    ax.set_ylabel("requests")
    ax.set_title(f"{name}: seek distances in trace order")
    _save(plt, fig, out / "seeks.png", paths)

    depth = s.get("queue_depth")
    if depth and depth["series"]:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        ts = [p["t_s"] for p in depth["series"]]
        ax.step(ts, [p["mean"] for p in depth["series"]], where="post", label="time-weighted mean in each bucket")
        ax.step(ts, [p["max"] for p in depth["series"]], where="post", alpha=0.5, label="most in each bucket")
        ax.set_ylim(bottom=0)
        ax.legend(fontsize="small")
        ax.set_title(f"{name}: requests outstanding (arrival to completion)")
        ax.set_xlabel(f"time since the first arrival (s; buckets of {_duration(depth['bucket_s'])})")
        ax.set_ylabel("requests outstanding")
        _save(plt, fig, out / "queue_depth.png", paths)
    else:
        # Requests outstanding are counted from arrival to completion: formats that record
        # arrivals only (MQSim, fio iologs, MSR without response times, ...) cannot give them.
        notes.append(f"queue_depth.png not written: {name} ({s['format']}) has no completion times, and requests "
                     "outstanding are counted from arrival to completion")

    procs = s["processes"]
    named = [p for p in procs if p["pid"] is not None]
    if len(named) >= 2:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        labels = [f"{p['name']} ({p['pid']})" if p["name"] else f"pid {p['pid']}" for p in named]
        ax.bar(range(len(named)), [p["reads"] for p in named], label="reads", color="tab:blue")
        bars = ax.bar(range(len(named)), [p["writes"] for p in named], bottom=[p["reads"] for p in named], label="writes",
                      color="tab:red")
        _bar_counts(ax, bars, [p["reads"] + p["writes"] for p in named])
        ax.set_xticks(range(len(named)), labels, rotation=45, ha="right", fontsize="small")
        ax.set_xlabel("process (name and pid)")
        ax.set_ylabel("requests")
        ax.legend(fontsize="small")
        ax.set_title(f"{name}: requests per process (top {len(named)} of {s['processes_total']:,})")
        _save(plt, fig, out / "processes.png", paths)
    elif not named:
        notes.append(f"processes.png not written: {name} ({s['format']}) names no processes")
    else:
        p = named[0]
        notes.append(f"processes.png not written: one process in {name} "
                     f"({(p['name'] + ' ') if p['name'] else ''}pid {p['pid']}: {p['requests']:,} requests)")
    return paths


def _duration(seconds: float) -> str:
    return f"{seconds:g} s" if seconds >= 1 else f"{seconds * 1e3:g} ms" if seconds >= 1e-3 else f"{seconds * 1e6:g} us"
