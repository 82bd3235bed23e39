"""Command line: `iosched run`, `iosched import-fio`, `iosched list`, `iosched reproduce`, `iosched validate`, `iosched bench`,
`iosched trace stats|formats`,
`iosched mount` / `iosched umount` (real mode, run by the native extension: see _fuse.py),
`iosched kernel` (Linux's schedulers in a QEMU guest on the mount: see kernel/).

User mistakes (bad scenario, missing or unreadable file) print one line `error: ...` on stderr
and exit with status 2.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)

from . import __version__
from .api import list_devices, list_schedulers, resolved as resolved_scenario
from .ledger import ClaimsError, LedgerError
from .scenario import Scenario, ScenarioError
from .run_command import RATE_AFTER_S, _f, _pct, progress_status  # noqa: F401 (RATE_AFTER_S, progress_status: tests)
from .tables import Column, PlainLine, TableData, emit, output_format

class _GlobalOptionsAnywhere(typer.core.TyperGroup):
    """The top-level group: its global options (`-q`/`--quiet`) are accepted after the
    subcommand too (`iosched run x.toml -q`), as users type them."""

    GLOBAL_FLAGS = ("-q", "--quiet")

    def parse_args(self, ctx, args):
        end = args.index("--") if "--" in args else len(args)
        flags = [a for a in args[:end] if a in self.GLOBAL_FLAGS]
        rest = [a for a in args[:end] if a not in self.GLOBAL_FLAGS] + args[end:]
        return super().parse_args(ctx, flags + rest)


app = typer.Typer(
    cls=_GlobalOptionsAnywhere,
    help="Disk I/O scheduling simulator: run scenarios, list schedulers and devices, "
    "reproduce papers.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Help is plain text: rich markup would take `[device]` or `[[scheduler]]` in it for tags
    # and drop them, and keep a docstring's line breaks in the command list.
    rich_markup_mode=None,
)
list_app = typer.Typer(help="List schedulers or device presets.", no_args_is_help=True, rich_markup_mode=None)
reproduce_app = typer.Typer(help="Reproduce a paper's experiments.", no_args_is_help=True, rich_markup_mode=None)
app.add_typer(list_app, name="list")
app.add_typer(reproduce_app, name="reproduce")
trace_app = typer.Typer(help="Block traces: a btt-like summary, the formats read.", no_args_is_help=True, rich_markup_mode=None)
app.add_typer(trace_app, name="trace")

# --quiet turns every progress bar off (they are shown only on a terminal anyway).
_settings = {"quiet": False}


def _version(value: bool) -> None:
    if value:
        typer.echo(f"iosched {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bars."),
) -> None:
    """Disk I/O scheduling toolkit: run scenarios, sweep parameters, reproduce papers, mount."""
    _settings["quiet"] = quiet



class _Consoles:
    """stdout/stderr consoles, made on first use (so redirected streams are honoured); stdout's
    width is the terminal's, else $COLUMNS, else 80 (tables.width)."""

    @property
    def out(self) -> Console:
        from .tables import _is_terminal, width

        # Piped, a line of text (a path, a note) is not broken at the width; tables fit it.
        return Console(width=width(), soft_wrap=not _is_terminal())

    @property
    def err(self) -> Console:
        return Console(stderr=True)


_consoles = _Consoles()


_FORMAT_HELP = ("Output: table (fitted to the terminal, or to $COLUMNS when piped: the least important columns are "
                "dropped and named), csv (every column, raw numbers) or json.")


def _format_option():
    return typer.Option("table", "--format", help=_FORMAT_HELP)


def _output(fmt: str, as_json: bool = False) -> str:
    """--format, with --json its alias, checked (exit 2 for an unknown format)."""
    try:
        return output_format(fmt, as_json)
    except ValueError as e:
        raise fail(str(e))


def fail(message: str) -> "typer.Exit":
    """Print `error: message` as one line on stderr; return the Exit(2) to raise."""
    from .command_error import one_line

    typer.echo(f"error: {one_line(message)}", err=True)
    return typer.Exit(2)


def progress_bar(*columns) -> Progress:
    """A progress bar on stderr, shown only on a terminal (never mixed into piped output) and
    not with --quiet. Default columns: description, bar, done/total, elapsed, ETA."""
    err = _consoles.err
    return Progress(
        *(columns or (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      TextColumn("ETA"), TimeRemainingColumn())),
        console=err,
        transient=True,
        disable=_settings["quiet"] or not err.is_terminal,
    )


_TRACES_HELP = ("The shared traces' directory, which a scenario's `{traces}/NAME` trace paths name (default $IOSCHED_TRACES, "
                "else ../shared/traces from the current directory).")


def _use_traces(traces: Optional[Path]) -> None:
    """--traces DIR: what `{traces}` means in scenario files for this command (and its workers)."""
    from .command_error import CommandError
    from .run_command import use_traces

    try:
        use_traces(traces)
    except CommandError as e:
        raise fail(str(e))


def _count_progress(bar: Progress, description: str):
    """A `progress(done, total)` callback driving one task of `bar`."""
    task = bar.add_task(description, total=None)
    return lambda done, total: bar.update(task, completed=done, total=total)


def check_output_file(path: Path, what: str) -> None:
    """output_paths.check_output_file, its error as this command line's (exit 2)."""
    from .command_error import CommandError
    from .output_paths import check_output_file as check

    try:
        check(path, what)
    except CommandError as e:
        raise fail(str(e))


def check_output_dir(path: Path, what: str) -> None:
    """output_paths.check_output_dir, its error as this command line's (exit 2)."""
    from .command_error import CommandError
    from .output_paths import check_output_dir as check

    try:
        check(path, what)
    except CommandError as e:
        raise fail(str(e))


def make_pool(jobs: Optional[int], dask: Optional[str]):
    from .pool import Pool

    if jobs is not None and jobs < 1:
        raise fail(f"--jobs: must be at least 1, got {jobs}")
    return Pool(jobs=jobs, dask=dask)


@app.command()
def run(
    file: Optional[Path] = typer.Argument(
        None, help="Scenario TOML file, or a fio job file (docs/fio.md) (default: the built-in two-readers scenario)."
    ),
    seed: Optional[int] = typer.Option(None, "--seed", min=0, max=2**63 - 1, help="Override run.seed (0 to 2^63 - 1, as a file's run.seed)."),
    as_json: bool = typer.Option(
        False, "--json",
        help='Print one JSON object {"iosched_version", "scenario", "resolved_scenario", "runs": [summary, ...]}.',
    ),
    requests_csv: Optional[Path] = typer.Option(
        None, "--requests-csv", help="Stream one row per request to this CSV file as the run goes (any run length)."
    ),
    requests_parquet: Optional[Path] = typer.Option(
        None, "--requests-parquet",
        help="Write one row per request (the CSV's columns) to this Parquet file, in constant memory (streamed to a "
        "temporary CSV beside it, then converted block by block).",
    ),
    plot: Optional[Path] = typer.Option(
        None, "--plot", help="Write response_cdf.png and throughput.png (one curve / bar per scheduler) to this directory."
    ),
    traces: Optional[Path] = typer.Option(None, "--traces", help=_TRACES_HELP),
    schedulers: List[str] = typer.Option(
        [], "--scheduler", help="Replace the file's [[scheduler]] list (repeatable): NAME[:key=value,...], e.g. "
        "bfq:low_latency=0 or anticipatory:policy=clook; label=... names the run."),
    device: Optional[str] = typer.Option(None, "--device", help="Replace the file's [device] table by this preset "
                                         "(`iosched list devices`)."),
    fmt: str = _format_option(),
) -> None:
    """Run every scheduler of a scenario and print a summary. Ctrl-C stops the run and prints
    what it has (exit status 130). --scheduler and --device override the file, as fio's command
    line overrides its job file. --format json is --json; --format csv prints the runs and the
    processes tables with every number of the summaries."""
    from .command_error import CommandError
    from .run_command import RunOptions, execute

    opts = RunOptions(file=file, seed=seed, fmt=_output(fmt, as_json), requests_csv=requests_csv,
                      requests_parquet=requests_parquet, plot=plot, traces=traces, schedulers=list(schedulers),
                      device=device, quiet=_settings["quiet"])
    try:
        status = execute(opts)
    except CommandError as e:
        raise fail(str(e))
    if status:
        raise typer.Exit(status)


@app.command("import-fio")
def import_fio(
    job_file: Path = typer.Argument(..., help="A fio job file (INI: [global] and job sections)."),
    output: Optional[Path] = typer.Option(None, "-o", "--output", help="Write the scenario TOML here (default: stdout)."),
    device: Optional[str] = typer.Option(None, "--device", help="Device preset (`iosched list devices`; default ibm-deskstar-34gxp)."),
    scheduler: Optional[List[str]] = typer.Option(
        None, "--scheduler", help="A scheduler to run (repeat for several; default: the job file's ioscheduler=, else fcfs)."),
) -> None:
    """Turn a fio job file into an iosched scenario (TOML, with the notes and each job's origin
    in comments) that you can edit and run. `iosched run JOB.fio` runs one directly. Options
    iosched cannot model are errors naming the line and the option (docs/fio.md)."""
    from .fio_job import read, to_toml

    if output is not None:
        check_output_file(output, "-o")
    try:
        conv = read(job_file, device=device, schedulers=scheduler or None)
        text = to_toml(conv)
        Scenario.from_text(text, str(output or job_file))  # what is written must run
    except ScenarioError as e:
        raise fail(str(e))
    if output is None:
        typer.echo(text, nl=False)
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as e:
        raise fail(f"-o {output}: cannot write: {e.strerror or e}")
    for note in conv.notes:
        typer.echo(f"note: {note}", err=True)
    entries = len(conv.scenario.get("process") or conv.scenario.get("task") or [])
    jobs = len(set(o.split(" (")[0] for o in conv.origins))

    def count(n: int, one: str, many: str) -> str:
        return f"{n} {one if n == 1 else many}"

    kinds = ("host task", "host tasks") if conv.target == "host" else ("process", "processes")
    typer.echo(f"{output}: {count(entries, *kinds)} from {count(jobs, 'job', 'jobs')}; run it with `iosched run {output}`",
               err=True)


