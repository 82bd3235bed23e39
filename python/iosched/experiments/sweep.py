"""Shared helpers for sweeps: one generated scenario per point, run once, tidy rows back.

A point is a base scenario with `workload.queue_depth`, `workload.requests` and the
`[[scheduler]]` list replaced by one scheduler table. Identical generated scenarios (same text)
are run once and shared between figures.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

import pandas as pd

from ..pool import Pool
from ..scenario import Scenario


@dataclass(frozen=True)
class Point:
    """One run of a sweep: the figure it belongs to, a label, a scheduler table and sizes."""

    figure: str
    label: str
    scheduler: tuple  # the [[scheduler]] table as sorted (key, value) pairs, without label
    queue_depth: int
    requests: int
    x: Optional[float] = None  # a figure-specific x value (e.g. group size); default queue_depth
    seed: Optional[int] = None  # this point's own seed (written into the scenario); default the sweep's

    @staticmethod
    def make(figure, label, table, queue_depth, requests, x=None, seed=None) -> "Point":
        items = tuple(sorted((k, v) for k, v in table.items() if k != "label"))
        return Point(figure, label, items, int(queue_depth), int(requests), x, seed)


def point_scenario(base: Scenario, p: Point) -> Scenario:
    """The base scenario with this point's queue depth, request count and scheduler."""
    d = base.to_dict()
    d.pop("name", None)  # so the same point from different base files is the same text
    d.pop("description", None)
    d.setdefault("workload", {}).update(queue_depth=p.queue_depth, requests=p.requests)
    table = dict(p.scheduler)
    table = {"name": table.pop("name"), "label": p.label, **table}
    d["scheduler"] = [table]
    if p.seed is not None:
        d.setdefault("run", {})["seed"] = p.seed
    return Scenario.from_dict(d, f"{base.source} ({p.label}, Q={p.queue_depth})")


@dataclass
class SweepRunner:
    """Runs points (deduplicated by scenario text) in `pool` and returns one row per point."""

    seed: Optional[int] = None
    pool: Pool = field(default_factory=lambda: Pool(jobs=1))
    _cache: dict = field(default_factory=dict)

    def run(
        self,
        points: "list[tuple[Scenario, Point]]",
        progress: Optional[Callable[[int, int], None]] = None,
    ) -> pd.DataFrame:
        jobs = [(point_scenario(base, p), p) for base, p in points]
        by_text = {s.text: s for s, _ in jobs}
        # A point with its own seed has it in its text: the sweep's seed must not override it.
        own_seed = {s.text for s, p in jobs if p.seed is not None}
        todo = [t for t in by_text if t not in self._cache]
        results = self.pool.map([(t, by_text[t].source, None if t in own_seed else self.seed) for t in todo],
                                progress)
        for text, [summary] in zip(todo, results):
            self._cache[text] = _row(summary)
        rows = []
        for s, p in jobs:
            row = {"figure": p.figure, "label": p.label, "queue_depth": p.queue_depth,
                   "requests": p.requests, "x": p.x if p.x is not None else p.queue_depth,
                   "seed": p.seed if p.seed is not None else self.seed}
            row.update(dict(p.scheduler))
            row.update(self._cache[s.text])
            rows.append(row)
        return pd.DataFrame(rows)

    @property
    def runs_done(self) -> int:
        """How many distinct scenarios have been run."""
        return len(self._cache)


def _row(s: dict) -> dict:
    """The figures' columns of one run's summary."""
    parts = s["per_request_ms"]
    return {
        "scheduler_name": s["scheduler_name"],
        "utilization_transfer": s["utilization_transfer"],
        "utilization_busy": s["utilization_busy"],
        "throughput_mb_s": s["throughput_mb_s"],
        "iops": s["iops"],
        "service_ms_mean": s["service_ms"]["mean"],
        "response_ms_mean": s["response_ms"]["mean"],
        "response_ms_p99": s["response_ms"]["p99"],
        "response_ms_max": s["response_ms"]["max"],
        "seek_mean_cylinders": s["seek"]["mean_cylinders"],
        "seek_ms_mean": parts["seek"],
        "rotation_ms_mean": parts["rotation"],
        "transfer_ms_mean": parts["transfer"],
        "positioning_ms_mean": parts["seek"] + parts["rotation"],
        "completed": s["requests"],
    }


def markdown_table(header: list, rows: list) -> str:
    """A GitHub-markdown table from a header and rows of already formatted cells."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)
