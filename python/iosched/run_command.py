"""`iosched run`: run every scheduler of a scenario and print the summary. The command's whole
body, shared by the full command line (cli.py, typer) and the lean entry (entry.py), which runs
it without importing typer, rich or pydantic: rich is imported only for a progress bar on a
terminal, once a run has lasted a tenth of a second (tables are drawn by text_table.py).

Errors are CommandError (printed as `error: ...`, exit status 2)."""

from __future__ import annotations

import os
import time
TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at start-up

from .command_error import CommandError

if TYPE_CHECKING:
    from pathlib import Path
    from typing import List, Optional

    from .tables import TableData

# A rate is shown once the run has taken this long (before, it is one tick over no time).
RATE_AFTER_S = 0.5
# Exit status of a run stopped by Ctrl-C (its results so far are printed).
INTERRUPTED_STATUS = 130


class RunOptions:
    """`iosched run`'s options, as either command line parsed them. (A plain class: a dataclass
    would import `dataclasses` and `inspect`, a tenth of a short run's time.) `file` is a str
    from the lean entry (which does not import pathlib), a Path from the full command line."""

    __slots__ = ("file", "seed", "fmt", "requests_csv", "requests_parquet", "plot", "traces", "schedulers", "device",
                 "quiet")

    def __init__(self, file: Optional[str | Path] = None, seed: Optional[int] = None, fmt: str = "table",
                 requests_csv: Optional[Path] = None, requests_parquet: Optional[Path] = None,
                 plot: Optional[Path] = None, traces: Optional[Path] = None, schedulers: Optional[List[str]] = None,
                 device: Optional[str] = None, quiet: bool = False):
        self.file = file
        self.seed = seed
        self.fmt = fmt
        self.requests_csv = requests_csv
        self.requests_parquet = requests_parquet
        self.plot = plot
        self.traces = traces
        self.schedulers: List[str] = [] if schedulers is None else schedulers
        self.device = device
        self.quiet = quiet

    def __repr__(self) -> str:
        return "RunOptions(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__slots__) + ")"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RunOptions):
            return NotImplemented
        return all(getattr(self, k) == getattr(other, k) for k in self.__slots__)


def use_traces(traces: Optional[Path]) -> None:
    """--traces DIR: what `{traces}` means in scenario files for this command (and its workers)."""
    from .paths import ENV

    if traces is not None:
        if not traces.is_dir():
            raise CommandError(f"--traces {traces}: not a directory")
        os.environ[ENV] = str(traces)


def progress_status(p, run_elapsed_s: float) -> str:
    """The status text of `iosched run`'s bar: the current run's requests, simulated time and,
    once it has run RATE_AFTER_S, its rate; after the last run, how many ran."""
    if p.runs_done >= p.runs_total:
        return f"{p.runs_total} run{'s' if p.runs_total != 1 else ''} done"
    text = f"run {p.runs_done + 1}/{p.runs_total}: {p.completed:,} requests, {p.simulated_s:,.1f} s simulated"
    if run_elapsed_s >= RATE_AFTER_S:
        text += f", {p.completed / run_elapsed_s:,.0f} requests/s"
    return text


def _f(x: float, digits: int = 1) -> str:
    return f"{x:,.{digits}f}"


def _pct(x: float) -> str:
    return f"{x:.1%}"


def runs_table(summaries: list) -> TableData:
    """One row per run; CSV and JSON carry every number of the summary (Results.runs' columns)."""
    from .results import flat_run_rows
    from .tables import Column, TableData

    return TableData("runs", "runs", [
        Column("scheduler", "scheduler"),
        Column("device", "device", 3),
        Column("throughput_mb_s", "MB/s", 0, lambda x: _f(x, 2), right=True),
        Column("iops", "IOPS", 2, _f, right=True),
        Column("utilization_busy", "util busy", 2, _pct, right=True),
        Column("utilization_transfer", "util transfer", 4, _pct, right=True),
        Column("response_ms_mean", "resp mean ms", 1, _f, right=True),
        Column("response_ms_p95", "resp p95 ms", 3, _f, right=True),
        Column("response_ms_p99", "resp p99 ms", 1, _f, right=True),
        Column("response_ms_max", "resp max ms", 1, _f, right=True),
    ], flat_run_rows(summaries))


