"""Replaying a block trace from Python: a scenario built around a trace file, run under any
schedulers on any device (the same `[workload] kind = "trace"` the CLI reads).

    >>> import iosched
    >>> res = iosched.replay("web.trace", ["noop", "deadline", "sptf"], device="maxtor-stm332061")
    >>> res.runs[["scheduler", "throughput_mb_s", "response_ms_mean", "response_ms_p99"]]
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Optional, Union

from .api import run
from .results import Results

DEFAULT_DEVICE = "maxtor-stm332061"


def trace_scenario(
    trace: Union[str, Path],
    schedulers: Iterable[Union[str, dict]] = ("noop",),
    *,
    device: str = DEFAULT_DEVICE,
    replay: str = "open",
    time_scale: Optional[float] = None,
    queue_depth: Optional[int] = None,
    format: Optional[str] = None,
    sector_map: Optional[str] = None,
    skip_bad: bool = False,
    devices: Optional[list] = None,
    max_requests: Optional[int] = None,
    drive_queue_depth: Optional[int] = None,
    block: Optional[dict] = None,
    duration_s: Optional[float] = None,
    seed: int = 1,
    name: Optional[str] = None,
) -> dict:
    """The scenario (as a dict) replaying `trace` under each of `schedulers` (names, or tables
    with `name`, `label` and tunables). Arguments are the `[workload]` fields of docs/scenarios.md."""
    workload: dict = {"kind": "trace", "trace": str(Path(trace).resolve()), "replay": replay}
    for key, value in [
        ("time_scale", time_scale),
        ("queue_depth", queue_depth),
        ("format", format),
        ("sector_map", sector_map),
        ("devices", devices),
        ("max_requests", max_requests),
    ]:
        if value is not None:
            workload[key] = value
    if skip_bad:
        workload["skip_bad"] = True
    dev: dict = {"preset": device}
    if drive_queue_depth is not None:
        dev["queue_depth"] = drive_queue_depth
    scenario: dict = {
        "name": name or f"replay of {Path(trace).name}",
        "device": dev,
        "workload": workload,
        "run": {"seed": seed},
        "scheduler": [s if isinstance(s, dict) else {"name": s} for s in schedulers],
    }
    if duration_s is not None:
        scenario["run"]["duration_s"] = duration_s
    if block is not None:
        scenario["block"] = block
    return scenario


def replay(trace: Union[str, Path], schedulers: Iterable[Union[str, dict]] = ("noop",), **options) -> Results:
    """Replays `trace` under each scheduler (see `trace_scenario` for the options); records are
    not kept (`Results.runs` and `.processes` hold the summaries)."""
    return run(trace_scenario(trace, schedulers, **options), records=False)


__all__ = ["trace_scenario", "replay", "DEFAULT_DEVICE"]
