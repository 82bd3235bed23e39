"""`iosched advise`: which scheduler (and tunables) for this workload, by measurement.

The workload (a scenario file, or a trace replayed on a device) is characterised from a
baseline run's requests (sizes, sequentiality, think times, read/write mix, streams,
burstiness), then simulated under every candidate scheduler and tunable set, in parallel on
the process pool the sweeps use, and the candidates are ranked by a stated objective. Seelam et
al. 2005 proposed choosing by rules on a few workload features (their table of request size
against scheduler: our `adaptive`); here the rule's own choice is one of the candidates, so the
report shows what measuring every candidate gains over it (docs/advise.md).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Dict, List, Optional, Sequence

# (label, [[scheduler]] table): the default candidates, each a scheduler with one tunable set.
DEFAULT_CANDIDATES: List[tuple] = [
    ("noop", {"name": "noop"}),
    ("deadline", {"name": "deadline"}),
    ("mq-deadline", {"name": "mq-deadline"}),
    ("kyber", {"name": "kyber"}),
    ("clook", {"name": "clook"}),
    ("sptf", {"name": "sptf"}),
    ("aged-sptf", {"name": "aged-sptf"}),
    ("anticipatory", {"name": "anticipatory", "policy": "aged-sptf"}),
    ("las", {"name": "las"}),
    ("cas", {"name": "cas"}),
    ("cfq", {"name": "cfq"}),
    ("cfq slice_idle=0", {"name": "cfq", "slice_idle": 0}),
    ("bfq", {"name": "bfq"}),
    ("bfq slice_idle=0", {"name": "bfq", "slice_idle": 0}),
    ("bfq-plus", {"name": "bfq-plus"}),
    ("adaptive (Seelam's rule)", {"name": "adaptive"}),
]

OBJECTIVES = ("throughput", "mean", "p99", "fairness", "mix")
DEFAULT_WEIGHTS = {"throughput": 1.0, "mean": 1.0, "p99": 1.0, "fairness": 1.0}


class AdviseError(ValueError):
    pass


def parse_weights(text: Optional[str]) -> Dict[str, float]:
    """`throughput=2,p99=1`: weights of the mix (the others 0)."""
    if not text:
        return dict(DEFAULT_WEIGHTS)
    out = {k: 0.0 for k in DEFAULT_WEIGHTS}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        key = key.strip()
        if not sep or key not in out:
            raise AdviseError(f"--weights: `{part}`: expected METRIC=WEIGHT with METRIC one of {', '.join(out)}")
        try:
            w = float(value)
        except ValueError:
            raise AdviseError(f"--weights: `{part}`: the weight is not a number") from None
        if not (math.isfinite(w) and w >= 0):
            raise AdviseError(f"--weights: `{part}`: the weight must be a non-negative number")
        out[key] = w
    if sum(out.values()) == 0:
        raise AdviseError("--weights: at least one weight must be positive")
    return out


def characterise(requests) -> dict:
    """Workload features from a run's per-request table (pandas DataFrame of `Results.requests`)."""
    import numpy as np

    df = requests.sort_values("issue_ns", kind="stable")
    n = len(df)
    if n == 0:
        return {"requests": 0}
    sizes_kib = df["size_sectors"].to_numpy() * 512 / 1024
    reads = int((df["op"] == "read").sum())
    # Signed: nanosecond columns are unsigned, and differences may be negative.
    issue = df["issue_ns"].to_numpy().astype(np.int64)
    gaps = np.diff(issue) / 1e6
    sequential = 0
    think_ms = []
    streams = 0
    for _, g in df.groupby("pid", sort=False):
        streams += 1
        start = g["start_sector"].to_numpy()
        end = start + g["size_sectors"].to_numpy()
        sequential += int((start[1:] == end[:-1]).sum())
        # Think time: from a request's completion to the same stream's next issue; negative
        # when the stream had the next request out before (open loop, or a queue depth > 1).
        t = (g["issue_ns"].to_numpy().astype(np.int64)[1:] - g["complete_ns"].to_numpy().astype(np.int64)[:-1]) / 1e6
        think_ms.extend(t.tolist())
    think = np.array(think_ms) if think_ms else np.array([0.0])
    dependent = float((think >= 0).mean()) if len(think_ms) else 0.0
    cv = float(gaps.std() / gaps.mean()) if len(gaps) > 1 and gaps.mean() > 0 else 0.0
    return {
        "requests": n,
        "read_fraction": reads / n,
        "size_kib_mean": float(sizes_kib.mean()),
        "size_kib_p50": float(np.median(sizes_kib)),
        "size_kib_max": float(sizes_kib.max()),
        # A request starting where its stream's previous one ended.
        "sequential_fraction": sequential / max(1, n - streams),
        "streams": streams,
        "interarrival_ms_mean": float(gaps.mean()) if len(gaps) else 0.0,
        # Burstiness: the coefficient of variation of inter-arrival times (1 for Poisson
        # arrivals, above 1 for bursts).
        "interarrival_cv": cv,
        # Of a stream's requests after its first, the fraction issued after the previous one
        # completed (1: each waits for the last, as a synchronous reader; 0: open loop), and the
        # median think time of those.
        "dependent_fraction": dependent,
        "think_ms_median": float(np.median(think[think >= 0])) if (think >= 0).any() else None,
    }


