"""`iosched sweep`: a scenario over a grid of parameter values x seeds, in a process pool or on a
Dask cluster, as one tidy table (one row per point x seed x scheduler) plus a summary with the
mean and a 95% confidence interval of every metric across seeds.

A parameter is a dotted path into the scenario (`workload.queue_depth`, `process[0].think_us`,
`scheduler[1].timer_granularity_us`, `run.duration_s`); values are TOML values
(`1,10,100`, `0.5,1.5`, `"sequential","random"` or bare words, `true,false`).
"""

from __future__ import annotations

import copy
import itertools
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, List, Optional, Sequence, Tuple

from .pool import Pool
from .results import _NOT_SCALAR, _flatten
from .scenario import Scenario, ScenarioError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_TOKEN = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)((?:\[\d+\])*)$")

# Two-sided 95% Student t quantiles t(0.975, df) for df = 1..30, then 40, 60, 120 (standard
# table values); beyond 120 the normal 1.96.
_T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
         2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
         2.045, 2.042]
_T975_LARGE = [(40, 2.021), (60, 2.000), (120, 1.980)]


def t975(df: int) -> float:
    """The 0.975 quantile of Student's t with `df` degrees of freedom (conservative between
    table rows: the value of the next smaller tabulated df)."""
    if df < 1:
        return float("nan")
    if df <= 30:
        return _T975[df - 1]
    value = _T975[-1]
    for d, t in _T975_LARGE:
        if df >= d:
            value = t
    return value if df < 1000 else 1.960


@dataclass(frozen=True)
class Parameter:
    path: str
    values: Tuple[Any, ...]


def parse_value(text: str) -> Any:
    """A TOML value (number, bool, quoted string, array), else the bare word as a string."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        if re.fullmatch(r"[A-Za-z0-9_.()+-]+", text):
            return text
        raise ScenarioError(f"--set: value `{text}` is neither a TOML value nor a bare word") from None


def _split_values(text: str) -> List[str]:
    """Splits `v1,v2,...` at commas outside quotes and brackets."""
    parts, depth, quote, cur = [], 0, None, ""
    for ch in text:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
            continue
        cur += ch
    parts.append(cur.strip())
    return parts


def parse_set(text: str) -> Parameter:
    """`path=v1,v2,...` -> Parameter."""
    if "=" not in text:
        raise ScenarioError(f"--set {text}: expected PATH=VALUE[,VALUE...], e.g. workload.queue_depth=1,10,100")
    path, values = text.split("=", 1)
    path = path.strip()
    _tokens(path)  # checks the syntax
    items = _split_values(values)
    if not values.strip() or any(not v for v in items):
        raise ScenarioError(f"--set {text}: empty value")
    parsed = tuple(parse_value(v) for v in items)
    if len(set(map(repr, parsed))) != len(parsed):
        raise ScenarioError(f"--set {text}: a value is given twice")
    return Parameter(path, parsed)


def _tokens(path: str) -> List[Tuple[str, List[int]]]:
    out = []
    for part in path.split("."):
        m = _TOKEN.match(part)
        if not m:
            raise ScenarioError(f"--set: `{path}` is not a field path (e.g. workload.queue_depth, process[0].think_us)")
        out.append((m.group(1), [int(i) for i in re.findall(r"\d+", m.group(2))]))
    return out


def set_path(d: dict, path: str, value: Any) -> None:
    """Sets `path` in the scenario dict `d` (tables are created; array entries must exist)."""
    node: Any = d
    tokens = _tokens(path)
    for n, (key, indices) in enumerate(tokens):
        last = n == len(tokens) - 1
        if not isinstance(node, dict):
            raise ScenarioError(f"--set {path}: `{key}` is inside a value, not a table")
        if last and not indices:
            node[key] = value
            return
        if indices:
            arr = node.get(key)
            if not isinstance(arr, list):
                raise ScenarioError(f"--set {path}: the scenario has no array `{key}`")
            for k, i in enumerate(indices):
                if i >= len(arr):
                    raise ScenarioError(f"--set {path}: `{key}` has {len(arr)} entries, no [{i}]")
                if last and k == len(indices) - 1:
                    arr[i] = value
                    return
                arr = arr[i]
            node = arr
        else:
            node = node.setdefault(key, {})


def grid(base: Scenario, params: Sequence[Parameter]) -> List[Tuple[dict, Scenario]]:
    """Every combination of the parameters' values: ({path: value}, scenario), validated."""
    out = []
    for combo in itertools.product(*(p.values for p in params)):
        values = {p.path: v for p, v in zip(params, combo)}
        d = copy.deepcopy(base.to_dict())
        for path, v in values.items():
            set_path(d, path, v)
        label = ", ".join(f"{k}={v}" for k, v in values.items())
        try:
            scn = Scenario.from_dict(d, f"{base.source} [{label}]" if label else base.source)
        except ScenarioError as e:
            raise ScenarioError(f"--set {label}: {e}") from None
        out.append((values, scn))
    return out


