"""Shared helpers for sweeps: one generated scenario per point, run once, tidy rows back.

A point is a base scenario with `workload.queue_depth`, `workload.requests` and the
`[[scheduler]]` list replaced by one scheduler table. Identical generated scenarios (same text)
are run once and shared between figures.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np
import pandas as pd

from .. import _native
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

    @staticmethod
    def make(figure, label, table, queue_depth, requests, x=None) -> "Point":
        items = tuple(sorted((k, v) for k, v in table.items() if k != "label"))
        return Point(figure, label, items, int(queue_depth), int(requests), x)


def point_scenario(base: Scenario, p: Point) -> Scenario:
    """The base scenario with this point's queue depth, request count and scheduler."""
    d = base.to_dict()
    d.pop("name", None)  # so the same point from different base files is the same text
    d.pop("description", None)
    d.setdefault("workload", {}).update(queue_depth=p.queue_depth, requests=p.requests)
    table = dict(p.scheduler)
    table = {"name": table.pop("name"), "label": p.label, **table}
    d["scheduler"] = [table]
    return Scenario.from_dict(d, f"{base.source} ({p.label}, Q={p.queue_depth})")


def _ms(a: np.ndarray) -> float:
    return float(a.mean()) / 1e6 if len(a) else float("nan")


@dataclass
class SweepRunner:
    """Runs points (deduplicated by scenario text) and returns one row per point."""

    seed: Optional[int] = None
    _cache: dict = field(default_factory=dict)

    def run(
        self,
        points: "list[tuple[Scenario, Point]]",
        progress: Optional[Callable[[int, int], None]] = None,
    ) -> pd.DataFrame:
        jobs = [(point_scenario(base, p), p) for base, p in points]
        todo = list(dict.fromkeys(s.text for s, _ in jobs if s.text not in self._cache))
        by_text = {s.text: s for s, _ in jobs}
        if progress:
            progress(0, len(todo))
        for i, text in enumerate(todo):
            self._cache[text] = self._run_one(by_text[text])
            if progress:
                progress(i + 1, len(todo))
        rows = []
        for s, p in jobs:
            row = {"figure": p.figure, "label": p.label, "queue_depth": p.queue_depth,
                   "requests": p.requests, "x": p.x if p.x is not None else p.queue_depth}
            row.update(dict(p.scheduler))
            row.update(self._cache[s.text])
            rows.append(row)
        return pd.DataFrame(rows)

    @property
    def runs_done(self) -> int:
        """How many distinct scenarios have been run."""
        return len(self._cache)

    def _run_one(self, scenario: Scenario) -> dict:
        t0 = time.perf_counter()
        [(summary_json, cols)] = _native.run_scenario(
            scenario.text, scenario.source, self.seed, True
        )
        wall = time.perf_counter() - t0
        s = json.loads(summary_json)
        arr = {k: np.frombuffer(buf, dtype=dt) for k, (dt, buf) in cols.items()}
        seek, rot, xfer = _ms(arr["seek_ns"]), _ms(arr["rotation_ns"]), _ms(arr["transfer_ns"])
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
            "seek_ms_mean": seek,
            "rotation_ms_mean": rot,
            "transfer_ms_mean": xfer,
            "positioning_ms_mean": seek + rot,
            "completed": s["requests"],
            "wall_s": wall,
        }


def markdown_table(header: list, rows: list) -> str:
    """A GitHub-markdown table from a header and rows of already formatted cells."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)