def _ms(x: float) -> str:
    return f"{x:,.3f}"


def _dist_row(label: str, d: Optional[dict]) -> list:
    return [dict(times=label, **{k: d[k] for k in ("count", "mean", "p50", "p95", "p99", "max")})] if d and d["count"] else []


def _buckets_table(name: str, title: str, hist: list, unit: str) -> TableData:
    """A power-of-two histogram's non-empty buckets (the plots show them all)."""
    total = sum(b["requests"] for b in hist) or 1
    rows = [{f"from_{unit}": b["min"], f"to_{unit}": b["max"], "requests": b["requests"], "share": b["requests"] / total}
            for b in hist if b["requests"]]
    comma = lambda x: f"{x:,}"  # noqa: E731
    return TableData(name, title + (" (empty buckets not shown)" if any(b["requests"] == 0 for b in hist) else ""), [
        Column(f"from_{unit}", f"from {unit}", 0, comma, right=True), Column(f"to_{unit}", f"to {unit}", 0, comma, right=True),
        Column("requests", "requests", 0, comma, right=True), Column("share", "share", 1, _pct, right=True)], rows)


class _SummaryTable(TableData):
    """A metric/value table: on a terminal the rows with a text to show (`shown`); in CSV and
    JSON the rows with a raw value (`value`), without the text."""

    def for_terminal(self) -> TableData:
        return TableData(self.name, self.title, self.columns, [r for r in self.rows if r["shown"] is not None])

    def for_data(self) -> TableData:
        return TableData(self.name, self.title, [Column("metric", "metric"), Column("value", "value")],
                         [{"metric": r["metric"], "value": r["value"]} for r in self.rows if r["value"] is not None])


def trace_tables(s: dict) -> list:
    """What `iosched trace stats` prints (tables, and lines of text before some): summary, sizes,
    seeks, times, requests outstanding, per process, per device (more than one)."""
    items: list = []
    q = s["sequentiality"]
    # (metric, raw value for CSV and JSON, what the terminal shows)
    rows = [
        ("requests", s["requests"], f"{s['requests']:,}"), ("reads", s["reads"], f"{s['reads']:,}"),
        ("writes", s["writes"], f"{s['writes']:,}"), ("flushes", s["flushes"], f"{s['flushes']:,}"),
        ("discards", s["discards"], f"{s['discards']:,}"),
        ("bytes (reads + writes)", s["bytes"], f"{s['bytes']:,} ({s['bytes'] / 1e6:,.1f} MB)"),
        ("sync", s["sync"], None), ("meta", s["meta"], None), ("readahead", s["readahead"], None),
        ("sync / meta / readahead", None, f"{s['sync']:,} / {s['meta']:,} / {s['readahead']:,}"),
        ("duration s", s["duration_s"], f"{s['duration_s']:,.3f}"), ("IOPS", s["iops"], _f(s["iops"])),
        ("MB/s", s["throughput_mb_s"], _f(s["throughput_mb_s"], 2)),
        ("sequential (same stream) fraction", q["sequential_fraction"], None),
        ("sequential (same stream)", None, f"{q['sequential_fraction']:.1%} of {q['candidates']:,}"),
        (f"near (within {q['near_sectors'] * 512 // 1024} KiB)", q["near_fraction"], f"{q['near_fraction']:.1%}"),
        ("out-of-order timestamps", s["out_of_order"], f"{s['out_of_order']:,}"),
        ("skipped bad records", s["skipped"], f"{s['skipped']:,}"),
    ]
    title = f"{s['source']} ({s['format']}" + (f", {s['compression']}" if s["compression"] != "none" else "") + ")"
    items.append(_SummaryTable("summary", title, [Column("metric", "metric"), Column("shown", "value", right=True)],
                               [{"metric": k, "value": raw, "shown": shown} for k, raw, shown in rows]))
    z = s["size_sectors"]
    items.append(f"request sizes (sectors): {z['requests']:,} requests, mean {z['mean']:,.1f}, p50 {z['p50']:,}, "
                 f"p95 {z['p95']:,}, max {z['max']:,}")
    items.append(_buckets_table("request_sizes", "request sizes", z["histogram"], "sectors"))
    k = s["seek_sectors"]
    items.append(f"seek distances in trace order (sectors, per device): {k['seeks']:,} seeks, {k['zero']:,} of 0, "
                 f"mean {k['mean']:,.0f}, p50 {k['p50']:,}, p95 {k['p95']:,}, max {k['max']:,}")
    items.append(_buckets_table("seek_distances", "seek distances", k["histogram"], "sectors"))
    rows = (_dist_row("inter-arrival", s["interarrival_ms"]) + _dist_row("Q2C (arrival to completion)", s["q2c_ms"])
            + _dist_row("Q2D (arrival to issue)", s["q2d_ms"]) + _dist_row("D2C (issue to completion)", s["d2c_ms"]))
    items.append(TableData("times_ms", "times (ms)", [Column("times", "")] + [
        Column(c, c, 0 if c in ("count", "mean", "p99") else 1, (lambda x: f"{x:,}") if c == "count" else _ms, right=True)
        for c in ("count", "mean", "p50", "p95", "p99", "max")], rows))
    d = s["queue_depth"]
    if d:
        items.append(TableData("requests_outstanding", "requests outstanding (arrival to completion)", [
            Column("requests", "requests", 0, lambda x: f"{x:,}", right=True),
            Column("mean", "time-weighted mean", 0, lambda x: f"{x:.2f}", right=True),
            Column("max", "max", 0, lambda x: f"{x:,}", right=True)],
            [{"requests": d["requests"], "mean": d["mean"], "max": d["max"]}]))
    rows = [{"pid": p["pid"], "name": p["name"] or "", "requests": p["requests"], "reads": p["reads"], "writes": p["writes"],
             "mb": p["bytes"] / 1e6} for p in s["processes"]]
    if s["processes_other"]:
        o = s["processes_other"]
        rows.append({"pid": f"({o['processes']:,} others)", "name": "", "requests": o["requests"], "reads": o["reads"],
                     "writes": o["writes"], "mb": o["bytes"] / 1e6})
    comma = lambda x: f"{x:,}"  # noqa: E731
    items.append(TableData("processes", f"processes (top {len(s['processes'])} of {s['processes_total']:,} by requests)", [
        Column("pid", "pid"), Column("name", "name", 0, wrap=True), Column("requests", "requests", 0, comma, right=True),
        Column("reads", "reads", 1, comma, right=True), Column("writes", "writes", 1, comma, right=True),
        Column("mb", "MB", 2, lambda x: f"{x:,.1f}", right=True)], rows))
    if len(s["devices"]) > 1:
        items.append(TableData("devices", "devices", [
            Column("device", "device", right=True), Column("requests", "requests", 0, comma, right=True),
            Column("reads", "reads", 1, comma, right=True), Column("writes", "writes", 1, comma, right=True),
            Column("mb", "MB", 2, lambda x: f"{x:,.1f}", right=True)],
            [{"device": p["device"], "requests": p["requests"], "reads": p["reads"], "writes": p["writes"],
              "mb": p["bytes"] / 1e6} for p in s["devices"]]))
    return items


def _trace_format_option():
    return typer.Option(None, "--trace-format", help="The trace's format (default: detected; iosched trace formats).")


def _trace_format_hint(message: str) -> str:
    """The trace readers' "(give --format, ...)" in this command's words: --trace-format."""
    return message.replace("give --format", "give --trace-format")


def _split_format(fmt: str, trace_format: Optional[str]) -> "tuple[str, Optional[str]]":
    """(output format, trace format): `--format NAME` with a trace format's name is the older
    spelling of --trace-format NAME, still taken (a trace format is never called table, csv or json)."""
    from .tables import FORMATS

    if fmt in FORMATS or fmt is None:
        return fmt or "table", trace_format
    if trace_format is not None:
        raise fail(f"--format {fmt}: an output format is one of {', '.join(FORMATS)} (the trace's format is --trace-format)")
    return "table", fmt


