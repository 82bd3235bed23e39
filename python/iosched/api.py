"""Running scenarios and listing what the simulator offers."""

from __future__ import annotations

import _thread
import os
TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at start-up

from . import _native
from .results import Results
from .scenario import Scenario, ScenarioError

# json, pathlib and collections are imported where used: `iosched run FILE --json` runs
# without them (with what they import, a tenth of a short run's time).
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path
    from typing import Any, Callable, Optional, Union

    from .progress import Progress

    ScenarioLike = Union[Scenario, str, Path, Mapping[str, Any]]


def as_scenario(scenario: ScenarioLike, argument: str = "scenario") -> Scenario:
    """A Scenario from a Scenario, a path to a scenario file, a dict, or TOML text.

    A str is TOML text when it holds a newline or an `=`; otherwise it is a path. Anything
    else is a TypeError that names `argument` and what it got."""
    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, os.PathLike):  # a Path, without importing pathlib to ask
        return Scenario.from_file(scenario)
    if isinstance(scenario, str):
        if "\n" in scenario or "=" in scenario:
            return Scenario.from_text(scenario)
        return Scenario.from_file(scenario)
    from collections.abc import Mapping

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


def __getattr__(name: str):
    # Progress lives in .progress, imported when first asked for (PEP 562): see there.
    if name == "Progress":
        from .progress import Progress

        return Progress
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | {"Progress"})


def _path_str(path: "Optional[str | Path]") -> Optional[str]:
    """str(Path(path)), or None: pathlib is imported only for a run that writes its records."""
    if path is None:
        return None
    from pathlib import Path

    return str(Path(path))


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
    csv_path = _path_str(requests_csv)
    parquet_path = _path_str(requests_parquet)
    stream_path = csv_path
    if parquet_path is not None and csv_path is None:
        # The run streams to a temporary CSV beside the Parquet file (same filesystem, no
        # size limit of /tmp), removed once converted.
        import tempfile
        from pathlib import Path

        fd, stream_path = tempfile.mkstemp(prefix=f".{Path(parquet_path).name}.", suffix=".csv",
                                           dir=str(Path(parquet_path).parent))
        os.close(fd)
    handle = _native.RunHandle()
    outcome: dict = {}
    # Held until the run ends: a threading.Event without importing threading (half a
    # millisecond of `run --json`). Whether it ended is outcome["done"], set before the lock
    # is released, so that a Ctrl-C just after this thread took the lock loses nothing.
    running = _thread.allocate_lock()
    running.acquire()

    def work() -> None:
        try:
            outcome["runs"] = _native.run_scenario(scn.text, scn.source, seed, records, stream_path, handle)
        except BaseException as e:  # handed to the caller's thread
            outcome["error"] = e
        finally:
            outcome["done"] = True
            running.release()

    # The simulation runs on a worker thread (it releases the GIL), so that this thread can
    # report progress and turn Ctrl-C into a cancel; a lock, not a join, is waited on because
    # an interrupted join can leave the thread's state unreliable.
    _thread.start_new_thread(work, ())
    runs_total = scn.scheduler_count or 1
    interrupted = False
    if progress is not None:
        from .progress import Progress
    while "done" not in outcome:
        try:
            if not running.acquire(timeout=0.1) and progress is not None:
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
    import json

    return json.loads(resolved_text(scenario))


def resolved_text(scenario: ScenarioLike) -> str:
    """[`resolved`] as the JSON text the simulator writes."""
    scn = as_scenario(scenario)
    return _native.resolved_scenario(scn.text, scn.source)


def list_schedulers() -> list:
    """Schedulers: dicts with name, aliases, kind, summary, source, tunables
    (each: name, default, unit, min, max, help)."""
    import json

    return json.loads(_native.list_schedulers())


def list_devices() -> list:
    """Device presets: dicts with name, description, rpm, capacity_gb, cylinders, seek_*_ms,
    media_rate_*_mb_s, cache_*, source and estimated (which figures are guesses)."""
    import json

    return json.loads(_native.list_devices())


def list_flash_devices() -> list:
    """Flash presets: dicts with name, interface, geometry (channels, dies per channel, planes,
    blocks, pages, page KiB), timing (page read/program us, erase ms, channel and link MB/s,
    command overhead), over-provisioning, write buffer, GC policy, precondition, queue depth,
    and the model's capacity_gb (docs/devices-flash.md)."""
    import json

    return json.loads(_native.list_flash_devices())


__all__ = ["run", "resolved", "as_scenario", "check_seed", "Progress", "list_schedulers", "list_devices", "ScenarioError"]