def metric_columns(rows: list) -> List[str]:
    """The numeric columns of the tidy table that are metrics (not keys)."""
    keys = {"point", "seed", "scheduler", "scheduler_name", "device", "workload", "stopped"}
    first = rows[0] if rows else {}
    return [k for k, v in first.items() if k not in keys and not k.startswith("param:")
            and isinstance(v, (int, float)) and not isinstance(v, bool)]


def known_metrics() -> List[str]:
    """The metric columns a sweep's runs table has (the scalar fields of a run summary)."""
    import json

    from . import _native

    empty = json.loads(_native.empty_summary())
    flat = _flatten({k: v for k, v in empty.items() if k not in _NOT_SCALAR and k != "seed"})
    return metric_columns([flat])


def summarize(df, params: Sequence[Parameter]):
    """Long table: one row per (parameters, scheduler, metric) with n, mean, std, the 95%
    confidence interval's half-width and bounds (Student t across seeds)."""
    import pandas as pd

    keys = [f"param:{p.path}" for p in params] + ["scheduler"]
    metrics = [c for c in metric_columns(df.to_dict("records")[:1]) if c in df.columns]
    rows = []
    for key, g in df.groupby(keys, sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        for m in metrics:
            x = g[m].astype(float)
            n = int(x.notna().sum())
            mean = float(x.mean())
            std = float(x.std(ddof=1)) if n > 1 else float("nan")
            half = t975(n - 1) * std / math.sqrt(n) if n > 1 else float("nan")
            rows.append({**dict(zip(keys, key)), "metric": m, "n": n, "mean": mean, "std": std,
                         "ci95_half_width": half, "ci95_low": mean - half, "ci95_high": mean + half})
    return pd.DataFrame(rows)


def point_seeds(points: List[Tuple[dict, Scenario]], n: int) -> List[List[int]]:
    """Each point's seeds: its own run.seed (a swept `run.seed` included) and the n - 1 after it."""
    from .api import SEED_LIMIT, check_seed

    out = []
    for values, scn in points:
        first = check_seed(int(scn.to_dict().get("run", {}).get("seed", 1)), "run.seed")
        if first + n > SEED_LIMIT:
            label = ", ".join(f"{k}={v}" for k, v in values.items())
            raise ScenarioError(f"--seeds {n}{f' (at {label})' if label else ''}: run.seed {first} + {n} seeds "
                                "would pass 2**63 - 1, the largest seed a scenario file can hold")
        out.append([first + j for j in range(n)])
    return out


def run_sweep(base: Scenario, params: Sequence[Parameter], seeds: int, pool: Pool,
              progress: Optional[Callable[[int, int], None]] = None):
    """Runs the grid x `seeds` seeds per point (from each point's own run.seed); returns (runs
    table, summary table)."""
    import pandas as pd

    points = grid(base, params)
    seed_lists = point_seeds(points, seeds)
    # One task per scheduler (runs of a scenario are independent): finer tasks balance the pool.
    parts = [(i, seed, part) for i, (_, scn) in enumerate(points) for seed in seed_lists[i] for part in scn.split()]
    results = pool.map([(part.text, part.source, seed) for _, seed, part in parts], progress)
    by_run: dict = {}
    for (i, seed, _), summaries in zip(parts, results):
        by_run.setdefault((i, seed), []).extend(summaries)
    rows = []
    for i, (values, _) in enumerate(points):
        for seed in seed_lists[i]:
            for s in by_run[(i, seed)]:
                row = {"point": i, **{f"param:{k}": v for k, v in values.items()}, "seed": seed}
                row.update(_flatten({k: v for k, v in s.items() if k not in _NOT_SCALAR and k != "seed"}))
                rows.append(row)
    runs = pd.DataFrame(rows)
    return runs, summarize(runs, params)


def write_tables(runs, summary, out: Path) -> List[Path]:
    """runs.csv/.parquet and summary.csv/.parquet in `out`."""
    paths = []
    for name, df in [("runs", runs), ("summary", summary)]:
        csv, parquet = out / f"{name}.csv", out / f"{name}.parquet"
        df.to_csv(csv, index=False)
        df.to_parquet(parquet, index=False)
        paths += [csv, parquet]
    return paths
