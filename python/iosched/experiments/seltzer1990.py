"""Reproduction of Seltzer, Chen & Ousterhout 1990, "Disk Scheduling Revisited" (figures 2-8).

The sweeps live in experiments/seltzer1990/catalogue.toml and the paper's claims in claims.toml
beside it; this module runs the sweeps, draws one PNG per figure, builds the run's tables and
writes report.md, which opens with the ledger's scoreboard (every claim judged by the one rule of
iosched/ledger/rule.py), then the figures' data.
"""

from __future__ import annotations

import math
import os
import sys
import time
from pathlib import Path
from typing import Callable, Optional

import numpy as np
import pandas as pd

from .. import ledger
from ..scenario import Scenario, ScenarioError
from ..pool import Pool
from .sweep import Point, SweepRunner, markdown_table

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

NAME = "seltzer1990"


# -- catalogue ------------------------------------------------------------------------------

def find_catalogue(catalogue_dir: Optional[Path] = None) -> Path:
    """The catalogue directory: the given one, else the one installed with the package."""
    from ..catalogues import catalogue_dir as installed

    candidates = [Path(catalogue_dir) if catalogue_dir is not None else installed(NAME)]
    for c in candidates:
        if (c / "catalogue.toml").is_file():
            return c
    raise ScenarioError(
        f"{candidates[0] / 'catalogue.toml'}: no such file (pass --catalogue DIR)"
    )


def load_catalogue(directory: Path) -> dict:
    path = directory / "catalogue.toml"
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"{path}: {e}") from None


def plan(cat: dict, directory: Path, quick: bool) -> "list[tuple[Scenario, Point]]":
    """Every (base scenario, point) the figures need."""
    sweep = cat["sweep"]
    q_sweep = sweep["quick"] if quick else sweep
    qs = q_sweep["queue_lengths"]
    rpq = q_sweep["requests_per_queue"]
    scheds = cat["schedulers"]
    out = []
    for fig in cat["figure"]:
        base = Scenario.from_file(directory / fig["scenario"])
        fid = fig["id"]
        if "group_sizes" in fig:
            q = fig["queue_depth"]
            sizes = sweep["quick"]["group_sizes"] if quick else fig["group_sizes"]
            for g in sizes:
                for name, table in fig["group_schedulers"].items():
                    label = f"{name}{g}" if name == "gstf" else f"gstf{g}-frozen"
                    t = dict(table, group_cylinders=g)
                    out.append((base, Point.make(fid, label, t, q, rpq * q, x=g)))
            for label in fig.get("references", []):
                out.append((base, Point.make(fid + "-ref", label, scheds[label], q, rpq * q)))
            for label in fig.get("frozen_pair", []):
                for q2 in qs:
                    out.append((base, Point.make(fid + "-frozen", label, scheds[label], q2,
                                                 rpq * q2)))
            continue
        for label in fig["schedulers"]:
            for q in qs:
                table = scheds[label]
                if label == "wstf-qlimit":
                    # Footnote 4: the limit grows with the queue (150% x FCFS's average I/O x Q).
                    limit_ms = fig["qlimit_factor"] * fcfs_io_ms(base) * q
                    table = dict(table, max_response_ms=round(limit_ms))
                out.append((base, Point.make(fid, label, table, q, rpq * q)))
        for extra in fig.get("extra_points", []):
            q = extra["queue_depth"]
            out.append((base, Point.make(fid, extra["scheduler"], scheds[extra["scheduler"]],
                                         q, rpq * q)))
    seeds = cat.get("seeds")
    if seeds and not quick:
        base = Scenario.from_file(directory / seeds["scenario"])
        for label in seeds["schedulers"]:
            for q in seeds["queue_lengths"]:
                for seed in seeds["seeds"]:
                    out.append((base, Point.make("seeds", label, scheds[label], q, rpq * q, seed=seed)))
    return out


# -- the paper's back-of-envelope models ----------------------------------------------------

def device_figures(base: Scenario) -> dict:
    """`iosched list devices`' derived figures for the base scenario's preset."""
    from ..api import list_devices

    preset = base.to_dict()["device"]["preset"]
    return next(d for d in list_devices() if d["name"] == preset)


def fcfs_io_ms(base: Scenario) -> float:
    """The model's FCFS average I/O time for one 4 KiB block: average seek + half a revolution +
    the transfer (section 4.1's back-of-envelope, with the model's own figures)."""
    d = device_figures(base)
    rev = d["revolution_ms"]
    transfer = rev * 8 / d["sectors_per_track_outer"]  # 8 sectors of 512 B per 4 KiB block
    return d["seek_average_ms"] + rev / 2 + transfer