def processes_table(summaries: list) -> TableData:
    """One row per run x process, keyed as Results.processes (`name` is the process's name)."""
    from .results import flat_process_rows
    from .tables import Column, TableData

    return TableData("processes", "processes", [
        Column("scheduler", "scheduler"),
        Column("name", "name"),
        Column("requests", "requests", 1, lambda x: f"{x:,}", right=True),
        Column("throughput_mb_s", "MB/s", 0, lambda x: _f(x, 2), right=True),
        Column("response_ms_mean", "resp mean ms", 1, _f, right=True),
        Column("response_ms_p95", "resp p95 ms", 2, _f, right=True),
        Column("response_ms_max", "resp max ms", 1, _f, right=True),
    ], flat_process_rows(summaries))


def targets(resolved: dict) -> "tuple[Optional[int], Optional[float]]":
    """What ends one run of a scenario: (requests, simulated seconds), either may be None."""
    run = resolved.get("run") or {}
    duration = run.get("duration_s")
    work = resolved.get("workload")
    if work:
        return int(work["requests"]), duration
    procs = resolved.get("process") or []
    if procs and all(p.get("requests") for p in procs):
        return sum(int(p["requests"]) * int(p.get("count", 1)) for p in procs), duration or 10.0
    return None, duration or 10.0


def _stderr_is_terminal() -> bool:
    """A terminal rich would draw a bar on: a tty, and not one rich takes for dumb or for no
    terminal (TERM=dumb, TTY_COMPATIBLE=0)."""
    import sys

    from .markup import use_styles

    try:
        return sys.stderr.isatty() and use_styles(sys.stderr)
    except (AttributeError, ValueError):
        return False


def _holding_ctrl_c(action):
    """`action()` with Ctrl-C held until it returns: rich's bar cannot be interrupted half
    started or half stopped (it would leave the cursor hidden and stdout redirected). Returns
    (its result, whether Ctrl-C was pressed meanwhile). Off the main thread (no signal handler
    can be set there) the action just runs."""
    import signal

    pressed = []
    try:
        previous = signal.signal(signal.SIGINT, lambda signum, frame: pressed.append(signum))
    except ValueError:
        return action(), False
    try:
        result = action()
    finally:
        signal.signal(signal.SIGINT, previous)
    return result, bool(pressed)