def jain(values: Sequence[float]) -> float:
    """Jain's fairness index (1 = all equal)."""
    v = [x for x in values if x > 0]
    if not v:
        return 1.0
    return sum(v) ** 2 / (len(v) * sum(x * x for x in v))


def parse_objective(text: str) -> tuple:
    """`p99` or `p99@wal`: (objective, the process it is about or None). A process-focused
    objective is throughput, mean or p99 of that process (or of the instances of a [[process]]
    entry: `reader` means reader1, reader2, ...)."""
    objective, at, focus = text.partition("@")
    objective, focus = objective.strip(), focus.strip()
    if objective not in OBJECTIVES:
        raise AdviseError(f"--objective: unknown objective `{objective}` (known: {', '.join(OBJECTIVES)}, "
                          f"and {', '.join(FOCUSED)}@PROCESS)")
    if at:
        if objective not in FOCUSED:
            raise AdviseError(f"--objective {text}: only {', '.join(FOCUSED)} can be about one process or group")
        if not focus:
            raise AdviseError(f"--objective {text}: name the process after @")
    return objective, (focus or None)


FOCUSED = ("throughput", "mean", "p99")


def focus_processes(s: dict, focus: str) -> list:
    """The processes `focus` names in a run summary: the one of that name, else the instances of
    a [[process]] entry of that name (NAME1, NAME2, ...)."""
    import re

    exact = [p for p in s["processes"] if p["name"] == focus]
    if exact:
        return exact
    pattern = re.compile(re.escape(focus) + r"\d+")
    return [p for p in s["processes"] if pattern.fullmatch(p["name"])]


def _mixture_quantile(procs: list, q: float) -> float:
    """The q-quantile of the processes' pooled response times, from each one's sampled CDF
    (`response_cdf_ms` at CDF_QUANTILES), weighted by its requests: exact for one process,
    within the samples' spacing for several."""
    from ._native import CDF_QUANTILES
    import numpy as np

    qs = np.asarray(CDF_QUANTILES)
    weights = np.array([p["requests"] for p in procs], dtype=float)
    weights /= weights.sum()
    curves = [np.asarray(p["response_cdf_ms"]) for p in procs]
    if len(procs) == 1:
        return float(np.interp(q, qs, curves[0]))

    def pooled_cdf(x: float) -> float:
        return float(sum(w * np.interp(x, c, qs, left=0.0, right=1.0) for w, c in zip(weights, curves)))

    lo, hi = min(float(c[0]) for c in curves), max(float(c[-1]) for c in curves)
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if pooled_cdf(mid) < q else (lo, mid)
    return hi


def metrics(s: dict, focus: Optional[str] = None) -> dict:
    """A candidate's run summary as the ranking's metrics; with `focus`, throughput, mean and p99
    are the focused processes' (fairness stays the run's)."""
    procs = [p for p in s["processes"] if p["requests"] >= max(1, 0.01 * s["requests"])]
    out = {
        "throughput_mb_s": s["throughput_mb_s"],
        "response_ms_mean": s["response_ms"]["mean"],
        "response_ms_p99": s["response_ms"]["p99"],
        # Equal waiting across streams: Jain's index of their mean response times.
        "fairness_jain": jain([p["response_ms"]["mean"] for p in procs]),
        "elapsed_s": s["elapsed_s"],
    }
    if focus is not None:
        mine = [p for p in focus_processes(s, focus) if p["requests"] > 0]
        n = sum(p["requests"] for p in mine)
        out.update({
            "throughput_mb_s": sum(p["throughput_mb_s"] for p in mine),
            "response_ms_mean": sum(p["response_ms"]["mean"] * p["requests"] for p in mine) / n if n else math.nan,
            "response_ms_p99": _mixture_quantile(mine, 0.99) if n else math.nan,
        })
    return out


