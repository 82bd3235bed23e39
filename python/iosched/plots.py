"""Plots from results (matplotlib, imported only here, with the file-only Agg backend)."""

from __future__ import annotations

from pathlib import Path
from typing import List


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def run_plots(summaries: list, out: Path, title: str) -> List[Path]:
    """response_cdf.png (response-time CDF per scheduler, from each run's histogram) and
    throughput.png (MB/s per scheduler) in `out`."""
    from . import _native

    plt = _pyplot()
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for s in summaries:
        values = s.get("response_cdf_ms") or []
        if values:
            ax.step(values, _native.CDF_QUANTILES[: len(values)], where="post", label=s["scheduler"])
    ax.set_xscale("log")
    ax.set_xlabel("response time (ms, log scale)")
    ax.set_ylabel("fraction of requests")
    ax.set_title(f"{title}: response-time CDF")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    paths.append(out / "response_cdf.png")
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(7, 4.5))
    labels = [s["scheduler"] for s in summaries]
    values = [s["throughput_mb_s"] for s in summaries]
    bars = ax.bar(range(len(labels)), values, color="tab:blue")
    ax.bar_label(bars, fmt="%.2f", fontsize="small")
    ax.set_xticks(range(len(labels)), labels, rotation=20, ha="right", fontsize="small")
    ax.set_ylabel("throughput (MB/s, 10^6 B)")
    ax.set_title(f"{title}: throughput")
    fig.tight_layout()
    paths.append(out / "throughput.png")
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)
    return paths


def sweep_plot(summary, params: list, metric: str, path: Path) -> Path:
    """`metric` (mean and 95% CI across seeds) against the first swept parameter, one line per
    scheduler and combination of the other parameters."""
    plt = _pyplot()
    x = f"param:{params[0].path}"
    others = [f"param:{p.path}" for p in params[1:]]
    data = summary[summary["metric"] == metric]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for key, g in data.groupby(others + ["scheduler"], sort=False):
        key = key if isinstance(key, tuple) else (key,)
        label = ", ".join(str(k) for k in key)
        g = g.sort_values(x)
        xs = list(range(len(g))) if g[x].dtype == object else g[x]
        ax.errorbar(xs, g["mean"], yerr=g["ci95_half_width"].fillna(0.0), marker="o", capsize=3, label=label)
        if g[x].dtype == object:
            ax.set_xticks(xs, g[x].astype(str))
    ax.set_xlabel(params[0].path)
    ax.set_ylabel(f"{metric} (mean, 95% CI across seeds)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def line_plot(xs, series: dict, xlabel: str, ylabel: str, title: str, path: Path, logx: bool = False) -> Path:
    """One line per `series` entry (label -> y values at `xs`), written to `path`."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    for label, ys in series.items():
        ax.plot(xs, ys, marker="o", label=label)
    if logx:
        ax.set_xscale("log", base=2)
        ax.set_xticks(xs, [str(x) for x in xs])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
