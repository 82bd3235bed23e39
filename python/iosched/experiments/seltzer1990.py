"""Reproduction of Seltzer, Chen & Ousterhout 1990, "Disk Scheduling Revisited" (figures 2-8).

The sweeps and the paper's numbers live in experiments/seltzer1990/catalogue.toml; this module
runs them, draws one PNG per figure and writes report.md with our numbers beside the paper's and
a one-line verdict per claim. Tolerances are in the catalogue and were fixed before running.
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
                out.append((base, Point.make(fid, label, scheds[label], q, rpq * q)))
        for extra in fig.get("extra_points", []):
            q = extra["queue_depth"]
            out.append((base, Point.make(fid, extra["scheduler"], scheds[extra["scheduler"]],
                                         q, rpq * q)))
    return out


# -- the paper's back-of-envelope models ----------------------------------------------------

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


def _rel(ours: float, paper: float) -> float:
    return ours / paper - 1.0


def _signed(x: float) -> str:
    return f"{100 * x:+.1f}%"


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


# -- claims ---------------------------------------------------------------------------------
# Each returns (our numbers, verdict). Thresholds not in the catalogue are stated in the text.

def _where(passed: dict) -> str:
    """'at Q in [..]' summary of which queue lengths pass."""
    ok = [q for q, v in passed.items() if v]
    bad = [q for q, v in passed.items() if not v]
    if not bad:
        return "at every Q"
    return f"holds at Q in {ok or 'none'}, not at Q in {bad}"


def _claims(fig_id: str, claim: dict, d: Data, cat: dict, qs: list) -> "tuple[str, str]":
    cid = claim["id"]
    tol = claim.get("tolerance_rel")
    big_qs = [q for q in qs if q >= 10]

    if cid == "fcfs-7pct":
        u = d.series("fig2", "fcfs", "utilization_transfer")
        worst = max(abs(_rel(v, claim["value"])) for v in u)
        ours = f"{_pct(u.min())} to {_pct(u.max())} over Q = {qs[0]}..{qs[-1]} (mean {_pct(u.mean())})"
        if worst <= tol:
            return ours, f"reproduced: within {_pct(worst)} of 7% at every Q"
        return ours, f"differs: up to {_pct(worst)} from 7%"

    if cid == "ssf-io-q100":
        q = claim["queue_depth"]
        if q not in qs:
            return "not run (Q=100 not in this sweep)", "not checked"
        pos = d.value("fig3", "ssf", q, "positioning_ms_mean")
        seek = d.value("fig3", "ssf", q, "seek_ms_mean")
        rot = d.value("fig3", "ssf", q, "rotation_ms_mean")
        svc = d.value("fig3", "ssf", q, "service_ms_mean")
        cyl = d.value("fig3", "ssf", q, "seek_mean_cylinders")
        r = _rel(pos, claim["value"])
        ours = (f"{pos:.2f} ms seek + rotation ({seek:.2f} seek + {rot:.2f} rotation); "
                f"service_ms.mean incl. transfer {svc:.2f} ms; mean seek {cyl:.1f} cylinders "
                f"(paper: 8.3)")
        word = "reproduced" if abs(r) <= tol else "differs"
        return ours, f"{word}: {_signed(r)} vs 15.4 ms (like for like, transfer excluded)"

    if cid == "ssf-theory-curve":
        th = cat_fig(cat, "fig3")["theory"]
        u = d.series("fig3", "ssf", "utilization_transfer")
        rels = {q: _rel(u.loc[q], ssf_theory(q, th)[2]) for q in u.index}
        worst_q = max(rels, key=lambda q: abs(rels[q]))
        ours = "simulation vs theory: " + ", ".join(f"Q={q}: {_signed(r)}" for q, r in rels.items())
        if abs(rels[worst_q]) <= tol:
            return ours, f"reproduced: theory and simulation within {_pct(abs(rels[worst_q]))}"
        within = [q for q in rels if abs(rels[q]) <= tol]
        return ours, (f"differs: largest gap {_signed(rels[worst_q])} at Q={worst_q}; "
                      f"within {_pct(tol, 0)} at Q in {within or 'none'}")

    if cid == "q1-equals-fcfs":
        labels = [lab for lab in cat_fig(cat, fig_id)["schedulers"] if lab != "fcfs"]
        if 1 not in qs:
            return "Q=1 not run", "not checked"
        f = d.value(fig_id, "fcfs", 1, "utilization_transfer")
        rels = {lab: _rel(d.value(fig_id, lab, 1, "utilization_transfer"), f) for lab in labels}
        ours = f"Q=1 utilization vs FCFS ({_pct(f)}): " + ", ".join(
            f"{lab} {_signed(r)}" for lab, r in rels.items())
        bad = [lab for lab, r in rels.items() if abs(r) > tol]
        if not bad:
            return ours, "reproduced"
        return ours, f"differs for {', '.join(bad)}: " + ", ".join(
            f"{lab} {_pct(d.value(fig_id, lab, 1, 'utilization_transfer'))}, average I/O time "
            f"{d.value(fig_id, lab, 1, 'service_ms_mean'):.1f} ms" for lab in bad)

    if cid in ("cscan-equals-ssf", "clook-equals-ssf"):
        lab = claim.get("scheduler", "cscan")
        a = d.series("fig4", lab, "utilization_transfer")
        b = d.series("fig4", "ssf", "utilization_transfer")
        r = (a / b - 1).abs()
        ours = f"{lab.upper()}/SSF utilization - 1: " + ", ".join(
            f"Q={q}: {_signed(a.loc[q] / b.loc[q] - 1)}" for q in a.index)
        word = "reproduced" if r.max() <= tol else "differs"
        return ours, (f"{word}: within {_pct(tol, 0)} {_where({q: v <= tol for q, v in r.items()})}"
                      f"; largest difference {_pct(r.max())} (Q={r.idxmax()})")

    if cid == "ssf-max-worse":
        a = d.series("fig5", "ssf", "response_ms_max")
        b = d.series("fig5", "fcfs", "response_ms_max")
        ratios = {q: a.loc[q] / b.loc[q] for q in big_qs}
        ours = "SSF/FCFS max response: " + ", ".join(f"Q={q}: {r:.2f}x" for q, r in ratios.items())
        ok = all(r >= 1.2 for r in ratios.values())
        return ours, (("reproduced" if ok else "differs") +
                      f": ratio {min(ratios.values()):.2f}x to {max(ratios.values()):.2f}x at Q >= 10"
                      " (>= 1.2x at every Q counted as 'significantly worse')")

    if cid in ("cscan-max-le-fcfs", "clook-max-le-fcfs"):
        lab = claim.get("scheduler", "cscan")
        a = d.series("fig5", lab, "response_ms_max")
        b = d.series("fig5", "fcfs", "response_ms_max")
        ratios = {q: a.loc[q] / b.loc[q] for q in a.index}
        ours = f"{lab.upper()}/FCFS max response: " + ", ".join(f"Q={q}: {r:.2f}x" for q, r in ratios.items())
        worst = max(ratios, key=ratios.get)
        ok = ratios[worst] <= 1 + tol
        return ours, (("reproduced" if ok else "differs") +
                      f": <= {1 + tol:.2f}x FCFS {_where({q: r <= 1 + tol for q, r in ratios.items()})}"
                      f"; at most {ratios[worst]:.2f}x (Q={worst})")

    if cid == "stf-rising":
        u = d.series("fig6", "stf", "utilization_transfer")
        pts = [q for q in u.index]
        i = pts.index(1000) if 1000 in pts else None
        if i is None or i == 0:
            return "Q=1000 not run", "not checked"
        prev, nxt = pts[i - 1], (pts[i + 1] if i + 1 < len(pts) else None)
        ours = (f"STF: {_pct(u.loc[prev])} at Q={prev}, {_pct(u.loc[1000])} at Q=1000"
                + (f", {_pct(u.loc[nxt])} at Q={nxt}" if nxt else ""))
        ok = u.loc[1000] > u.loc[prev] and (nxt is None or u.loc[nxt] > u.loc[1000])
        return ours, "reproduced: still rising past Q=1000" if ok else "differs: not rising"

    if cid == "stf-5000":
        v = d.value("fig6", "stf", claim["queue_depth"], "utilization_transfer")
        r = _rel(v, claim["value"])
        word = "reproduced" if abs(r) <= tol else "differs"
        return f"{_pct(v)}", f"{word}: {_signed(r)} relative to 40% ({100 * (v - 0.4):+.1f} points)"

    if cid == "below-40":
        sub = d.df[(d.df.figure == "fig6") & (d.df.queue_depth <= 1000)]
        best = sub.loc[sub.utilization_transfer.idxmax()]
        ours = f"best at Q <= 1000: {best.label} {_pct(best.utilization_transfer)} (Q={best.queue_depth})"
        ok = best.utilization_transfer < claim["value"]
        return ours, "reproduced" if ok else "differs: reaches 40%"

    if cid == "three-to-four-times":
        q = max(x for x in qs if x <= 1000)
        f = d.value("fig6", "fcfs", q, "utilization_transfer")
        ratios = {lab: d.value("fig6", lab, q, "utilization_transfer") / f
                  for lab in ("stf", "gstf210", "wstf")}
        ours = f"at Q={q}: " + ", ".join(f"{k} {v:.2f}x" for k, v in ratios.items()) + " FCFS"
        best = max(ratios.values())
        lo, hi = claim["low"], claim["high"]
        if lo <= best <= hi:
            return ours, f"reproduced: best {best:.2f}x, within 3-4x"
        return ours, f"differs: best {best:.2f}x vs 3-4x"

    if cid == "gstf-close-stf":
        a = d.series("fig6", "gstf210", "utilization_transfer")
        b = d.series("fig6", "stf", "utilization_transfer")
        rels = {q: a.loc[q] / b.loc[q] - 1 for q in a.index}
        ours = "GSTF210/STF utilization - 1: " + ", ".join(f"Q={q}: {_signed(r)}" for q, r in rels.items())
        worst = max(rels, key=lambda q: abs(rels[q]))
        word = "reproduced" if abs(rels[worst]) <= tol else "differs"
        return ours, f"{word}: largest gap {_signed(rels[worst])} (Q={worst})"

    if cid == "wstf-io-1-2pct":
        a = d.series("fig6", "wstf", "service_ms_mean")
        b = d.series("fig6", "stf", "service_ms_mean")
        rels = {q: a.loc[q] / b.loc[q] - 1 for q in big_qs}
        ours = "WSTF/STF average I/O time - 1: " + ", ".join(f"Q={q}: {_signed(r)}" for q, r in rels.items())
        n_ok = sum(abs(r) <= claim["value"] for r in rels.values())
        word = "reproduced" if n_ok > len(rels) / 2 else "differs"
        return ours, f"{word}: within 2% at {n_ok} of {len(rels)} queue lengths (Q >= 10)"

    if cid == "stf-worst":
        others = ["cscan", "gstf210", "wstf"]
        bad = []
        for q in big_qs:
            s = d.value("fig7", "stf", q, "response_ms_max")
            if s <= max(d.value("fig7", o, q, "response_ms_max") for o in others):
                bad.append(q)
        q = max(qs)
        s = d.value("fig7", "stf", q, "response_ms_max")
        rest = {o: d.value("fig7", o, q, "response_ms_max") for o in others}
        ours = f"Q={q}: STF {s / 1000:.1f} s vs " + ", ".join(f"{k} {v / 1000:.1f} s" for k, v in rest.items())
        lead = f"{s / max(rest.values()):.1f}x the next at Q={q}"
        if not bad:
            return ours, f"reproduced: STF worst at every Q >= 10 ({lead})"
        detail = "; ".join(
            f"Q={b}: STF {d.value('fig7', 'stf', b, 'response_ms_max') / 1000:.2f} s, "
            + ", ".join(f"{o} {d.value('fig7', o, b, 'response_ms_max') / 1000:.2f} s" for o in others)
            for b in bad)
        return ours, f"partly: STF worst at Q >= 10 except {detail} ({lead})"

    if cid == "gstf-near-cscan":
        a = d.series("fig7", "gstf210", "response_ms_max")
        b = d.series("fig7", "cscan", "response_ms_max")
        rels = {q: a.loc[q] / b.loc[q] - 1 for q in big_qs}
        ours = "GSTF210/CSCAN max response - 1: " + ", ".join(f"Q={q}: {_signed(r)}" for q, r in rels.items())
        worst = max(rels, key=lambda q: abs(rels[q]))
        word = "reproduced" if abs(rels[worst]) <= tol else "differs"
        return ours, f"{word}: largest gap {_signed(rels[worst])} (Q={worst}; 'close' = within 25%)"

    if cid == "wstf-30s":
        a = d.series("fig7", "wstf", "response_ms_max")
        ours = f"WSTF max response {a.max() / 1000:.1f} s (Q={a.idxmax()})"
        ok = a.max() <= claim["value"]
        return ours, "reproduced: below 30 s at every Q" if ok else f"differs: exceeds 30 s by {a.max() / 1000 - 30:.1f} s"

    if cid == "util-rises":
        u = _group(d, "gstf", "utilization_transfer")
        drops = [(u.index[i], u.index[i + 1]) for i in range(len(u) - 1)
                 if u.iloc[i + 1] < u.iloc[i] * 0.99]
        ours = "GSTF utilization: " + ", ".join(f"g={int(g)}: {_pct(v)}" for g, v in u.items())
        steps = u.to_numpy()[1:] / u.to_numpy()[:-1] - 1
        gpeak = u.iloc[:-1].idxmax()
        if not drops:
            return ours, ("reproduced: no step down by more than 1%; "
                          f"{_pct(u.iloc[0])} at g={int(u.index[0])}, {_pct(u.iloc[:-1].max())} "
                          f"at g={int(gpeak)}, then flat (largest step {_signed(steps.min())}) "
                          f"until {_pct(u.iloc[-1])} at g={int(u.index[-1])}")
        return ours, f"differs: drops between group sizes {drops}"

    if cid == "g840-is-stf":
        u = _group(d, "gstf", "utilization_transfer")
        m = _group(d, "gstf", "response_ms_max")
        if 840 not in u.index:
            return "group 840 not run", "not checked"
        q = cat_fig(cat, "fig8")["queue_depth"]
        su = d.value("fig8-ref", "stf", q, "utilization_transfer")
        sm = d.value("fig8-ref", "stf", q, "response_ms_max")
        r = _rel(u.loc[840], su)
        ours = (f"GSTF840 {_pct(u.loc[840], 2)} / max {m.loc[840] / 1000:.1f} s; "
                f"STF {_pct(su, 2)} / max {sm / 1000:.1f} s")
        word = "reproduced" if abs(r) <= tol else "differs"
        return ours, f"{word}: utilization {_signed(r)}, max response {_signed(_rel(m.loc[840], sm))}"

    if cid == "maxresp-dip":
        m = _group(d, "gstf", "response_ms_max")
        q = cat_fig(cat, "fig8")["queue_depth"]
        sm = d.value("fig8-ref", "stf", q, "response_ms_max")
        gmin = m.idxmin()
        ours = ("GSTF max response: " + ", ".join(f"g={int(g)}: {v / 1000:.1f} s" for g, v in m.items())
                + f"; STF {sm / 1000:.1f} s")
        dip = gmin != m.index[0]
        after = m.loc[gmin:]
        rising = after.iloc[-1] > after.iloc[0]
        if dip and rising:
            return ours, f"reproduced: minimum at group {int(gmin)}, rising to {m.iloc[-1] / 1000:.1f} s at {int(m.index[-1])}"
        if rising:
            return ours, f"partly: no early dip (minimum at the smallest group, {int(gmin)}), then rising"
        return ours, f"differs: minimum at {int(gmin)}, not rising afterwards"

    if cid in ("frozen-util", "frozen-maxresp"):
        metric = "utilization_transfer" if cid == "frozen-util" else "response_ms_max"
        plain, frozen = cat_fig(cat, "fig8")["frozen_pair"]
        a = d.series("fig8-frozen", plain, metric)
        b = d.series("fig8-frozen", frozen, metric)
        red = {q: 1 - b.loc[q] / a.loc[q] for q in big_qs}
        ours = f"{frozen} vs {plain}, reduction: " + ", ".join(f"Q={q}: {_signed(r)}" for q, r in red.items())
        if cid == "frozen-util":
            pts = {q: 100 * (a.loc[q] - b.loc[q]) for q in big_qs}
            ours += " (points: " + ", ".join(f"{v:+.1f}" for v in pts.values()) + ")"
        med = float(np.median(list(red.values())))
        lo, hi = claim["low"], claim["high"]
        rng = f"{_pct(min(red.values()))} to {_pct(max(red.values()))}"
        vs = f"median reduction {_pct(med)} (range {rng}, Q >= 10) vs paper {_pct(lo, 0)}-{_pct(hi, 0)}"
        if lo <= med <= hi:
            return ours, f"reproduced: {vs}"
        gap = lo - med if med < lo else med - hi
        return ours, f"differs by {100 * gap:.1f} points: {vs}"

    return "", "no check implemented"


def _group(d: Data, name: str, metric: str) -> pd.Series:
    """GSTF metric vs group size (plain: labels gstf<g>, frozen: gstf<g>-frozen)."""
    df = d.df[d.df.figure == "fig8"]
    frozen = name.endswith("frozen")
    df = df[df.label.str.endswith("-frozen") == frozen].sort_values("x")
    return pd.Series(df[metric].to_numpy(), index=df["x"].astype(int).to_numpy())


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
                 wall_s: float, plots: dict) -> Path:
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
    lines += [
        "Utilization is `utilization_transfer` (fraction of time transferring data), average I/O "
        "time is `service_ms.mean` (includes the ~2 ms transfer), maximum response time is "
        "`response_ms.max`. Verdicts compare with tolerances fixed in the catalogue before "
        "running; nothing was tuned. All per-point numbers are in runs.csv.",
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
        lines += [f"## {fig['title']}", "", f"Paper: {fig['paper']}", "",
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
        lines += [f"![{fid}]({plots[fid]})", "", "| paper's claim | ours | verdict |",
                  "|---|---|---|"]
        for claim in fig.get("claim", []):
            ours, verdict = _claims(fid, claim, d, cat, qs)
            lines.append(f"| {claim['text']} | {ours} | {verdict} |")
        lines.append("")
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
    return write_report(cat, df, out, quick, qs, wall, plots)