def _run_with_bar(scenario, resolved_json: str, opts: RunOptions):
    """The run with a progress bar on stderr (a terminal only, never with --quiet). The bar,
    and rich that draws it, start at the first report with something to show, a tenth of a
    second in or later: a shorter run shows none and imports nothing for it."""
    from .api import run as run_scenario
    from .markup import escape

    shown: dict = {}

    def start_bar(runs_total: int) -> None:
        import json

        from rich.console import Console
        from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeRemainingColumn

        target_requests, target_s = targets(json.loads(resolved_json))
        columns = (TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(),
                   TextColumn("{task.fields[status]}"), TextColumn("ETA"), TimeRemainingColumn())
        bar = Progress(*columns, console=Console(stderr=True), transient=True)

        def start():
            bar.start()
            return bar.add_task(escape(scenario.name), total=float(runs_total), status="")

        try:
            task, pressed = _holding_ctrl_c(start)
        except BaseException:
            bar.stop()  # started or not (stopping a bar never started does nothing)
            raise
        shown.update(bar=bar, task=task, targets=(target_requests, target_s), run=0, t0=t_start)
        if pressed:  # now that the bar is whole and kept: the run stops, the bar with it
            raise KeyboardInterrupt

    def on_progress(p) -> None:
        now = time.perf_counter()
        if "bar" not in shown:
            # Nothing to show yet (the drive being prepared), or the run is over (its last
            # report, also after a Ctrl-C): no bar.
            if p.runs_done >= p.runs_total or (p.completed == 0 and p.simulated_s == 0):
                return
            start_bar(p.runs_total)
        if p.runs_done != shown["run"]:
            shown.update(run=p.runs_done, t0=now)
        target_requests, target_s = shown["targets"]
        frac = 0.0
        if target_requests:
            frac = max(frac, p.completed / target_requests)
        if target_s:
            frac = max(frac, p.simulated_s / target_s)
        shown["bar"].update(shown["task"], completed=min(p.runs_done + min(frac, 1.0), p.runs_total),
                            status=progress_status(p, now - shown["t0"]))

    # The current run's start (the first run's is now).
    t_start = time.perf_counter()
    try:
        return run_scenario(scenario, seed=opts.seed, records=False, progress=on_progress,
                            requests_csv=opts.requests_csv, requests_parquet=opts.requests_parquet)
    finally:
        if "bar" in shown:
            # A Ctrl-C as the run ends is let go: the results are complete and are printed.
            _holding_ctrl_c(shown["bar"].stop)


def execute(opts: RunOptions) -> int:
    """Runs the command; returns its exit status (0, or 130 when Ctrl-C stopped it). Raises
    CommandError for a user's mistake."""
    import sys

    from .api import resolved_text, run as run_scenario
    from .scenario import Scenario, ScenarioError

    use_traces(opts.traces)
    try:
        scenario = Scenario.from_file(opts.file) if opts.file is not None else Scenario.default()
        if opts.schedulers or opts.device is not None:
            from . import overrides

            scenario = overrides.apply(scenario, opts.schedulers, opts.device)
        # The resolved scenario as the simulator wrote it: `--json` copies the text (parsing and
        # writing its float tables again took longer than a 1,000-request run).
        resolved_json = resolved_text(scenario)
    except ScenarioError as e:
        raise CommandError(str(e))
    for note in scenario.notes:  # what a fio job file's conversion assumed or ignored
        sys.stderr.write(f"note: {note}\n")
    if opts.requests_csv is not None or opts.requests_parquet is not None or opts.plot is not None:
        from .output_paths import check_output_dir, check_output_file

        if opts.requests_csv is not None:
            check_output_file(opts.requests_csv, "--requests-csv")
        if opts.requests_parquet is not None:
            check_output_file(opts.requests_parquet, "--requests-parquet")
        if opts.plot is not None:
            check_output_dir(opts.plot, "--plot")
    try:
        if not opts.quiet and _stderr_is_terminal():
            results = _run_with_bar(scenario, resolved_json, opts)
        else:
            results = run_scenario(scenario, seed=opts.seed, records=False,
                                   requests_csv=opts.requests_csv, requests_parquet=opts.requests_parquet)
    except (ScenarioError, OSError) as e:
        raise CommandError(str(e))
    if results.interrupted:
        sys.stderr.write("interrupted: the results so far follow (the last run stopped early)\n" if results.summaries
                         else "interrupted before any run started (while preparing the drive)\n")
    if opts.fmt == "json":
        _write_json(scenario.name, resolved_json, results)
    else:
        from .tables import emit

        # A table or CSV (JSON is written above): no JSON document.
        emit(_items(scenario, results, opts), opts.fmt)
    if opts.plot is not None:
        from .plots import run_plots

        paths = run_plots(results.summaries, opts.plot, scenario.name)
        sys.stderr.write("plots: " + ", ".join(str(p) for p in paths) + "\n")
    return INTERRUPTED_STATUS if results.interrupted else 0