def eagle_seek_ms(x: float) -> float:
    """Figure 1's seek time model for the Eagle, x in cylinders."""
    if x <= 0:
        return 0.0
    if x <= 239:
        return 4.6 + 0.87 * math.sqrt(x)
    return 18.0 + 0.028 * (x - 239)


def ssf_theory(q: int, theory: dict) -> "tuple[float, float, float]":
    """(seek distance in cylinders, I/O time without transfer in ms, utilization) for SSF."""
    dist = theory["cylinders"] / (q + 1)
    io = theory["half_rotation_ms"] + eagle_seek_ms(dist)
    return dist, io, theory["transfer_ms"] / (theory["transfer_ms"] + io)


# -- helpers --------------------------------------------------------------------------------

def _pct(x: float, digits: int = 1) -> str:
    return f"{100 * x:.{digits}f}%"


class Data:
    """Lookup of sweep rows: value(figure, label, q, metric)."""

    def __init__(self, df: pd.DataFrame):
        self.df = df

    def series(self, fig: str, label: str, metric: str) -> pd.Series:
        d = self.df[(self.df.figure == fig) & (self.df.label == label)].sort_values("x")
        return pd.Series(d[metric].to_numpy(), index=d["x"].to_numpy())

    def value(self, fig: str, label: str, x, metric: str) -> float:
        s = self.series(fig, label, metric)
        return float(s.loc[x]) if x in s.index else float("nan")


def _group(d: Data, name: str, metric: str) -> pd.Series:
    """GSTF metric vs group size (plain: labels gstf<g>, frozen: gstf<g>-frozen)."""
    df = d.df[d.df.figure == "fig8"]
    frozen = name.endswith("frozen")
    df = df[df.label.str.endswith("-frozen") == frozen].sort_values("x")
    return pd.Series(df[metric].to_numpy(), index=df["x"].astype(int).to_numpy())


# -- the run's tables (what the claims are judged on) ---------------------------------------

# Short names of the metrics in the tables, with the unit conversion from runs.csv's columns.
TABLE_METRICS = {
    "util": ("utilization_transfer", 100.0),  # % of time transferring data
    "io_ms": ("service_ms_mean", 1.0),  # average I/O time (dispatch to completion)
    "maxresp_s": ("response_ms_max", 1e-3),  # maximum response time
    "pos_ms": ("positioning_ms_mean", 1.0),  # seek + rotation
    "seek_cyl": ("seek_mean_cylinders", 1.0),
    "seek_ms": ("seek_ms_mean", 1.0),
    "rot_ms": ("rotation_ms_mean", 1.0),
    "xfer_ms": ("transfer_ms_mean", 1.0),
}


def tables(df: pd.DataFrame, device: dict):
    """The runs as the ledger's tables: FIGURE_METRIC (rows: Q, or the group size for fig8;
    columns: the series' labels) and `eagle` (the device model's geometry)."""
    from ..ledger import Tables

    t = Tables()
    for fid, fig_df in df.groupby("figure"):
        if fid == "seeds":
            continue
        for short, (col, scale) in TABLE_METRICS.items():
            rows: dict = {}
            for _, r in fig_df.iterrows():
                # fig8's labels carry the group size (gstf210, gstf210-frozen): the row has it.
                label = r["label"]
                if fid == "fig8":
                    label = "gstf-frozen" if label.endswith("-frozen") else "gstf"
                rows.setdefault(r["x"], {})[label] = r[col] * scale
            t.add(f"{fid}_{short}", rows)
    # The seed runs: SEEDS_METRIC rows Q, columns LABEL-sSEED and LABEL-min / LABEL-max.
    seeds = df[df.figure == "seeds"]
    for short, (col, scale) in TABLE_METRICS.items():
        rows = {}
        for (q, label), g in seeds.groupby(["x", "label"]):
            vals = {f"{label}-s{int(r['seed'])}": r[col] * scale for _, r in g.iterrows()}
            rows.setdefault(q, {}).update(vals)
            rows[q][f"{label}-min"] = min(vals.values())
            rows[q][f"{label}-max"] = max(vals.values())
        if rows:
            t.add(f"seeds_{short}", rows)
    sectors = device["cylinders"] * device["surfaces"] * device["sectors_per_track_outer"]
    capacity_b = device["capacity_gb"] * 1e9
    t.add("eagle", {"model": {
        "cylinders": device["cylinders"],
        "tracks_per_cylinder": device["surfaces"],
        "sectors_per_track": device["sectors_per_track_outer"],
        "bytes_per_sector": capacity_b / sectors,
        "blocks_4k": capacity_b / 4096,
        "half_revolution_ms": device["revolution_ms"] / 2,
        "seek_average_ms": device["seek_average_ms"],
    }})
    return t


def cat_fig(cat: dict, fid: str) -> dict:
    return next(f for f in cat["figure"] if f["id"] == fid)


# -- plots ----------------------------------------------------------------------------------