@trace_app.command("stats")
def trace_stats_cmd(
    file: Path = typer.Argument(..., help="Trace file (gzip or zstd read on the fly); the format is detected unless given."),
    fmt: str = typer.Option("table", "--format", help=_FORMAT_HELP + " json is one object (keys: docs/traces.md), as "
                            "--json. (A trace format's name here is taken as --trace-format, its older spelling.)"),
    trace_format: Optional[str] = _trace_format_option(),
    skip_bad: bool = typer.Option(False, "--skip-bad", help="Count and skip malformed records instead of stopping at the first."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as one JSON object (keys: docs/traces.md): --format json."),
    plot: Optional[Path] = typer.Option(
        None, "--plot", help="Write sizes.png, interarrival_cdf.png, seeks.png, queue_depth.png (traces with completion "
        "times) and processes.png (traces naming two processes or more) to this directory; a line says why one is not written."
    ),
    top: int = typer.Option(20, "--top", min=0, help="Processes listed (the rest are summed in one row)."),
) -> None:
    """A btt-like summary of a block trace, read in constant memory: requests and bytes by operation,
    sizes, inter-arrival times, sequentiality, seek distances, per process, requests outstanding
    and Q2C/D2C latencies where the trace has completion times (docs/traces.md)."""
    from rich.progress import DownloadColumn, TransferSpeedColumn

    from .traces import TraceError, trace_stats

    fmt, format = _split_format(fmt, trace_format)
    fmt = _output(fmt, as_json)
    if plot is not None:
        check_output_dir(plot, "--plot")
    columns = (TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn(), TextColumn("ETA"),
               TimeRemainingColumn())
    try:
        with progress_bar(*columns) as bar:
            task = bar.add_task(file.name, total=None)
            s = trace_stats(file, format=format, skip_bad=skip_bad, top=top,
                            progress=lambda done, total: bar.update(task, completed=done, total=total or None))
    except TraceError as e:
        raise fail(_trace_format_hint(str(e)))
    emit(trace_tables(s) + [f"skipped: {escape(m)}" for m in s["skipped_examples"]], fmt, json_doc=s)
    if plot is not None:
        from .trace_plots import trace_plots

        notes: list = []
        paths = trace_plots(s, plot, notes)
        typer.echo("plots: " + ", ".join(str(p) for p in paths), err=True)
        for note in notes:
            typer.echo(note, err=True)


@trace_app.command("convert")
def trace_convert_cmd(
    file: Path = typer.Argument(..., help="Trace file in any format read (or a run's --requests-csv table)."),
    out: Path = typer.Argument(..., help="Output file."),
    to: str = typer.Option(..., "--to", help="fio-v3 (replay with fio --read_iolog), blkparse (text) or s-startup (the S "
                           "suite's start-up trace format: a recorded start-up replayed like S's own)."),
    trace_format: Optional[str] = typer.Option(None, "--trace-format", "--format",
                                               help="Input format (default: detected); --format is its older spelling."),
    skip_bad: bool = typer.Option(False, "--skip-bad", help="Count and skip malformed records."),
    device: Optional[int] = typer.Option(None, "--device", min=0, max=2**32 - 1,
                                         help="Only this trace device (a requests-csv table: this run number)."),
    fio_file: str = typer.Option("/dev/sdX", "--fio-file", help="fio-v3: the file or device the log's I/O goes to."),
    scheduler: Optional[str] = typer.Option(None, "--scheduler", help="A requests-csv table: the run of the scheduler with this "
                                            "label (required when the table holds several runs; the error lists them)."),
) -> None:
    """Write a trace as fio's iolog v3 or blkparse text, in time order: a real trace, or a simulated
    run's requests (iosched run --requests-csv) to replay on a real device with fio."""
    from . import _native
    from .traces import TraceError

    check_output_file(out, "OUT")
    try:
        report = json.loads(_native.trace_convert(str(file), str(out), to, format=trace_format, skip_bad=skip_bad,
                                                  device=device, fio_file=fio_file, scheduler=scheduler))
    except TraceError as e:
        raise fail(str(e))
    parts = [f"{report['written']:,} requests written to {out}"]
    for k, what in [("skipped_other_device", "of other devices"), ("skipped_bad", "malformed records skipped"),
                    ("late", "beyond the reorder window, written late")]:
        if report[k]:
            parts.append(f"{report[k]:,} {what}")
    _consoles.out.print("; ".join(parts), markup=False)


@trace_app.command("formats")
def trace_formats_cmd(
    as_json: bool = typer.Option(False, "--json", help="Print the format names as a JSON list: --format json."),
    fmt: str = _format_option(),
) -> None:
    """Trace formats read (the names `--trace-format` takes); detected from the file's first bytes when not given."""
    from .traces import FORMAT_DESCRIPTIONS, trace_formats

    fmt = _output(fmt, as_json)
    names = trace_formats()
    emit([TableData("trace_formats", "trace formats", [Column("name", "name"), Column("format", "format", 1, wrap=True)],
                    [{"name": n, "format": FORMAT_DESCRIPTIONS.get(n, "")} for n in names])], fmt, json_doc=names)


def _number(x: float) -> str:
    """A tunable's default or bound as typed in a scenario: whole numbers in full (2147483647,
    not 2.14748e+09), others in at most 6 significant digits."""
    import math

    if float(x).is_integer() and abs(x) < 1e15:
        return str(int(x))
    exponent = math.log2(abs(x)) if x else 0.0
    if exponent.is_integer() and exponent >= 40:
        return f"{'-' if x < 0 else ''}2^{int(exponent)}"  # u64's limit as a float: 2^64
    return f"{x:.6g}"


def _tunable(t: dict) -> str:
    """`read_expire = 500 ms [0..2147483647]`: the sysfs name, default with its unit, range."""
    unit = f" {t['unit']}" if t["unit"] else ""
    # The range without spaces: it wraps as one word.
    return f"{t['name']} = {_number(t['default'])}{unit} [{_number(t['min'])}..{_number(t['max'])}]"


@list_app.command("schedulers")
def list_schedulers_cmd(
    as_json: bool = typer.Option(False, "--json", help="Print the list as JSON (name, aliases, kind, summary, source, "
                                 "tunables): --format json."),
    fmt: str = _format_option(),
) -> None:
    """Schedulers with their aliases and tunables (Linux's sysfs names; default, unit, range)."""
    fmt = _output(fmt, as_json)
    schedulers = list_schedulers()
    rows = [{"name": s["name"], "aliases": s["aliases"], "kind": s["kind"], "summary": s["summary"], "source": s["source"],
             "tunables": [_tunable(x) for x in s["tunables"]]} for s in schedulers]
    lines = lambda xs: "\n".join(xs) or "-"  # noqa: E731
    table = TableData("schedulers", "schedulers", show_lines=True, columns=[
        Column("name", "name"), Column("aliases", "aliases", 3, ", ".join, wrap=True), Column("kind", "kind", 2),
        Column("summary", "summary", 1, wrap=True), Column("tunables", "tunables (default, unit, range)", 0, lines, wrap=True)],
        rows=rows)
    emit([table], fmt, json_doc=schedulers)


@list_app.command("devices")
def list_devices_cmd(
    as_json: bool = typer.Option(False, "--json", help="Print the presets as JSON (derived figures, source, estimates): "
                                 "--format json."),
    flash: bool = typer.Option(False, "--flash", help="Only the flash SSD presets (with --format csv or json: their "
                               "table, or iosched.list_flash_devices()'s list; without --flash those list the disks)."),
    fmt: str = _format_option(),
) -> None:
    """Device presets with their derived figures; `estimated` says which are guesses. The
    terminal table shows the disks, then the flash SSDs; CSV and JSON list the disks, or with
    --flash the flash SSDs."""
    fmt = _output(fmt, as_json)
    devices = list_devices()
    rows = []
    for d in devices:
        cache = (f"{d['cache_segments']} x {d['cache_segment_kib']} KiB, read-ahead {d['readahead_kib']} KiB"
                 if d["cache_segments"] else "none")
        rows.append({"name": d["name"], "rpm": d["rpm"], "capacity_gb": d["capacity_gb"], "cylinders": d["cylinders"],
                     "seek_ms": f"{d['seek_single_ms']:.1f} / {d['seek_average_ms']:.1f} / {d['seek_full_ms']:.1f}",
                     "media_mb_s": f"{d['media_rate_outer_mb_s']:.1f} / {d['media_rate_inner_mb_s']:.1f}",
                     "cache": cache, "queue_depth_max": d["queue_depth_max"], **{k: v for k, v in d.items() if k not in ("name",)}})
    table = TableData("devices", "devices", [
        Column("name", "name"), Column("rpm", "rpm", 1, right=True),
        Column("capacity_gb", "capacity GB", 1, lambda x: _f(x, 1), right=True),
        Column("cylinders", "cylinders", 3, lambda x: f"{x:,}", right=True),
        Column("seek_ms", "seek single / avg / full ms", 1, right=True),
        Column("media_mb_s", "media MB/s outer / inner", 2, right=True),
        Column("cache", "cache", 4, wrap=True), Column("queue_depth_max", "queue depth", 2, right=True)], rows)
    items: list = [table]
    for d in devices:
        items += [f"[bold]{escape(d['name'])}[/bold]: {escape(d['description'])}", f"  source: {escape(d['source'])}",
                  f"  estimated: {escape(str(d['estimated']))}",
                  f"  command queue: {d['queue_depth_max']} ({escape(str(d['queue_source']))})"]
    from .api import list_flash_devices

    flash_devices = list_flash_devices()
    frows = [{"name": d["name"], "interface": d["interface"], **d, "channels_dies": f"{d['geometry']['channels']} x {d['geometry']['dies_per_channel']} ({d['dies']})",
              "read_program_us": f"{d['timing']['read_us']:g} / {d['timing']['program_us']:g}",
              "queue_depth_max": d["max_queue_depth"]} for d in flash_devices]
    ftable = TableData("flash", "flash devices (docs/devices-flash.md)", [
        Column("name", "name"), Column("interface", "interface", 1),
        Column("capacity_gb", "model capacity GB", 1, lambda x: _f(x, 1), right=True),
        Column("channels_dies", "channels x dies (dies)", 2, right=True),
        Column("read_program_us", "page read / program us", 2, right=True),
        Column("queue_depth_max", "queue depth", 3, right=True)], frows)
    flash_items: list = [ftable]
    for d in flash_devices:
        flash_items += [f"[bold]{escape(d['name'])}[/bold]: {escape(d['description'])}", f"  source: {escape(d['source'])}",
                        f"  estimated: {escape(d['estimated'])}",
                        f"  command queue: {d['max_queue_depth']} ({escape(d['queue_source'])})"]
    if flash:
        emit(flash_items if fmt == "table" else [ftable], fmt, json_doc=flash_devices)
        return
    items += flash_items
    # CSV and JSON keep the disks' list as it was (one table, each row a rotational drive's
    # fields); the flash presets are theirs with --flash.
    emit(items if fmt == "table" else [table], fmt, json_doc=devices)


_JOBS_HELP = "Local worker processes (default: one per CPU; 1 runs everything in this process)."
_DASK_HELP = "Run on the Dask cluster at this scheduler address (tcp://HOST:PORT), or `local` for a LocalCluster here."


def _reproduce(paper: str, out_dir: Path, jobs: Optional[int], dask: Optional[str], **options) -> None:
    """Runs `experiments.<paper>.reproduce` in a pool with a progress bar; bad input and
    unwritable output become one-line errors."""
    import importlib

    module = importlib.import_module(f".experiments.{paper}", __package__)
    check_output_dir(out_dir, "--out")
    pool = make_pool(jobs, dask)
    try:
        with progress_bar() as bar:
            report = module.reproduce(out_dir, progress=_count_progress(bar, f"{paper} runs ({pool.describe()})"), pool=pool,
                                      **options)
    except (ScenarioError, ClaimsError, LedgerError) as e:
        raise fail(str(e))
    except (OSError, RuntimeError) as e:
        raise fail(f"{getattr(e, 'filename', None) or out_dir}: {getattr(e, 'strerror', None) or e}")
    _consoles.out.print(f"wrote {report} and figures in {out_dir}", markup=False)


@reproduce_app.command("seltzer1990")
def reproduce_seltzer1990(
    out_dir: Path = typer.Option(Path("results/seltzer1990"), "--out", help="Output directory."),
    quick: bool = typer.Option(
        False, "--quick", help="Fewer points and 20 x Q requests (a smoke test, seconds)."
    ),
    catalogue: Optional[Path] = typer.Option(
        None, "--catalogue",
        help="Catalogue directory (default: the one installed with the package).",
    ),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", help=_JOBS_HELP),
    dask: Optional[str] = typer.Option(None, "--dask", help=_DASK_HELP),
) -> None:
    """Seltzer, Chen & Ousterhout 1990, 'Disk Scheduling Revisited': figures 2-8."""
    _reproduce("seltzer1990", out_dir, jobs, dask, quick=quick, catalogue_dir=catalogue)


@reproduce_app.command("iyer2001")
def reproduce_iyer2001(
    out_dir: Path = typer.Option(Path("results/iyer2001"), "--out", help="Output directory."),
    quick: bool = typer.Option(False, "--quick", help="Fewer think-time points, no applications."),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", help=_JOBS_HELP),
    dask: Optional[str] = typer.Option(None, "--dask", help=_DASK_HELP),
) -> None:
    """Iyer & Druschel 2001, 'Anticipatory scheduling': microbenchmarks (figures 4-7, 13, timer)
    and the applications (sections 4.3-4.7)."""
    _reproduce("iyer2001", out_dir, jobs, dask, quick=quick)


@reproduce_app.command("block")
def reproduce_block(
    out_dir: Path = typer.Option(Path("results/block"), "--out", help="Output directory."),
    quick: bool = typer.Option(False, "--quick", help="Fewer requests and shorter runs (a smoke test)."),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", help=_JOBS_HELP),
    dask: Optional[str] = typer.Option(None, "--dask", help=_DASK_HELP),
) -> None:
    """The block layer: NCQ inside the drive, merging, request limits, deadline and kyber."""
    _reproduce("block", out_dir, jobs, dask, quick=quick)


@reproduce_app.command("host")
def reproduce_host(
    out_dir: Path = typer.Option(Path("results/host"), "--out", help="Output directory."),
    quick: bool = typer.Option(False, "--quick", help="Smaller files and trees (a smoke test)."),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", help=_JOBS_HELP),
    dask: Optional[str] = typer.Option(None, "--dask", help=_DASK_HELP),
) -> None:
    """The host: writeback of a dd (today's throttling vs 2.6's), readahead windows, find -exec cat."""
    _reproduce("host", out_dir, jobs, dask, quick=quick)


@reproduce_app.command("seelam2005")
def reproduce_seelam2005(
    out_dir: Path = typer.Option(Path("results/seelam2005"), "--out", help="Output directory."),
    quick: bool = typer.Option(False, "--quick", help="Smaller files, trees and memory, shorter runs (a smoke test)."),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", help=_JOBS_HELP),
    dask: Optional[str] = typer.Option(None, "--dask", help=_DASK_HELP),
) -> None:
    """Seelam et al. 2005, 'Enhancements to Linux I/O scheduling': Tables 1-4 and Figure 3 on the host,
    Figure 5 and the adaptive scheduler on RAID-0 arrays; the report opens with the claims ledger
    (claims.csv, tables.csv beside it). Schedulers not registered are skipped."""
    _reproduce("seelam2005", out_dir, jobs, dask, quick=quick)


@reproduce_app.command("valente2014")
def reproduce_valente2014(
    out_dir: Path = typer.Option(Path("results/valente2014"), "--out", help="Output directory."),
    traces: Optional[Path] = typer.Option(
        None, "--traces",
        help="Directory holding the S suite's start-up traces (s_startup_xterm.trace ...); default $IOSCHED_S_TRACES "
        "or ../shared/traces. Sections needing a missing trace are skipped with a note.",
    ),
    quick: bool = typer.Option(False, "--quick", help="Shorter runs and one start-up iteration (a smoke test)."),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", help=_JOBS_HELP),
    dask: Optional[str] = typer.Option(None, "--dask", help=_DASK_HELP),
) -> None:
    """Valente 2014, BFQ and BFQ+ with the S benchmark suite: throughput, start-up latency (with and without
    NCQ), video playback, code development, fairness."""
    if traces is not None and not traces.is_dir():
        raise fail(f"--traces {traces}: not a directory")
    _reproduce("valente2014", out_dir, jobs, dask, quick=quick, traces=traces)


@reproduce_app.command("all")
def reproduce_all(
    out_dir: Path = typer.Option(Path("results"), "--out", help="Output directory: one subdirectory per paper, and scoreboard.md."),
    traces: Optional[Path] = typer.Option(
        None, "--traces", help="The S suite's traces for valente2014 (default $IOSCHED_TRACES, else ../shared/traces from the "
        "current directory)."),
    quick: bool = typer.Option(False, "--quick", help="Every paper's --quick (a smoke test; claims not measured are not attempted)."),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", help=_JOBS_HELP),
    dask: Optional[str] = typer.Option(None, "--dask", help=_DASK_HELP),
) -> None:
    """Every paper (Seltzer 1990, Iyer & Druschel 2001, Seelam 2005, Valente 2014), then every
    paper's scoreboard on one page: OUT/scoreboard.md."""
    from .ledger import scoreboard

    if traces is not None and not traces.is_dir():
        raise fail(f"--traces {traces}: not a directory")
    for paper in scoreboard.PAPERS:
        options = {"quick": quick}
        if paper == "valente2014":
            options["traces"] = traces
        _reproduce(paper, out_dir / paper, jobs, dask, **options)
    command = "iosched reproduce all" + (" --quick" if quick else "")
    try:
        path = scoreboard.write(out_dir, command=command)
    except OSError as e:
        raise fail(f"{getattr(e, 'filename', None) or out_dir}: {getattr(e, 'strerror', None) or e}")
    _consoles.out.print(f"wrote {path}", markup=False)
    from .ledger.evaluate import scoreboard_line

    for paper in scoreboard.PAPERS:
        counts = scoreboard.counts(scoreboard.read_claims(out_dir / paper / "claims.csv"))
        _consoles.out.print(escape(f"{paper}: {scoreboard_line(counts)}"))


@reproduce_app.command("traces")
def reproduce_traces(
    out_dir: Path = typer.Option(Path("results/traces"), "--out", help="Output directory."),
    traces: Optional[Path] = typer.Option(
        None, "--traces", help="Directory holding mqsim_wsrch-small.trace and mqsim_tpcc-small.trace (default $IOSCHED_TRACES, "
        "else ../shared/traces from the current directory)."
    ),
    quick: bool = typer.Option(False, "--quick", help="The first 2,000 requests of each trace (a smoke test)."),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", help=_JOBS_HELP),
    dask: Optional[str] = typer.Option(None, "--dask", help=_DASK_HELP),
) -> None:
    """The WebSearch and TPC-C samples replayed under every scheduler (open loop, stretched, NCQ,
    dependent), and `iosched advise` on each."""
    if traces is not None and not traces.is_dir():
        raise fail(f"--traces {traces}: not a directory")
    _reproduce("traces", out_dir, jobs, dask, quick=quick, traces=traces)


@app.command()
def sweep(
    file: Path = typer.Argument(..., help="Base scenario TOML file."),
    sets: List[str] = typer.Option(
        [], "--set", help="PATH=V1,V2,...: a field of the scenario and its values (repeatable; the grid is every combination), "
        "e.g. workload.queue_depth=1,10,100 or process[0].think_us=0,2000."
    ),
    seeds: int = typer.Option(1, "--seeds", min=1, max=10_000, help="Seeds per point: run.seed, run.seed + 1, ..."),
    out_dir: Optional[Path] = typer.Option(None, "--out", help="Output directory (default results/sweep-NAME)."),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", help=_JOBS_HELP),
    dask: Optional[str] = typer.Option(None, "--dask", help=_DASK_HELP),
    plot_metric: str = typer.Option("throughput_mb_s", "--plot", help="Metric to plot against the first swept parameter "
                                    "(a column of runs.csv, e.g. response_ms_p99); `none` for no plot."),
    traces: Optional[Path] = typer.Option(None, "--traces", help=_TRACES_HELP),
    fmt: str = _format_option(),
) -> None:
    """Run a scenario over a grid of parameter values x seeds (local process pool or Dask).

    Writes runs.csv/.parquet (one row per point x seed x scheduler), summary.csv/.parquet (per
    point, scheduler and metric: n, mean, std and the 95% confidence interval across seeds),
    sweep.json (what ran) and a plot. The tables are identical whatever the pool."""
    from . import sweep as sw

    fmt = _output(fmt)
    _use_traces(traces)
    try:
        base = Scenario.from_file(file)
        params = [sw.parse_set(x) for x in sets]
        paths = [p.path for p in params]
        if len(set(paths)) != len(paths):
            raise ScenarioError(f"--set: a field is swept twice: {', '.join(paths)}")
        points = sw.grid(base, params)
        seed_lists = sw.point_seeds(points, seeds)
    except ScenarioError as e:
        raise fail(str(e))
    metrics = sw.known_metrics()
    if plot_metric != "none" and plot_metric not in metrics:
        raise fail(f"--plot: unknown metric `{plot_metric}` (known: {', '.join(metrics)})")
    out_dir = out_dir or Path("results") / f"sweep-{base.name}"
    check_output_dir(out_dir, "--out")
    pool = make_pool(jobs, dask)
    try:
        with progress_bar() as bar:
            runs, summary = sw.run_sweep(base, params, seeds, pool,
                                         _count_progress(bar, f"sweep: {len(points)} points x {seeds} seeds ({pool.describe()})"))
    except ScenarioError as e:
        raise fail(str(e))
    except RuntimeError as e:
        raise fail(str(e))
    written = sw.write_tables(runs, summary, out_dir)
    meta = {"iosched_version": __version__, "scenario": str(file), "set": sets, "seeds_per_point": seeds,
            "seeds": sorted({x for xs in seed_lists for x in xs}),
            "points": len(points), "pool": pool.describe(), "resolved_base_scenario": resolved_scenario(base)}
    (out_dir / "sweep.json").write_text(json.dumps(meta, indent=1) + "\n")
    written.append(out_dir / "sweep.json")
    if plot_metric != "none" and params:
        from .plots import sweep_plot

        written.append(sweep_plot(summary, params, plot_metric, out_dir / f"{plot_metric}.png", title=base.name))
    shown = plot_metric if plot_metric != "none" else "throughput_mb_s"
    keys = [f"param:{p.path}" for p in params]
    from .plots import _is_number

    columns = [Column(k, p.path, 0, str, right=all(_is_number(v) for v in p.values)) for k, p in zip(keys, params)] + [
        Column("scheduler", "scheduler"), Column("mean", "mean", 0, lambda x: f"{x:.4g}", right=True)]
    if seeds > 1:
        columns.append(Column("ci95", "95% CI", 1, right=True))
    rows = []
    for r in summary[summary["metric"] == shown].itertuples(index=False):
        row = dict(zip(summary.columns, r))
        row = {k: (v.item() if hasattr(v, "item") else v) for k, v in row.items()}
        row["ci95"] = None if row["n"] < 2 else f"[{row['ci95_low']:.4g}, {row['ci95_high']:.4g}]"
        rows.append(row)
    what = f"mean and 95% CI over {seeds} seeds" if seeds > 1 else "one seed: no confidence interval"
    emit([TableData("summary", f"{base.name}: {shown} ({what})", columns, rows),
          "wrote " + ", ".join(str(p) for p in written)], fmt)


@app.command()
def advise(
    workload: Path = typer.Argument(..., help="A scenario (.toml) or a block trace (any format `iosched trace formats` lists)."),
    objective: str = typer.Option(
        "mix", "--objective",
        help="Rank by: throughput, mean (response time), p99, fairness (Jain's index of the streams' mean response "
        "times), or mix (weighted geometric mean of each relative to the best; see --weights). throughput, mean and "
        "p99 may be about one process: p99@wal (or the instances of a [[process]] entry: reader = reader1, reader2, ...).",
    ),
    weights: Optional[str] = typer.Option(None, "--weights", help="For mix: METRIC=W,... over throughput, mean, p99, fairness (default all 1)."),
    candidates: Optional[str] = typer.Option(None, "--candidates", help="Comma-separated candidate labels or scheduler names (default: the 16 of docs/advise.md)."),
    device: str = typer.Option("maxtor-stm332061", "--device", help="Trace: the device preset to replay on."),
    replay: str = typer.Option("open", "--replay", help="Trace: open, closed or dependent (docs/traces.md)."),
    time_scale: Optional[float] = typer.Option(None, "--time-scale", help="Trace: multiply the trace's times (open, dependent)."),
    queue_depth: Optional[int] = typer.Option(None, "--queue-depth", help="Trace: requests outstanding (closed)."),
    trace_format: Optional[str] = typer.Option(None, "--trace-format", help="Trace: its format (default: detected)."),
    fmt: str = typer.Option("table", "--format", help=_FORMAT_HELP + " (A trace format's name here is taken as "
                            "--trace-format, its older spelling.)"),
    sector_map: Optional[str] = typer.Option(None, "--sector-map", help="Trace: error, fold or scale for sectors beyond the disk."),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", help=_JOBS_HELP),
    dask: Optional[str] = typer.Option(None, "--dask", help="Run on a Dask cluster at ADDRESS (`local`: a LocalCluster here)."),
    as_json: bool = typer.Option(False, "--json", help="Print the characterisation and the ranking as JSON: --format json."),
    out_dir: Optional[Path] = typer.Option(None, "--out", help="Write report.md and ranking.csv to this directory."),
) -> None:
    """Characterise a workload, simulate it under every candidate scheduler and tunable set, and
    rank them by an objective (docs/advise.md)."""
    from . import advise as adv
    from .api import as_scenario
    from .trace_replay import trace_scenario

    fmt, trace_format = _split_format(fmt, trace_format)
    fmt = _output(fmt, as_json)
    try:
        chosen = adv.select_candidates(candidates)
        w = adv.parse_weights(weights)
        adv.parse_objective(objective)
        if not workload.is_file():
            raise adv.AdviseError(f"{workload}: no such file")
        if workload.suffix in (".toml", ".fio"):  # a scenario, or a fio job file (docs/fio.md)
            scn = Scenario.from_file(workload)
            scenario, source = scn.to_dict(), str(workload)
        else:
            scenario = trace_scenario(workload, device=device, replay=replay, time_scale=time_scale, queue_depth=queue_depth,
                                      format=trace_format, sector_map=sector_map)
            source = str(workload)
            as_scenario(scenario)  # the trace opens and its first record reads: errors name it
    except (adv.AdviseError, ScenarioError) as e:
        raise fail(_trace_format_hint(str(e)))
    if out_dir is not None:
        check_output_dir(out_dir, "--out")
    pool = make_pool(jobs, dask)
    try:
        with progress_bar(TextColumn("{task.description}"), BarColumn(), TaskProgressColumn()) as bar:
            task = bar.add_task(f"advise ({pool.describe()})", total=len(chosen))
            result = adv.advise(scenario, chosen, objective, w, pool, progress=lambda done, total: bar.update(task, completed=done),
                                source=source)
    except (adv.AdviseError, ScenarioError) as e:
        raise fail(str(e))
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "report.md").write_text(adv.report_markdown(str(workload), result))
        _write_rows_csv(out_dir / "ranking.csv", result["ranking"])
    char = TableData("workload", f"{workload}: the workload (baseline run under noop)",
                     [Column("feature", "feature"), Column("value", "value", 0, lambda v: f"{v:.4g}" if isinstance(v, float) else str(v),
                                                           right=True)],
                     [{"feature": k, "value": v} for k, v in result["characterisation"].items()])
    ranking = TableData("ranking", f"ranking by {objective}" + (" (" + ", ".join(f"{k} {v:g}" for k, v in w.items()) + ")"
                                                               if objective == "mix" else ""), [
        Column("rank", "rank", 0, right=True), Column("candidate", "candidate"),
        Column("score", "score", 0, lambda x: f"{x:.3f}", right=True),
        Column("throughput_mb_s", "MB/s", 1, lambda x: _f(x, 2), right=True),
        Column("response_ms_mean", "mean ms", 1, _f, right=True), Column("response_ms_p99", "p99 ms", 1, _f, right=True),
        Column("fairness_jain", "fairness", 2, lambda x: f"{x:.3f}", right=True)], result["ranking"])
    items: list = [char, ranking]
    items += [f"{escape(r['candidate'])}: {escape(r['note'])}" for r in result["ranking"] if r.get("note")]
    best = result["ranking"][0]
    items.append(f"advice: [bold]{escape(best['candidate'])}[/bold] (score {best['score']:.3f})")
    emit(items, fmt, json_doc=result)