def _write_json(name, resolved_json: str, results) -> None:
    """`run --json`: the document with the resolved scenario and each run's summary as the
    simulator wrote them (not parsed and written again: the same values, in its number format)."""
    import sys

    from . import __version__

    if results.summary_texts is not None:
        texts = results.summary_texts
    else:
        import json

        texts = [json.dumps(s) for s in results.summaries]
    sys.stdout.write(f'{{"iosched_version": {_json_string(__version__)}, "scenario": {_json_string(name)}, '
                     f'"resolved_scenario": {resolved_json}, "runs": [{", ".join(texts)}]}}\n')
    sys.stdout.flush()


def _json_string(text: str) -> str:
    """json.dumps(text), importing json (and with it re) only for text that needs escapes."""
    if text.isascii() and text.isprintable() and '"' not in text and "\\" not in text:
        return f'"{text}"'
    import json

    return json.dumps(text)


def flash_text(f: dict) -> str:
    """A flash run's FTL counters in one line (the summary's `flash` block; zeros left out)."""
    parts = [f"write amplification {f['write_amplification']:.2f} (preconditioning {f['precondition_write_amplification']:.2f})",
             f"4 KiB units programmed: {f['host_units']:,} for the host, {f['gc_units']:,} by GC, {f['padding_units']:,} padding"]
    extra = [(k, what) for k, what in [
        ("merged_units", "merged into wider mapping units"), ("update_reads", "update reads"),
        ("slc_units", "in SLC mode"), ("fold_units", "folded"), ("erases", "erases"), ("trimmed_units", "trimmed"),
        ("map_hits", "mapping-cache hits"), ("map_misses", "misses"), ("map_reads", "translation reads"),
        ("map_writes", "translation writes"), ("hot_units", "kept in DRAM (hot)"),
        ("hot_evictions", "hot written back later")] if f.get(k)]
    if extra:
        parts.append(", ".join(f"{f[k]:,} {what}" for k, what in extra))
    return "; ".join(parts)


def _items(scenario, results, opts: RunOptions) -> list:
    """What a table or CSV shows: the title, the tables and the lines (markup: markup.py) between."""
    from .markup import escape
    from .tables import PlainLine

    items: list = [f"[bold]{escape(scenario.name)}[/bold] ({escape(str(scenario.source))})", runs_table(results.summaries)]
    n_proc = max((len(s["processes"]) for s in results.summaries), default=0)
    if n_proc <= 16 or opts.fmt != "table":
        items.append(processes_table(results.summaries))
    else:
        items.append(f"({n_proc} processes per run; per-process table omitted: --format csv has it)")
    for s in results.summaries:
        if s.get("stopped"):
            items.append(f"{escape(s['scheduler'])}: {escape(s['stopped'])}")
        for notice in s.get("notices") or []:
            items.append(f"note ({escape(s['scheduler'])}): {escape(notice)}")
    for s in results.summaries:
        if s.get("flash"):
            items.append(f"flash ({escape(s['scheduler'])}): {flash_text(s['flash'])}")
    replays = [s["trace_replay"] for s in results.summaries if s.get("trace_replay")]
    if replays:
        # The trace as read is the same for every run; what was replayed can differ (stops).
        t = replays[0]
        notes = [f"{t[k]:,} {what}" for k, what in [
            ("skipped_bad", "malformed records skipped"), ("skipped_flush_discard", "flushes/discards/empty not replayed"),
            ("skipped_other_device", "of other devices"), ("out_of_order", "out of time order (sent with the previous)"),
            ("folded", "folded onto the disk"), ("read_ahead_stalls", "read-ahead stalls")] if t[k]]
        items.append(f"trace: {t['records_read']:,} records read, {t['replayed']:,} replayed"
                     + (": " + "; ".join(notes) if notes else ""))
    if opts.requests_csv is not None:
        items.append(PlainLine(f"requests written to {opts.requests_csv}"))
    if opts.requests_parquet is not None:
        items.append(PlainLine(f"requests written to {opts.requests_parquet}"))
    return items
