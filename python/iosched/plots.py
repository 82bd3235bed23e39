"""Plots from results (matplotlib, imported only here, with the file-only Agg backend)."""

from __future__ import annotations

from pathlib import Path
from typing import List


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plain_log_ticks(axis) -> None:
    """Tick labels on a log axis as plain numbers (0.5, 20, 1000), not 2 x 10^1: 1-2-3-5 in
    each decade over a short range, powers of ten over a long one (call after plotting)."""
    import math

    from matplotlib.ticker import FuncFormatter, LogLocator

    lo, hi = sorted(axis.get_view_interval())
    decades = math.log10(hi / lo) if lo > 0 and hi > 0 else 0.0
    subs = (1.0, 2.0, 3.0, 5.0) if decades <= 2 else (1.0, 3.0) if decades <= 3.5 else (1.0,)
    axis.set_major_locator(LogLocator(base=10, subs=subs))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.10g}"))
    axis.set_minor_formatter(FuncFormatter(lambda v, _: ""))


# Panels of run's response-time figure: one per process, at most this many.
MAX_PANELS = 16


def run_plots(summaries: list, out: Path, title: str) -> List[Path]:
    """response_cdf.png (each process's response-time CDF, one panel per process and one curve
    per scheduler, from each process's histogram: a small process is not lost among the others'
    requests) and throughput.png (MB/s per scheduler) in `out`."""
    plt = _pyplot()
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    fig = response_cdf_figure(summaries, title)
    paths.append(out / "response_cdf.png")
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)
    paths.append(throughput_plot(summaries, out / "throughput.png", title))
    return paths