def _plots(cat: dict, d: Data, out: Path, qs: list) -> "dict[str, str]":
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    files = {}

    def queue_plot(fid, labels, metric, ylabel, extra=None, scale=1.0):
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        for lab in labels:
            s = d.series(fid, lab, metric)
            ax.plot(s.index, s.to_numpy() * scale, marker="o", label=f"{lab} (sim)")
        if extra:
            extra(ax)
        ax.set_xscale("log")
        ax.set_xlabel("queue length Q")
        ax.set_ylabel(ylabel)
        ax.set_title(cat_fig(cat, fid)["title"], fontsize=9)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        name = f"{fid}.png"
        fig.savefig(out / name, dpi=110)
        plt.close(fig)
        files[fid] = name

    util = ("utilization_transfer", "utilization (% of time transferring)")
    queue_plot("fig2", ["fcfs"], *util, scale=100,
               extra=lambda ax: ax.axhline(7.0, color="k", ls="--", lw=1, label="theory 7% (paper)"))

    th = cat_fig(cat, "fig3")["theory"]

    def ssf_theory_line(ax):
        xs = np.unique(np.geomspace(1, max(qs), 60).round().astype(int))
        ax.plot(xs, [100 * ssf_theory(int(q), th)[2] for q in xs], "k--", lw=1,
                label="theory (paper's back-of-envelope)")

    queue_plot("fig3", ["ssf"], *util, scale=100, extra=ssf_theory_line)
    queue_plot("fig4", ["fcfs", "ssf", "cscan"], *util, scale=100)
    queue_plot("fig5", ["fcfs", "ssf", "cscan"], "response_ms_max", "maximum response time (s)",
               scale=1e-3)

    def paper_5000(ax):
        ax.plot([5000], [40], "kx", ms=9, label="paper: STF at Q=5000, ~40%")

    queue_plot("fig6", ["fcfs", "cscan", "stf", "gstf210", "wstf"], *util, scale=100,
               extra=paper_5000)
    queue_plot("fig7", ["cscan", "stf", "gstf210", "wstf"], "response_ms_max",
               "maximum response time (s)", scale=1e-3)

    f8 = cat_fig(cat, "fig8")
    q = f8["queue_depth"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, (metric, ylabel, scale) in zip(axes, [
        ("utilization_transfer", "utilization (%)", 100),
        ("response_ms_max", "maximum response time (s)", 1e-3),
    ]):
        for name, style in [("gstf", "o-"), ("gstf-frozen", "s--")]:
            s = _group(d, name, metric)
            ax.plot(s.index, s.to_numpy() * scale, style, label=name)
        for lab, ls in zip(f8.get("references", []), [":", "-."]):
            v = d.value("fig8-ref", lab, q, metric)
            ax.axhline(v * scale, color="gray", ls=ls, lw=1, label=f"{lab} (Q={q})")
        ax.set_xlabel("cylinder group size (cylinders)")
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(f8["title"], fontsize=9)
    fig.tight_layout()
    fig.savefig(out / "fig8.png", dpi=110)
    plt.close(fig)
    files["fig8"] = "fig8.png"
    return files


# -- report ---------------------------------------------------------------------------------

def _queue_table(d: Data, fid: str, labels: list, metrics: list, theory=None) -> str:
    fmt = {
        "utilization_transfer": ("util", _pct),
        "service_ms_mean": ("I/O ms", lambda v: f"{v:.2f}"),
        "response_ms_max": ("max resp s", lambda v: f"{v / 1000:.2f}"),
    }
    xs = sorted(set(d.df[d.df.figure == fid].x))
    header = ["Q"]
    for m in metrics:
        header += [f"{lab} {fmt[m][0]}" for lab in labels]
    if theory:
        header += theory[0]
    rows = []
    for x in xs:
        row = [int(x)]
        for m in metrics:
            for lab in labels:
                v = d.value(fid, lab, x, m)
                row.append("—" if math.isnan(v) else fmt[m][1](v))
        if theory:
            row += theory[1](int(x))
        rows.append(row)
    return markdown_table(header, rows)


def write_report(cat: dict, df: pd.DataFrame, out: Path, quick: bool, qs: list,
                 wall_s: float, plots: dict, ledger_lines: list) -> Path:
    d = Data(df)
    th = cat_fig(cat, "fig3")["theory"]
    rpq = (cat["sweep"]["quick"] if quick else cat["sweep"])["requests_per_queue"]
    lines = [
        f"# {cat['title']}",
        "",
        f"Paper: {cat['paper']}",
        "",
        f"Generated by `iosched reproduce seltzer1990{' --quick' if quick else ''}` from "
        "experiments/seltzer1990/catalogue.toml. "
        f"{df.drop_duplicates(['figure', 'label', 'x']).shape[0]} points, "
        f"{df.attrs.get('distinct_runs', '?')} distinct runs, {wall_s:.1f} s wall time. Seed {cat.get('seed', 1)}; requests = {rpq} x Q; "
        "device preset fujitsu-m2361a; closed queue of 4 KiB reads uniform over the disk.",
        "",
    ]
    if quick:
        lines += ["**Quick mode: fewer points and 20 x Q requests. A smoke test; do not draw "
                  "conclusions from these numbers.**", ""]
    lines += ledger_lines
    lines += [
        "## The runs",
        "",
        "Utilization is `utilization_transfer` (fraction of time transferring data), average I/O "
        "time is `service_ms.mean` (includes the ~2 ms transfer), maximum response time is "
        "`response_ms.max`. All per-point numbers are in runs.csv; the tables the claims are "
        "judged on are in tables.csv.",
        "",
    ]
    theory_cols = {
        "fig2": (["paper theory util", "paper theory I/O ms"], lambda q: ["7.0%", "28.3"]),
        "fig3": (["theory seek cyl", "theory I/O ms (no xfer)", "sim seek+rot ms",
                  "theory util"],
                 lambda q: [f"{ssf_theory(q, th)[0]:.1f}", f"{ssf_theory(q, th)[1]:.1f}",
                            f"{d.value('fig3', 'ssf', q, 'positioning_ms_mean'):.2f}",
                            _pct(ssf_theory(q, th)[2])]),
    }
    for fig in cat["figure"]:
        fid = fig["id"]
        lines += [f"### {fig['title']}", "", f"Paper: {fig['paper']}", "",
                  f"Base scenario: `experiments/seltzer1990/{fig['scenario']}`.", ""]
        if fid == "fig8":
            g = _group(d, "gstf", "utilization_transfer")
            gm = _group(d, "gstf", "response_ms_max")
            f = _group(d, "gstf-frozen", "utilization_transfer")
            fm = _group(d, "gstf-frozen", "response_ms_max")
            q = fig["queue_depth"]
            rows = [[int(x), _pct(g.loc[x]), f"{gm.loc[x] / 1000:.2f}", _pct(f.loc[x]),
                     f"{fm.loc[x] / 1000:.2f}"] for x in g.index]
            for lab in fig.get("references", []):
                rows.append([f"{lab} (reference)",
                             _pct(d.value("fig8-ref", lab, q, "utilization_transfer")),
                             f"{d.value('fig8-ref', lab, q, 'response_ms_max') / 1000:.2f}", "", ""])
            lines += [f"Q = {q}, requests = {rpq * q}.", "",
                      markdown_table(["group cylinders", "gstf util", "gstf max resp s",
                                      "frozen util", "frozen max resp s"], rows), ""]
            plain, frozen = fig["frozen_pair"]
            lines += ["Frozen vs plain GSTF210 over the queue lengths of Figure 6:", "",
                      _queue_table(d, "fig8-frozen", [plain, frozen],
                                   ["utilization_transfer", "response_ms_max"]), ""]
        else:
            lines += [_queue_table(d, fid, fig["schedulers"], fig["metrics"],
                                   theory_cols.get(fid)), ""]
        lines += [f"![{fid}]({plots[fid]})", ""]
    path = out / "report.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


# -- entry point ----------------------------------------------------------------------------

def reproduce(
    out_dir: "str | Path",
    quick: bool = False,
    catalogue_dir: Optional[Path] = None,
    progress: Optional[Callable[[int, int], None]] = None,
    pool: Optional[Pool] = None,
) -> Path:
    """Run all sweeps (in `pool`: default, one process per CPU), write PNGs, runs.csv and
    report.md into `out_dir`; return report path."""
    directory = find_catalogue(catalogue_dir)
    cat = load_catalogue(directory)
    try:
        qs = (cat["sweep"]["quick"] if quick else cat["sweep"])["queue_lengths"]
        points = plan(cat, directory, quick)
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        # The catalogue is input: a missing table or a wrong type is the user's to fix.
        raise ScenarioError(f"{directory / 'catalogue.toml'}: missing or malformed entry ({type(e).__name__}: {e})") from None
    t0 = time.perf_counter()
    runner = SweepRunner(seed=cat.get("seed"), pool=pool or Pool())
    df = runner.run(points, progress)
    wall = time.perf_counter() - t0
    df.attrs["distinct_runs"] = runner.runs_done
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    df.to_csv(out / "runs.csv", index=False)
    plots = _plots(cat, Data(df), out, qs)
    base = Scenario.from_file(directory / cat["figure"][0]["scenario"])
    _, ledger_lines = ledger.write(NAME, tables(df, device_figures(base)), out, path=directory / "claims.toml",
                                   partial=quick)
    return write_report(cat, df, out, quick, qs, wall, plots, ledger_lines)