def score(rows: List[dict], objective: str, weights: Dict[str, float]) -> None:
    """Adds `score` (higher is better, 1 = best on every weighted metric) to each row."""
    best_tp = max(r["throughput_mb_s"] for r in rows) or 1.0
    best_mean = min(r["response_ms_mean"] for r in rows) or 1e-9
    best_p99 = min(r["response_ms_p99"] for r in rows) or 1e-9
    best_fair = max(r["fairness_jain"] for r in rows) or 1.0
    for r in rows:
        parts = {
            "throughput": r["throughput_mb_s"] / best_tp,
            "mean": best_mean / r["response_ms_mean"] if r["response_ms_mean"] > 0 else 1.0,
            "p99": best_p99 / r["response_ms_p99"] if r["response_ms_p99"] > 0 else 1.0,
            "fairness": r["fairness_jain"] / best_fair,
        }
        if objective == "mix":
            # Weighted geometric mean of each metric relative to the best candidate's.
            total = sum(weights.values())
            r["score"] = math.exp(sum(w * math.log(max(parts[k], 1e-12)) for k, w in weights.items()) / total)
        else:
            r["score"] = parts[objective]


def advise(scenario_dict: dict, candidates: List[tuple], objective: str, weights: Dict[str, float], pool,
           progress=None, source: str = "<dict>") -> dict:
    """Runs the baseline and every candidate; returns the characterisation and the ranking.
    `objective` may name a process (`p99@wal`, parse_objective). `source`: the scenario's file,
    if it came from one (its relative paths start there)."""
    from . import run
    from .scenario import Scenario

    objective, focus = parse_objective(objective)
    base = dict(scenario_dict)
    base["scheduler"] = [{"name": "noop", "label": "baseline (noop)"}]
    baseline = run(Scenario.from_dict(base, source), records=True)
    if focus is not None and not focus_processes(baseline.summaries[0], focus):
        names = ", ".join(p["name"] for p in baseline.summaries[0]["processes"][:20])
        raise AdviseError(f"--objective {objective}@{focus}: no process `{focus}` (nor {focus}1, {focus}2, ...) in the "
                          f"workload; its processes: {names}")
    features = characterise(baseline.requests)
    tasks = []
    for label, table in candidates:
        s = dict(scenario_dict)
        s["scheduler"] = [dict(table, label=label)]
        scn = Scenario.from_dict(s, source)
        tasks.append((scn.text, scn.source, None))
    results = pool.map(tasks, progress=progress)
    rows = []
    for (label, table), summaries in zip(candidates, results):
        row = {"candidate": label, "scheduler": table["name"], **metrics(summaries[0], focus)}
        if table["name"] == "adaptive":
            # What the rule chose: adaptive counts its dispatches per table scheduler.
            c = summaries[0]["scheduler_counters"]
            used = [f"{k[len('dispatched_'):]} ({v:,})" for k, v in sorted(c.items()) if k.startswith("dispatched_") and v]
            row["note"] = f"dispatched by {', '.join(used) or 'none'}; {c.get('switches', 0)} switches"
        rows.append(row)
    score(rows, objective, weights)
    rows.sort(key=lambda r: (-r["score"], r["candidate"]))
    for i, r in enumerate(rows, 1):
        r["rank"] = i
    return {"characterisation": features, "objective": objective, "focus": focus,
            "weights": weights if objective == "mix" else None, "ranking": rows}


def select_candidates(names: Optional[str]) -> List[tuple]:
    if not names:
        return list(DEFAULT_CANDIDATES)
    known = {label: t for label, t in DEFAULT_CANDIDATES}
    out = []
    for name in [x.strip() for x in names.split(",") if x.strip()]:
        if name in known:
            out.append((name, known[name]))
            continue
        from . import list_schedulers

        if name not in {s["name"] for s in list_schedulers()}:
            raise AdviseError(f"--candidates: unknown scheduler `{name}`")
        out.append((name, {"name": name}))
    if not out:
        raise AdviseError("--candidates: no candidate given")
    return out


def report_markdown(source: str, result: dict) -> str:
    f = result["characterisation"]
    lines = [f"# iosched advise: {source}", "", "## The workload (from a baseline run under noop)", ""]
    lines += ["| feature | value |", "|---|---|"]
    for k, v in f.items():
        lines.append(f"| {k} | {v:.4g} |" if isinstance(v, float) else f"| {k} | {v} |")
    obj = result["objective"]
    if result.get("focus"):
        obj += f" of process {result['focus']} (its throughput, mean and p99 in the table; fairness is the run's)"
    if obj == "mix":
        obj += " (weighted geometric mean of each metric relative to the best: " + ", ".join(
            f"{k} {w:g}" for k, w in result["weights"].items()) + ")"
    lines += ["", f"## Ranking by {obj}", "",
              "| rank | candidate | score | MB/s | mean ms | p99 ms | fairness (Jain) |", "|---|---|---|---|---|---|---|"]
    for r in result["ranking"]:
        lines.append(f"| {r['rank']} | {r['candidate']} | {r['score']:.3f} | {r['throughput_mb_s']:.2f} | "
                     f"{r['response_ms_mean']:.1f} | {r['response_ms_p99']:.1f} | {r['fairness_jain']:.3f} |")
    lines += [""] + [f"{r['candidate']}: {r['note']}" for r in result["ranking"] if r.get("note")]
    return "\n".join(lines) + "\n"
