"""Plots of a trace summary (`iosched trace stats --plot DIR`): matplotlib, imported only here."""

from __future__ import annotations

from pathlib import Path
from typing import List

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


def trace_plots(s: dict, out: Path) -> List[Path]:
    """sizes.png, interarrival_cdf.png, seeks.png, queue_depth.png (when the trace has completion
    times) and processes.png in `out`; returns the paths written."""
    plt = _pyplot()
    out.mkdir(parents=True, exist_ok=True)
    name = Path(s["source"]).name
    paths: list = []

    hist = s["size_sectors"]["histogram"]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.bar(range(len(hist)), [b["requests"] for b in hist], color="tab:blue")
    ax.set_xticks(range(len(hist)), [_bucket_label(b, True) for b in hist], rotation=45, ha="right", fontsize="small")
    ax.set_xlabel("request size (bucket [2^k, 2^(k+1)) sectors, from)")
    ax.set_ylabel("requests")
    ax.set_title(f"{name}: request sizes")
    _save(plt, fig, out / "sizes.png", paths)

    cdf = s["interarrival_cdf"]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    if cdf["ms"]:
        xs = [max(x, 1e-6) for x in cdf["ms"]]
        ax.step(xs, cdf["q"], where="post")
        ax.set_xscale("log")
    ax.set_xlabel("inter-arrival time (ms, log scale; 0 drawn at 1 ns)")
    ax.set_ylabel("fraction of gaps")
    ax.set_title(f"{name}: inter-arrival CDF")
    ax.grid(True, which="both", alpha=0.3)
    _save(plt, fig, out / "interarrival_cdf.png", paths)

    hist = s["seek_sectors"]["histogram"]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.bar(range(len(hist)), [b["requests"] for b in hist], color="tab:orange")
    ax.set_xticks(range(len(hist)), [_bucket_label(b, False) for b in hist], rotation=45, ha="right", fontsize="small")
    ax.set_xlabel("seek distance (sectors; buckets 0, then [2^(k-1), 2^k))")
    ax.set_ylabel("requests")
    ax.set_title(f"{name}: seek distances in trace order")
    _save(plt, fig, out / "seeks.png", paths)

    depth = s.get("queue_depth")
    fig, ax = plt.subplots(figsize=(7, 4.5))
    if depth and depth["series"]:
        ts = [p["t_s"] for p in depth["series"]]
        ax.step(ts, [p["mean"] for p in depth["series"]], where="post", label="mean in bucket")
        ax.step(ts, [p["max"] for p in depth["series"]], where="post", alpha=0.5, label="max in bucket")
        ax.set_ylim(bottom=0)
        ax.legend(fontsize="small")
        ax.set_title(f"{name}: requests outstanding ({depth['bucket_s']:.3g} s buckets)")
    else:
        ax.text(0.5, 0.5, "no completion times in this trace", ha="center", va="center", transform=ax.transAxes)
        ax.set_title(f"{name}: requests outstanding")
    ax.set_xlabel("time since the first arrival (s)")
    ax.set_ylabel("requests outstanding")
    _save(plt, fig, out / "queue_depth.png", paths)

    procs = s["processes"]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    labels = [("-" if p["pid"] is None else (f"{p['name']} ({p['pid']})" if p["name"] else str(p["pid"]))) for p in procs]
    ax.bar(range(len(procs)), [p["reads"] for p in procs], label="reads", color="tab:blue")
    ax.bar(range(len(procs)), [p["writes"] for p in procs], bottom=[p["reads"] for p in procs], label="writes",
           color="tab:red")
    ax.set_xticks(range(len(procs)), labels, rotation=45, ha="right", fontsize="small")
    ax.set_ylabel("requests")
    ax.legend(fontsize="small")
    ax.set_title(f"{name}: requests per process (top {len(procs)} of {s['processes_total']})")
    _save(plt, fig, out / "processes.png", paths)
    return paths