def response_cdf_figure(summaries: list, title: str):
    """Each process's response-time CDF: a panel per process (the first MAX_PANELS), a curve per
    scheduler, from the process's own histogram."""
    from . import _native

    plt = _pyplot()
    names = list(dict.fromkeys(p["name"] for s in summaries for p in s["processes"]))
    shown = names[:MAX_PANELS]
    n = max(1, len(shown))
    cols = 1 if n == 1 else 2 if n <= 4 else 3 if n <= 9 else 4
    rows = -(-n // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols + 0.8, 3.0 * rows + 1.2), squeeze=False, sharey=True)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, name in enumerate(shown):
        ax = axes[i // cols][i % cols]
        counts = []
        for k, s in enumerate(summaries):
            p = next((p for p in s["processes"] if p["name"] == name), None)
            values = (p or {}).get("response_cdf_ms") or []
            if p is None or not p["requests"] or not values:
                continue
            counts.append(p["requests"])
            ax.step(values, _native.CDF_QUANTILES[: len(values)], where="post", color=colors[k % len(colors)],
                    label=s["scheduler"])
        low, high = (min(counts), max(counts)) if counts else (0, 0)
        requests = f"{low:,}" if low == high else f"{low:,} to {high:,}"
        ax.set_title(f"{name}: {requests} requests", fontsize=9)
        ax.set_xscale("log")
        plain_log_ticks(ax.xaxis)
        ax.grid(True, which="both", alpha=0.3)
        if i % cols == 0:
            ax.set_ylabel("fraction of its requests")
        if i // cols == rows - 1 or i + cols >= n:
            ax.set_xlabel("response time (ms, log scale)")
    for j in range(n, rows * cols):
        axes[j // cols][j % cols].set_visible(False)
    more = f" (the first {len(shown)} of {len(names)} processes)" if len(names) > len(shown) else ""
    fig.suptitle(f"{title}: response-time CDF per process{more}", fontsize=11)
    handles = [plt.Line2D([], [], color=colors[k % len(colors)], label=s["scheduler"]) for k, s in enumerate(summaries)]
    fig.legend(handles=handles, loc="lower center", ncol=min(len(handles), 4), fontsize="small", title="scheduler",
               title_fontsize="small", frameon=False)
    legend_rows = -(-len(handles) // 4)
    fig.tight_layout(rect=(0, 0.06 + 0.035 * legend_rows, 1, 1))
    return fig


def throughput_plot(summaries: list, path: Path, title: str) -> Path:
    """MB/s per scheduler, one bar each."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    labels = [s["scheduler"] for s in summaries]
    values = [s["throughput_mb_s"] for s in summaries]
    bars = ax.bar(range(len(labels)), values, color="tab:blue")
    ax.bar_label(bars, fmt="%.2f", fontsize="small")
    ax.set_xticks(range(len(labels)), labels, rotation=20, ha="right", fontsize="small")
    ax.set_ylabel("throughput (MB/s, 10^6 B)")
    ax.set_xlabel("scheduler")
    ax.set_title(f"{title}: throughput")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def sweep_plot(summary, params: list, metric: str, path: Path, title: str = "") -> Path:
    """sweep_figure written to `path`."""
    plt = _pyplot()
    fig = sweep_figure(summary, params, metric, title)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def sweep_figure(summary, params: list, metric: str, title: str = ""):
    """`metric` against the first swept parameter, one series per scheduler and combination of
    the other parameters: lines over a numeric parameter, grouped bars over a category (a
    device preset, a scheduler name: values that are not numbers). The 95% confidence interval
    across seeds is drawn (a band, or error bars on the bars) only when a point has more than one
    seed; the title says how many."""
    from .labels import field_label, path_label

    plt = _pyplot()
    x = f"param:{params[0].path}"
    others = [f"param:{p.path}" for p in params[1:]]
    data = summary[summary["metric"] == metric]
    seeds = int(data["n"].max()) if len(data) else 0
    with_ci = seeds > 1
    categorical = not all(_is_number(v) for v in params[0].values)
    groups = list(data.groupby(others + ["scheduler"], sort=False))
    fig, ax = plt.subplots(figsize=(8.5, 4.8))
    if categorical:
        categories = [str(v) for v in params[0].values]  # in the order of --set
        by_group = [{str(v): r for v, r in zip(g[x], g.to_dict("records"))} for _, g in groups]
        # Bars side by side, centred on their category, for the series that have a value there
        # (a sweep of scheduler[0].name has one series per category).
        present = {c: [k for k, by in enumerate(by_group) if c in by] for c in categories}
        width = 0.8 / max([1] + [len(ks) for ks in present.values()])
        colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        for k, (key, _) in enumerate(groups):
            cats = [i for i, c in enumerate(categories) if k in present[c]]
            positions = [i + width * (present[categories[i]].index(k) - (len(present[categories[i]]) - 1) / 2) for i in cats]
            rows = [by_group[k][categories[i]] for i in cats]
            ax.bar(positions, [r["mean"] for r in rows], width, yerr=[r["ci95_half_width"] for r in rows] if with_ci else None,
                   capsize=3 if with_ci else 0, color=colors[k % len(colors)], label=_series_label(key))
        long = max((len(c) for c in categories), default=0) > 10
        ax.set_xticks(range(len(categories)), categories, rotation=20 if long else 0, ha="right" if long else "center")
        ax.grid(True, axis="y", alpha=0.3)
    else:
        for key, g in groups:
            g = g.sort_values(x)
            line, = ax.plot(g[x], g["mean"], marker="o", label=_series_label(key))
            if with_ci:
                ax.fill_between(g[x], g["ci95_low"], g["ci95_high"], color=line.get_color(), alpha=0.2, linewidth=0)
        values = [float(v) for v in params[0].values]
        if min(values) > 0 and max(values) / min(values) >= 100:
            ax.set_xscale("log")
        ax.grid(True, alpha=0.3)
    ax.set_xlabel(path_label(params[0].path))
    ax.set_ylabel(field_label(metric))
    spread = (f"mean of {seeds} seeds per point, {'error bars' if categorical else 'bands'}: 95% confidence interval"
              if with_ci else "one seed per point (no confidence interval)")
    heading = f"{field_label(metric)} against {path_label(params[0].path)}"
    ax.set_title(f"{title + ': ' if title else ''}{heading}\n{spread}", fontsize=10)
    legend_title = ", ".join([path_label(p.path) for p in params[1:]] + ["scheduler"])
    # Beside the axes: never over a bar or a line.
    ax.legend(fontsize="small", title=legend_title, title_fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return fig


def _series_label(key) -> str:
    key = key if isinstance(key, tuple) else (key,)
    return ", ".join(str(k) for k in key)


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
