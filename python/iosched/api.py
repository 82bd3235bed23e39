"""Running scenarios and listing what the simulator offers."""

from __future__ import annotations

import json
import os
import threading
from collections import namedtuple
from collections.abc import Mapping
from pathlib import Path
TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at start-up

from . import _native
from .results import Results
from .scenario import Scenario, ScenarioError

if TYPE_CHECKING:
    from typing import Any, Callable, Optional, Union

    ScenarioLike = Union[Scenario, str, Path, Mapping[str, Any]]


def as_scenario(scenario: ScenarioLike, argument: str = "scenario") -> Scenario:
    """A Scenario from a Scenario, a path to a scenario file, a dict, or TOML text.

    A str is TOML text when it holds a newline or an `=`; otherwise it is a path. Anything
    else is a TypeError that names `argument` and what it got."""
    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, Path):
        return Scenario.from_file(scenario)
    if isinstance(scenario, str):
        if "\n" in scenario or "=" in scenario:
            return Scenario.from_text(scenario)
        return Scenario.from_file(scenario)
    if isinstance(scenario, Mapping):
        return Scenario.from_dict(scenario)
    raise TypeError(
        f"{argument}: expected a Scenario, a path to a scenario file, a dict or TOML text, "
        f"got {type(scenario).__name__} {scenario!r:.80}"
    )


# Seeds are the integers a scenario file can hold as `run.seed`: TOML's integers are signed
# 64-bit, so [0, 2**63) everywhere (a file, --seed, the API, a sweep's seeds).
SEED_LIMIT = 2**63


def check_seed(seed: Any, argument: str = "seed") -> Optional[int]:
    """`seed` as an int in [0, 2**63) (numpy integers accepted), or None."""
    if seed is None:
        return None
    if isinstance(seed, bool) or not hasattr(seed, "__index__"):
        raise TypeError(f"{argument}: expected an integer in [0, 2**63), got {type(seed).__name__} {seed!r:.80}")
    value = seed.__index__()
    if not 0 <= value < SEED_LIMIT:
        raise ValueError(f"{argument}: must be in [0, 2**63) (the integers a scenario file's run.seed can hold), got {value}")
    return value


class Progress(namedtuple("Progress", ("runs_done", "runs_total", "completed", "simulated_s"))):
    """What a running scenario has done: runs (schedulers) finished of `runs_total`, and in the
    current run the requests completed and the simulated time reached. (Immutable; a named
    tuple rather than a dataclass, whose import is a tenth of a short run's time.)"""

    __slots__ = ()


def run(
    scenario: ScenarioLike,
    seed: Optional[int] = None,
    records: bool = True,
    progress: Optional[Callable[[Progress], None]] = None,
    requests_csv: "Optional[str | Path]" = None,
    requests_parquet: "Optional[str | Path]" = None,
) -> Results:
    """Run every scheduler of `scenario` (a Scenario, a path, a dict or TOML text); `seed`
    overrides the scenario's run.seed.

    Summaries are computed as the run goes, in constant memory. With `records=True` every
    request's record is also kept in memory (``Results.requests``); `requests_csv` streams them
    to a CSV file instead, for runs of any length; `requests_parquet` writes the same columns as
    Parquet (streamed to a CSV first, beside it, then converted block by block: constant memory).
    `progress(Progress)` is called about ten
    times a second. Ctrl-C (KeyboardInterrupt) stops the simulation within a few thousand
    events: the results so far are returned, the interrupted run's summary says `stopped`, and
    ``Results.interrupted`` is True.
    """
    scn = as_scenario(scenario)
    seed = check_seed(seed)
    if not isinstance(records, bool):
        raise TypeError(f"records: expected True or False, got {type(records).__name__} {records!r:.80}")
    csv_path = None if requests_csv is None else str(Path(requests_csv))
    parquet_path = None if requests_parquet is None else str(Path(requests_parquet))
    stream_path = csv_path
    if parquet_path is not None and csv_path is None:
        # The run streams to a temporary CSV beside the Parquet file (same filesystem, no
        # size limit of /tmp), removed once converted.
        import tempfile

        fd, stream_path = tempfile.mkstemp(prefix=f".{Path(parquet_path).name}.", suffix=".csv",
                                           dir=str(Path(parquet_path).parent))
        os.close(fd)
    handle = _native.RunHandle()
    outcome: dict = {}

    finished = threading.Event()

    def work() -> None:
        try:
            outcome["runs"] = _native.run_scenario(scn.text, scn.source, seed, records, stream_path, handle)
        except BaseException as e:  # handed to the caller's thread
            outcome["error"] = e
        finally:
            finished.set()

    # The simulation runs on a worker thread (it releases the GIL), so that this thread can
    # report progress and turn Ctrl-C into a cancel; an Event, not Thread.join, is waited on
    # because an interrupted join can leave the thread's state unreliable.
    worker = threading.Thread(target=work, name="iosched-run", daemon=True)
    worker.start()
    runs_total = scn.scheduler_count or 1
    interrupted = False
    while not finished.is_set():
        try:
            if not finished.wait(0.1) and progress is not None:
                progress(Progress(handle.runs_done, runs_total, handle.completed, handle.simulated_ns / 1e9))
        except KeyboardInterrupt:
            handle.cancel()
            interrupted = True
    try:
        if "error" in outcome:
            raise outcome["error"]
        if parquet_path is not None:
            from .parquet import csv_to_parquet

            csv_to_parquet(stream_path, parquet_path)
    finally:
        if stream_path is not None and stream_path != csv_path and os.path.exists(stream_path):
            os.unlink(stream_path)
    texts = [summary_json for summary_json, _ in outcome["runs"]]
    columns = [cols for _, cols in outcome["runs"]]
    if progress is not None:
        progress(Progress(len(texts), runs_total, 0, 0.0))
    return Results(scn.name, None, columns, interrupted=interrupted, requests_csv=csv_path,
                   requests_parquet=parquet_path, summary_texts=texts)


def resolved(scenario: ScenarioLike) -> dict:
    """The scenario with every default filled in: its sections, the device's parameters, each
    scheduler with all its tunables."""
    return json.loads(resolved_text(scenario))


def resolved_text(scenario: ScenarioLike) -> str:
    """[`resolved`] as the JSON text the simulator writes."""
    scn = as_scenario(scenario)
    return _native.resolved_scenario(scn.text, scn.source)


def list_schedulers() -> list:
    """Schedulers: dicts with name, aliases, kind, summary, source, tunables
    (each: name, default, unit, min, max, help)."""
    return json.loads(_native.list_schedulers())


def list_devices() -> list:
    """Device presets: dicts with name, description, rpm, capacity_gb, cylinders, seek_*_ms,
    media_rate_*_mb_s, cache_*, source and estimated (which figures are guesses)."""
    return json.loads(_native.list_devices())


def list_flash_devices() -> list:
    """Flash presets: dicts with name, interface, geometry (channels, dies per channel, planes,
    blocks, pages, page KiB), timing (page read/program us, erase ms, channel and link MB/s,
    command overhead), over-provisioning, write buffer, GC policy, precondition, queue depth,
    and the model's capacity_gb (docs/devices-flash.md)."""
    return json.loads(_native.list_flash_devices())


__all__ = ["run", "resolved", "as_scenario", "check_seed", "Progress", "list_schedulers", "list_devices", "ScenarioError"]
