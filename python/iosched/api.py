"""Running scenarios and listing what the simulator offers."""

from __future__ import annotations

import json
from typing import Callable, Optional

from . import _native
from .results import Results
from .scenario import Scenario


def run(
    scenario: Scenario,
    seed: Optional[int] = None,
    records: bool = True,
    progress: Optional[Callable[[int, int], None]] = None,
) -> Results:
    """Run every scheduler of `scenario`; `seed` overrides the scenario's run.seed.

    With `records=False` only summaries are kept (``Results.requests`` is None).
    `progress(done, total)` is called after each scheduler's run when given.
    """
    parts = scenario.split() if progress is not None else [scenario]
    summaries, columns = [], []
    if progress is not None:
        progress(0, len(parts))
    for i, part in enumerate(parts):
        for summary_json, cols in _native.run_scenario(part.text, part.source, seed, records):
            summaries.append(json.loads(summary_json))
            columns.append(cols)
        if progress is not None:
            progress(i + 1, len(parts))
    return Results(scenario.name, summaries, columns)


def list_schedulers() -> list:
    """Schedulers: dicts with name, aliases, kind, summary, source, tunables
    (each: name, default, unit, min, max, help)."""
    return json.loads(_native.list_schedulers())


def list_devices() -> list:
    """Device presets: dicts with name, description, rpm, capacity_gb, cylinders, seek_*_ms,
    media_rate_*_mb_s, cache_*, source and estimated (which figures are guesses)."""
    return json.loads(_native.list_devices())