@app.command()
def calibrate(
    device: str = typer.Option(
        "ibm-deskstar-34gxp", "--device", help="Device preset to calibrate (see `iosched list devices`)."
    ),
    samples: int = typer.Option(
        32, "--samples", min=1, max=100_000,
        help="Read pairs per distance, direction and timing (immediate / after an idle delay).",
    ),
    seed: int = typer.Option(2001, "--seed", min=0, max=2**63 - 1, help="Random seed (2001: what scenarios use)."),
    pairs: int = typer.Option(
        2000, "--pairs", min=1, max=1_000_000, help="Held-out pairs for each accuracy measurement."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the whole report as one JSON object: --format json."),
    fmt: str = _format_option(),
    out_csv: Optional[Path] = typer.Option(
        None, "--out", help="Write the table (one row per distance) to this CSV file."
    ),
    real: Optional[Path] = typer.Option(
        None, "--real", help="Calibrate this real file or block device instead (O_DIRECT reads; root for devices)."
    ),
    curve: Optional[Path] = typer.Option(
        None, "--curve", help="With --real: write the calibration (JSON) here, for `iosched mount --backend real --calibration`."
    ),
    max_idle_ms: float = typer.Option(5.0, "--max-idle-ms", min=0.0, help="With --real: longest idle delay before a delayed read."),
) -> None:
    """Calibrate positioning time against LBA distance (Iyer & Druschel 2001, section 3.6).

    Times pairs of 4 KiB reads at log-spaced signed distances on a fresh simulated copy of the
    preset, fits a curve (what `[device] positioning_estimator = "calibrated"` uses), and measures
    its accuracy on held-out pairs beside the mechanical model's. Only completion times are used,
    as on a real disk. With --real PATH the same measurement runs on a real file or block device
    (O_DIRECT reads, timed by the clock; no model to compare with), and --curve saves the result
    for the real backend of `iosched mount`."""
    from . import _native

    fmt = _output(fmt, as_json)
    if real is not None:
        return _calibrate_real(real, samples, seed, max_idle_ms, curve, out_csv, fmt)
    if curve is not None:
        raise fail("--curve is for --real (a preset's curve is measured afresh by every scenario that uses it)")

    try:
        report = json.loads(_native.calibrate_device(device, samples, seed, pairs))
    except ValueError as e:
        raise fail(str(e))
    cal = report["calibration"]
    rows = []
    for p, fitted in zip(cal["points"], report["fitted_ns"]):
        rows.append({
            "distance_sectors": p["distance"],
            "measured_immediate_ms": p["immediate_ns"] / 1e6,
            "measured_delayed_ms": p["delayed_ns"] / 1e6,
            "measured_mean_ms": p["mean_ns"] / 1e6,
            "fitted_ms": fitted / 1e6,
            "model_ms": p["model_ns"] / 1e6 if p["model_ns"] is not None else None,
            "actual_ms": p["actual_ns"] / 1e6 if p["actual_ns"] is not None else None,
        })
    if out_csv is not None:
        _write_rows_csv(out_csv, rows)
    ms = lambda x: f"{x:.3f}"  # noqa: E731
    curve_table = TableData("positioning", "positioning time (ms) against LBA distance (sectors; negative = behind)", [
        Column("distance_sectors", "distance", 0, lambda x: f"{x:,}", right=True),
        Column("measured_immediate_ms", "immediate", 2, ms, right=True), Column("measured_delayed_ms", "delayed", 2, ms, right=True),
        Column("measured_mean_ms", "measured", 0, ms, right=True), Column("fitted_ms", "fitted", 0, ms, right=True),
        Column("model_ms", "model", 1, ms, right=True), Column("actual_ms", "actual", 1, ms, right=True)], rows)
    pct = lambda x: f"{x:.1%}"  # noqa: E731
    accuracy = TableData("accuracy", "accuracy on held-out pairs (paper: about 75% for its curve)", [
        Column("pairs_kind", "pairs"), Column("pairs", "n", 2, right=True),
        Column("mean_actual_ms", "mean actual ms", 2, lambda x: f"{x:.2f}", right=True),
        Column("fitted_within_25", "fitted within 25%", 0, pct, right=True),
        Column("fitted_mean_abs_error_ms", "fitted MAE ms", 1, lambda x: f"{x:.2f}", right=True),
        Column("model_within_25", "model within 25%", 0, pct, right=True),
        Column("model_mean_abs_error_ms", "model MAE ms", 1, lambda x: f"{x:.2f}", right=True)], report["accuracy"])
    items = [
        f"[bold]{escape(report['device'])}[/bold]: {samples} pairs per distance and timing, seed {seed}; "
        f"baseline (contiguous 4 KiB read) {cal['baseline_ns'] / 1e6:.3f} ms",
        curve_table, accuracy,
        "measured = service time of the second read minus the baseline (what completion times allow); "
        "fitted = the curve; model = mechanical seek + rotation estimate, command overhead excluded; "
        "actual = the simulator's true positioning time. uniform: both reads anywhere; "
        "log-distance: distances log-uniform from 1 sector to the whole disk, either direction."]
    if out_csv is not None:
        items.append(PlainLine(f"table written to {out_csv}"))
    emit(items, fmt, json_doc=report)


@app.command()
def validate(
    drive: Path = typer.Argument(..., help="DiskSim drive description (.parv), or a device preset name."),
    trace: Path = typer.Argument(..., help="Trace in DiskSim's validate format (measured response times)."),
    as_json: bool = typer.Option(
        False, "--json", help="Print one JSON object: requests, measured_mean_ms, simulated_mean_ms, demerit_ms, classes, ... "
        "(--format json)."
    ),
    fmt: str = _format_option(),
    timing: str = typer.Option(
        "after-completion", "--timing",
        help="after-completion (DiskSim's: each request `gap` after the previous completion) or arrival "
        "(open loop: `gap` between arrivals).",
    ),
    scheduler: str = typer.Option(
        "fcfs", "--scheduler",
        help="Scheduler the replay runs under (default fcfs, as DiskSim's validation). With after-completion timing "
        "one request is outstanding at a time, so only an idling scheduler changes the result.",
    ),
    explain: bool = typer.Option(
        False, "--explain",
        help="Also list every drive parameter read with no timing effect, with the reason, and how inconsistencies "
        "were reconciled (JSON: an `explain` object with `ignored`, `unsupported` and `notes`).",
    ),
) -> None:
    """Replay a drive validation trace on a drive model and compare with the measured response times.

    FCFS with one request at the drive at a time, as DiskSim's validation runs; prints the mean
    measured and simulated response times, the demerit figure (RMS horizontal distance between
    the two response-time distributions at quantiles 0.0001..1, from the sorted samples), the same
    figure computed as DiskSim's rms tool computes its published ones (binned, interpolated CDFs)
    and a per-class breakdown (the trace's buffer tag, read/write, seek distance, size, simulated
    cache hit)."""
    from . import _native

    fmt = _output(fmt, as_json)
    if timing not in ("after-completion", "arrival"):
        raise fail(f"--timing: unknown timing `{timing}` (known: after-completion, arrival)")
    if not drive.exists():
        presets = [d["name"] for d in list_devices()]
        if str(drive) not in presets:
            raise fail(f"{drive}: no such file, and not a device preset (known presets: {', '.join(presets)})")
    try:
        result = json.loads(_native.validate_trace(str(drive), str(trace), timing, scheduler=scheduler))
    except ValueError as e:
        raise fail(str(e))
    items: list = [
        f"[bold]{escape(result['drive'])}[/bold] ({escape(result['drive_source'])}) on {escape(result['trace'])}: "
        f"{result['requests']:,} requests, {escape(result['scheduler'])}, timing {result['timing']}",
        f"requests {result['requests']}  measured mean {result['measured_mean_ms']:.3f} ms  "
        f"simulated mean {result['simulated_mean_ms']:.3f} ms  demerit {result['demerit_ms']:.3f} ms "
        f"({result['demerit_percent']:.1f}% of the measured mean); "
        f"by DiskSim's rms method (binned CDFs) {result['demerit_disksim_method_ms']:.3f} ms"]
    ms = lambda x: f"{x:.3f}"  # noqa: E731
    items.append(TableData("classes", "per class (difference = simulated - measured mean)", [
        Column("by", "by"), Column("class", "class"), Column("requests", "requests", 1, lambda x: f"{x:,}", right=True),
        Column("measured_mean_ms", "measured mean ms", 0, ms, right=True),
        Column("simulated_mean_ms", "simulated mean ms", 0, ms, right=True),
        Column("difference_ms", "difference ms", 2, lambda x: f"{x:+.3f}", right=True),
        Column("demerit_ms", "demerit ms", 1, ms, right=True)], result["classes"]))
    if result["unsupported"]:
        items.append("drive parameters not modelled: " + escape("; ".join(result["unsupported"])))
    if explain:
        if drive.exists():
            try:
                ex = json.loads(_native.explain_drive(str(drive)))
            except ValueError as e:
                raise fail(str(e))
        else:
            ex = {"drive": result["drive"], "source": result["drive_source"], "ignored": [], "unsupported": [], "notes": []}
        result["explain"] = ex
        items.append(f"parameters with no timing effect ({len(ex['ignored'])}), with the reason:\n" + "\n".join(
            f"  {escape(i['parameter'])}: {escape(i['reason'])}" for i in ex["ignored"]))
        if ex["notes"]:
            items.append("notes: " + escape("; ".join(ex["notes"])))
    inv = result["invariants"]
    if any(inv.values()):
        items.append(f"[red]invariant violations: {escape(str(inv))}[/red]")
    emit(items, fmt, json_doc=result)


def _dram_text(dram) -> str:
    """The data cache's DRAM channel in `explain`'s summary line (empty when off)."""
    if not dram:
        return ""
    return (f"; DRAM {dram['mt_s']:g} MT/s, {dram['burst_bytes']} B bursts, {dram['row_bytes']} B rows, "
            f"tRCD/tCL/tRP {dram['trcd_ns']}/{dram['tcl_ns']}/{dram['trp_ns']} ns")


def _hot_text(hot) -> str:
    """Hot data kept in the write cache, in `explain`'s summary line (empty when off)."""
    if not hot:
        return ""
    return f"; hot data kept in {hot['capacity_kib']:,} KiB of DRAM (window {hot['window_ms']:g} ms)"


@app.command()
def explain(
    drive: Path = typer.Argument(..., help="A DiskSim drive description (.parv/.diskspecs) or an MQSim ssdconfig.xml."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON: --format json."),
    fmt: str = _format_option(),
) -> None:
    """What a drive description maps to: every parameter read with no timing effect or not modelled, with the
    reason, and how the reader reconciled it (defaults taken, conversions). An MQSim file also shows the flash
    spec it maps to (`[device] mqsim = "..."`, docs/devices-flash.md)."""
    from . import _native

    fmt = _output(fmt, as_json)
    if not drive.exists():
        raise fail(f"{drive}: no such file")
    try:
        ex = json.loads(_native.explain_drive(str(drive)))
    except ValueError as e:
        raise fail(str(e))
    items: list = [f"[bold]{escape(ex['drive'])}[/bold] ({escape(ex['source'])})"]
    if "spec" in ex:
        sp = ex["spec"]
        g, t = sp["geometry"], sp["timing"]
        items.append(
            f"flash: {sp['interface']}, {g['channels']} channels x {g['dies_per_channel']} dies, {g['planes_per_die']} planes, "
            f"{g['blocks_per_plane']} blocks x {g['pages_per_block']} pages of {g['page_kib']} KiB; tR {t['read_us']:g} us, "
            f"tPROG {t['program_us']:g} us, tBERS {t['erase_ms']:g} ms, channel {t['channel_mb_s']:g} MB/s, "
            f"link {t['link_mb_s']:.1f} MB/s (+{t['link_bytes_per_command']} B/command), controller {t['command_overhead_us']:g} us; "
            f"over-provisioning {sp['over_provisioning']:.4f}, write buffer {sp['write_buffer_kib']} KiB, "
            + (f"mapping unit {sp['mapping_unit_kib']} KiB, " if "mapping_unit_kib" in sp else "") +
            f"GC {sp['gc_policy']} at {sp['gc_free_superblocks']} free, precondition {sp['precondition']}, "
            f"queue depth {sp['max_queue_depth']}" + _dram_text(sp.get("dram")) + _hot_text(sp.get("hot")))
    items.append(f"parameters with no timing effect ({len(ex['ignored'])}), with the reason:\n" + "\n".join(
        f"  {escape(i['parameter'])}: {escape(i['reason'])}" for i in ex["ignored"]))
    items.append(f"parameters not modelled ({len(ex['unsupported'])}):\n" + "\n".join(f"  {escape(u)}" for u in ex["unsupported"]))
    if ex["notes"]:
        items.append("notes:\n" + "\n".join(f"  {escape(n)}" for n in ex["notes"]))
    emit(items, fmt, json_doc=ex)


@app.command()
def bench(
    repeats: int = typer.Option(3, "--repeats", min=1, help="Runs per case; the best is reported."),
    scale: float = typer.Option(
        1.0, "--scale", min=0.001, max=10.0, help="Multiply the request counts (e.g. 0.1 for a quick look)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the results as JSON: --format json."),
    fmt: str = _format_option(),
    validate: Optional[List[Path]] = typer.Option(
        None, "--validate",
        help="Instead: replay speed of a validation trace. Give it twice: --validate DRIVE.parv --validate TRACE "
        "(the drive may be a preset name).",
    ),
    sched_scaling: bool = typer.Option(
        False, "--sched-scaling",
        help="Instead: a scheduler's own cost per request (ns, thread CPU) with 10 to 10,000 backlogged processes "
        "(bfq, bfq-plus, cfq, deadline, stride, lottery; docs/benchmarks.md).",
    ),
    trace_readers: bool = typer.Option(
        False, "--trace-readers",
        help="Instead: each trace reader's speed (records/s, MB/s, thread CPU) on a generated trace of 200,000 requests "
        "(x --scale) in its format.",
    ),
    trace_memory: bool = typer.Option(
        False, "--trace-memory",
        help="Instead: peak resident memory of `trace stats` on generated MQSim, DiskSim validate and blktrace traces of "
        "0.1 GB and --gb GB.",
    ),
    gb: float = typer.Option(1.0, "--gb", min=0.1, max=100.0, help="With --trace-memory: the larger trace's size (GB, decompressed)."),
    gzip_too: bool = typer.Option(False, "--gzip", help="With --trace-memory: also the --gb trace gzipped."),
) -> None:
    """Simulated requests per CPU-second: FCFS, C-LOOK and SPTF on an open random workload and
    on Seltzer's closed queue at Q = 1000; with --validate, the replay of a drive validation
    trace as `iosched validate` runs it (see docs/benchmarks.md)."""
    from .bench import CASES, run_bench, run_validate_bench

    fmt = _output(fmt, as_json)
    if sched_scaling:
        _bench_sched_scaling(repeats, scale, fmt)
        return
    if trace_readers:
        _bench_trace_readers(repeats, scale, fmt)
        return
    if trace_memory:
        _bench_trace_memory(gb, gzip_too, fmt)
        return
    if validate:
        if len(validate) != 2:
            raise fail("--validate: give a drive and a trace: --validate DRIVE.parv --validate TRACE")
        try:
            results = [run_validate_bench(str(validate[0]), str(validate[1]), repeats=repeats)]
        except ValueError as e:
            raise fail(str(e))
    else:
        with progress_bar() as bar:
            task = bar.add_task("bench", total=sum(len(c[3]) for c in CASES))
            results = run_bench(repeats=repeats, scale=scale, progress=lambda: bar.advance(task))
    rows = [{"case": r.case, "scheduler": r.scheduler, "requests": r.requests, "cpu_s": r.cpu_s,
             "requests_per_cpu_s": r.requests_per_cpu_s} for r in results]
    comma = lambda x: f"{x:,.0f}"  # noqa: E731
    emit([TableData("results", f"simulated requests per CPU-second (best of {repeats})", [
        Column("case", "case", 0, wrap=True), Column("scheduler", "scheduler"), Column("requests", "requests", 1, comma, right=True),
        Column("cpu_s", "CPU s", 1, lambda x: f"{x:.3f}", right=True),
        Column("requests_per_cpu_s", "requests / CPU-s", 0, comma, right=True)], rows)],
        fmt, json_doc={"repeats": repeats, "results": rows})


def _bench_trace_readers(repeats: int, scale: float, fmt: str) -> None:
    from .trace_bench import READER_RECORDS, run_reader_bench
    from .trace_gen import FORMATS

    records = max(1000, int(READER_RECORDS * scale))
    with progress_bar() as bar:
        task = bar.add_task("trace readers", total=len(FORMATS))
        results = run_reader_bench(records, repeats=repeats, progress=lambda: bar.advance(task))
    rows = [r.as_dict() for r in results]
    emit([TableData("results", f"trace reading, {records:,} generated requests per format (thread CPU, best of {repeats})", [
        Column("format", "format"), Column("records", "records", 2, lambda x: f"{x:,}", right=True),
        Column("file_bytes", "file MB", 2, lambda x: f"{x / 1e6:,.1f}", right=True),
        Column("cpu_s", "CPU s", 1, lambda x: f"{x:.3f}", right=True),
        Column("records_per_s", "records / s", 0, lambda x: f"{x:,.0f}", right=True),
        Column("mb_per_s", "MB / s", 0, lambda x: f"{x:,.1f}", right=True)], rows)],
        fmt, json_doc={"repeats": repeats, "requests": records, "results": rows})


def _bench_trace_memory(gb: float, gzip_too: bool, fmt: str) -> None:
    from .trace_bench import memory_cases, run_memory_bench

    try:
        with progress_bar() as bar:
            task = bar.add_task("trace memory (generate, summarize)", total=len(memory_cases(gb, gzip_too)))
            rows = run_memory_bench(gb, gzip=gzip_too, progress=lambda: bar.advance(task))
    except (OSError, RuntimeError) as e:
        raise fail(str(e))
    emit([TableData("results", "`trace stats` on generated traces: peak resident set (child process)", [
        Column("format", "format"), Column("gb", "GB", 0, lambda x: f"{x:g}", right=True),
        Column("gzip", "gzip", 0, lambda x: "yes" if x else "no", right=True),
        Column("file_bytes", "file MB", 2, lambda x: f"{x / 1e6:,.1f}", right=True),
        Column("records", "records", 2, lambda x: f"{x:,}", right=True), Column("cpu_s", "CPU s", 1, lambda x: f"{x:.2f}", right=True),
        Column("records_per_s", "records / s", 1, lambda x: f"{x:,.0f}", right=True),
        Column("vmhwm_kb", "peak RSS MB", 0, lambda x: f"{x / 1024:,.1f}", right=True)], rows)],
        fmt, json_doc={"results": rows})


def _bench_sched_scaling(repeats: int, scale: float, fmt: str) -> None:
    from .bench import SCALING_CASES, SCALING_PROCESSES, run_sched_scaling

    with progress_bar() as bar:
        task = bar.add_task("bench", total=len(SCALING_CASES) * len(SCALING_PROCESSES))
        results = run_sched_scaling(repeats=repeats, scale=scale, progress=lambda: bar.advance(task))
    rows = []
    for i, r in enumerate(results):
        prev = results[i - 1] if i and results[i - 1].scheduler == r.scheduler and results[i - 1].tunables == r.tunables else None
        rows.append({
            "scheduler": r.scheduler, "setting": r.setting, "processes": r.processes, "requests": r.requests,
            "cpu_s": r.cpu_s, "ns_per_request": r.ns_per_request,
            "ratio_to_previous": r.ns_per_request / prev.ns_per_request if prev else None,
            "ns_added": r.ns_per_request - prev.ns_per_request if prev else None,
            "requests_per_slot": r.requests / r.slots if r.slots else None,
        })
    emit([TableData("results", f"scheduler cost per request, N backlogged processes (thread CPU, best of {repeats})", [
        Column("scheduler", "scheduler"), Column("setting", "setting", 0, wrap=True),
        Column("processes", "N", 0, lambda x: f"{x:,}", right=True),
        Column("ns_per_request", "ns / request", 0, lambda x: f"{x:,.0f}", right=True),
        Column("ratio_to_previous", "x previous N", 1, lambda x: f"{x:.2f}", right=True),
        Column("ns_added", "+ns per 10x N", 2, lambda x: f"{x:+,.0f}", right=True),
        Column("requests_per_slot", "requests / slot", 2, lambda x: f"{x:,.1f}", right=True)], rows)],
        fmt, json_doc={"repeats": repeats, "results": rows})


def _write_rows_csv(path: Path, rows: list) -> None:
    """One CSV row per dict; the header is every key any row has, in the order they first appear
    (a row without a key gets an empty cell). Written to PATH.part, then renamed."""
    import csv

    fields = list(dict.fromkeys(k for r in rows for k in r))
    part = path.with_name(path.name + ".part")
    try:
        with open(part, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields, restval="")
            w.writeheader()
            w.writerows(rows)
        part.replace(path)
    except OSError as e:
        raise fail(f"{path}: cannot write: {e.strerror or e}")


def _calibrate_real(path: Path, samples: int, seed: int, max_idle_ms: float, curve: Optional[Path],
                    out_csv: Optional[Path], fmt: str) -> None:
    import subprocess

    args = [*_fuse_command(), "calibrate", str(path), "--samples", str(samples), "--seed", str(seed), "--max-idle-ms", str(max_idle_ms)]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        raise fail(r.stderr.strip().removeprefix("iosched calibrate: "))
    if r.stderr.strip():
        typer.echo(r.stderr.strip(), err=True)
    doc = json.loads(r.stdout)
    if curve is not None:
        try:
            curve.write_text(json.dumps(doc) + "\n")
        except OSError as e:
            raise fail(f"{curve}: cannot write: {e.strerror or e}")
    cal = doc["calibration"]
    rows = [{"distance_sectors": p["distance"], "measured_immediate_ms": p["immediate_ns"] / 1e6,
             "measured_delayed_ms": p["delayed_ns"] / 1e6, "measured_mean_ms": p["mean_ns"] / 1e6} for p in cal["points"]]
    if out_csv is not None:
        _write_rows_csv(out_csv, rows)
    ms = lambda x: f"{x:.3f}"  # noqa: E731
    items: list = [
        f"[bold]{escape(str(path))}[/bold]: {doc['reads']} reads ({'O_DIRECT' if doc['direct_io'] else 'through the page cache'}), "
        f"{samples} pairs per distance and timing, seed {seed}; baseline (contiguous 4 KiB read) {cal['baseline_ns'] / 1e6:.3f} ms",
        TableData("positioning", "positioning time (ms) against LBA distance (sectors; negative = behind)", [
            Column("distance_sectors", "distance", 0, lambda x: f"{x:,}", right=True),
            Column("measured_immediate_ms", "immediate", 1, ms, right=True),
            Column("measured_delayed_ms", "delayed", 1, ms, right=True),
            Column("measured_mean_ms", "measured", 0, ms, right=True)], rows)]
    if curve is not None:
        items.append(PlainLine(f"calibration written to {curve}"))
    emit(items, fmt, json_doc=doc)


def _fuse_command() -> list:
    """Real mode's command line: the native extension run as `python -m iosched._fuse` (the same
    code as the `iosched-fuse` entry point); $IOSCHED_FUSE_BIN names a separately built
    `iosched-fuse` binary instead."""
    import os

    from ._fuse import self_command

    env = os.environ.get("IOSCHED_FUSE_BIN")
    return [env] if env else self_command()


def _exec_fuse(args: list) -> None:
    """Replaces this process with real mode's command (signals reach the mount directly, and its
    exit status is ours)."""
    import os

    command = _fuse_command()
    os.execv(command[0], [*command, *args])


@app.command()
def mount(
    backing_dir: Path = typer.Argument(..., help="Directory whose files the mount shows (data is read from and written to it)."),
    # A str, not a Path: click stats Path arguments, and a stat of a mount whose daemon is
    # stopped hangs; real mode checks the mountpoint itself, mountinfo first.
    mountpoint: str = typer.Argument(..., help="Empty directory to mount on."),
    scheduler: str = typer.Option("fcfs", "--scheduler", help="Scheduler name, as in scenario files (iosched list schedulers)."),
    policy: Optional[str] = typer.Option(None, "--policy", help="Policy that `anticipatory` wraps (default aged-sptf)."),
    sets: List[str] = typer.Option([], "--set", help="Scheduler tunable TUNABLE=VALUE (repeatable)."),
    device: str = typer.Option("ibm-deskstar-34gxp", "--device", help="Emulated disk preset (iosched list devices)."),
    queue_depth: Optional[str] = typer.Option(None, "--queue-depth", help="Commands the emulated drive holds at once (NCQ/TCQ; default 1: none), up to the preset's maximum; as a scenario's [device] queue_depth."),
    queue_order: Optional[str] = typer.Option(None, "--queue-order", help="The drive's order among held commands: rpo (rotational position, default) or fifo."),
    queue_aging_ms: Optional[str] = typer.Option(None, "--queue-aging-ms", help="rpo: a command held longer than this is served first (default 500, an estimate)."),
    calibration: Optional[Path] = typer.Option(None, "--calibration", help="With --backend real: positioning curve from `iosched calibrate --real PATH --curve FILE`."),
    backend: str = typer.Option("emulated", "--backend", help="emulated: the --device model times each request; real: the backing files' own I/O, done at dispatch (addresses from FIEMAP)."),
    direct_io: bool = typer.Option(False, "--direct-io", help="FOPEN_DIRECT_IO: each read() is one request (no readahead, no page cache)."),
    daemon: bool = typer.Option(False, "--daemon", help="Run in the background; stop with `iosched umount`."),
    summary: Optional[Path] = typer.Option(None, "--summary", help="Also write the final JSON summary to this file."),
    stats: Optional[Path] = typer.Option(None, "--stats", help="Append live statistics (JSON lines) to this file."),
    stats_interval: Optional[str] = typer.Option(None, "--stats-interval", help="Seconds between live statistics lines on stderr: 0 (none) or at least 0.1; passed on as typed, so an error names the value given."),
    log: Optional[Path] = typer.Option(None, "--log", help="With --daemon: where the daemon's output goes."),
    requests_csv: Optional[Path] = typer.Option(None, "--requests-csv", help="At unmount, write one row per request to this CSV file."),
) -> None:
    """Real mode: mount BACKING_DIR on MOUNTPOINT; reads and writes of real processes are scheduled
    by SCHEDULER and timed by the emulated disk. Runs until Ctrl-C / SIGTERM (or `iosched umount`),
    then prints a summary in the shape of `iosched run --json`. See docs/real-mode.md."""
    args = ["mount", str(backing_dir), str(mountpoint), "--scheduler", scheduler, "--device", device, "--backend", backend]
    if policy:
        args += ["--policy", policy]
    for s in sets:
        args += ["--set", s]
    if direct_io:
        args.append("--direct-io")
    if daemon:
        args.append("--daemon")
    for flag, value in (("--summary", summary), ("--stats", stats), ("--stats-interval", stats_interval), ("--log", log), ("--requests-csv", requests_csv), ("--calibration", calibration),
                        ("--queue-depth", queue_depth), ("--queue-order", queue_order), ("--queue-aging-ms", queue_aging_ms)):
        if value is not None:
            args += [flag, str(value)]
    _exec_fuse(args)


@app.command()
def umount(
    # A str, not a Path: click stats Path arguments, and a stat of a mount whose daemon is
    # stopped hangs (real mode reads mountinfo and never stats it).
    mountpoint: str = typer.Argument(..., help="Where `iosched mount` mounted."),
    timeout: float = typer.Option(10.0, "--timeout", help="Seconds to wait for the mount's process to write its summary and exit."),
) -> None:
    """Unmount a real-mode mount (lazily if busy) and wait for its process to finish."""
    _exec_fuse(["umount", str(mountpoint), "--timeout", str(timeout)])


@app.command("kernel")
def kernel_cmd(
    job: Path = typer.Argument(..., help="fio job file, run by real fio in the guest (filename= rewritten to /dev/sda) and by the simulator."),
    scheduler: str = typer.Option(..., "--scheduler", help="Linux's elevator in the guest: none, mq-deadline, kyber, bfq (the simulator runs its own of that name)."),
    sets: List[str] = typer.Option([], "--set", help="Linux tunable NAME=VALUE, written to /sys/block/sda/queue/iosched/NAME, else queue/NAME (repeatable); the simulator's scheduler gets those it has."),
    device: str = typer.Option("maxtor-stm332061", "--device", help="Emulated drive preset (iosched list devices), for the mount and the simulator."),
    controller: str = typer.Option("auto", "--controller", help="auto (IDE unless the drive queues and the mount models it: then AHCI at the drive's depth), ide (depth 1), ahci (depth 32 in the guest)."),
    repeat: int = typer.Option(3, "--repeat", help="Guest boots (each one run of the job); the simulator's seed is 1, 2, ... per repeat."),
    out: Optional[Path] = typer.Option(None, "--out", help="Directory for every file (serial logs, fio JSON, mount and simulator summaries and CSVs, comparison.json/.csv); default ./iosched-kernel.JOB.SCHED.TIME."),
    mount_scheduler: str = typer.Option("fcfs", "--mount-scheduler", help="The mount's own scheduler in front of the drive (fcfs: the drive serves the guest's order)."),
    queue_order: str = typer.Option("rpo", "--queue-order", help="With a drive queue (AHCI): the drive's firmware order among queued commands, rpo or fifo (the mount's --queue-order, the simulator's device.queue_order)."),
    timeout: float = typer.Option(900.0, "--timeout", help="Seconds a guest may run before it is stopped (an error)."),
    fmt: str = _format_option(),
) -> None:
    """Linux's own scheduler in a QEMU guest (TCG) whose disk is `iosched mount`'s emulated drive, on fio
    job JOB, beside the simulator on the same job, drive and scheduler. Needs root and /dev/fuse;
    fetches qemu, fio, Debian's kernel and busybox at first use (docs/kernel-mode.md)."""
    from .kernel import KernelError
    from .kernel.compare import fmt_num, fmt_pm, fmt_ratio
    from .kernel.run import Options, run as run_kernel

    fmt = _output(fmt)
    err = _consoles.err

    def log(msg: str) -> None:
        if not _settings["quiet"]:
            err.print(msg, highlight=False, markup=False)

    opts = Options(job, scheduler, list(sets), device, controller, repeat, out, mount_scheduler, queue_order, timeout)
    try:
        doc = run_kernel(opts, log)
    except KernelError as e:
        raise fail(str(e))
    except KeyboardInterrupt as e:
        typer.echo(f"iosched kernel: interrupted ({e or 'SIGINT'}): guest, mount and temporary files removed", err=True)
        raise typer.Exit(130)
    from .kernel.compare import SIM_COLUMNS, ratio

    labels = {"sim": "sim", "sim_think": "sim+think", "sim_path": "sim+path"}
    reps = TableData("repeats", "per repeat (guest = Linux in QEMU on the mount; sim = the simulator; sim+think = the "
                     "simulator with the guest's think time; sim+path = with the guest path's measured latencies "
                     "per command)", [
        Column("repeat", "rep"), Column("metric", "metric"), Column("unit", "unit", 2),
        Column("guest", "guest", 0, fmt_num, right=True)]
        + [c for k in SIM_COLUMNS for c in (Column(k, labels[k], 1 if k != "sim" else 0, fmt_num, right=True),
                                            Column(f"ratio_{k}", f"guest/{labels[k]}", 1 if k != "sim_think" else 2,
                                                   fmt_ratio, right=True))],
        [dict(r, repeat=rep["repeat"], **{f"ratio_{k}": ratio(r["guest"], r.get(k)) for k in SIM_COLUMNS})
         for rep in doc["repeats"] for r in rep["rows"]])
    summ = TableData("summary", f"mean ± sd over {len(doc['repeats'])} repeats", [
        Column("metric", "metric"), Column("unit", "unit", 2), Column("guest", "guest", 0, str, right=True)]
        + [c for k in SIM_COLUMNS for c in (Column(k, labels[k], 1 if k != "sim" else 0, str, right=True),
                                            Column(f"ratio_{k}", f"guest/{labels[k]}", 0 if k != "sim_think" else 2,
                                                   fmt_ratio, right=True))],
        [dict(r, guest=fmt_pm(r["guest_mean"], r["guest_sd"]),
              **{k: fmt_pm(r[f"{k}_mean"], r[f"{k}_sd"]) for k in SIM_COLUMNS}) for r in doc["summary"]])
    thinks = ", ".join(f"{rep['think_us_p50']:.0f}" for rep in doc["repeats"])
    head = (f"{doc['job']}: Linux {doc['kernel']} {doc['scheduler']} {doc['tunables'] or ''} on {doc['device']} via "
            f"{doc['controller']} (drive queue {doc['queue_depth']}, mount {doc['mount_scheduler']}); sim+think adds "
            f"the mount's think_us p50 per repeat: {thinks} us")
    emit([escape(head), reps, summ, f"files in {escape(doc['out'])}"], fmt, json_doc=doc)


def main() -> None:
    """Entry point of the `iosched` script."""
    app()


if __name__ == "__main__":
    main()
