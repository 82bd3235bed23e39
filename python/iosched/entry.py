"""The `iosched` script's entry point. The common non-interactive commands (`iosched --version`,
`iosched run ...`, `iosched validate DRIVE TRACE --json`) run here without importing typer, rich or pydantic (about 0.15 s of imports
on a 2-core machine, more than a 1,000-request run takes); anything else, and anything this
parser does not fully understand (help, an unknown option, a value to check), goes to the full
command line (cli.py), so messages and behaviour are the full command line's.

Spawned worker processes (the reproductions' pool) import this module, not cli.py, as the
script's main module, so they start lean too."""

from __future__ import annotations

import sys
TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at start-up

if TYPE_CHECKING:
    from typing import List, Optional

# `run`'s options that take a value, and where they go in RunOptions.
_VALUE_OPTIONS = {
    "--seed": "seed", "--requests-csv": "requests_csv", "--requests-parquet": "requests_parquet",
    "--plot": "plot", "--traces": "traces", "--scheduler": "schedulers", "--device": "device", "--format": "fmt",
}
_PATH_FIELDS = ("requests_csv", "requests_parquet", "plot", "traces")
_SEED_MAX = 2**63 - 1


def lean_run_options(argv: List[str]):
    """The RunOptions of `argv` when it is a `run` command line this parser understands fully,
    else None (the full command line then parses it and says what is wrong). The scenario file
    is a str written as str(Path(...)) would write it (what messages and the scenario's source
    show): pathlib, with re, is imported only when an option that takes a path (--plot,
    --traces, ...) is given."""
    from .run_command import RunOptions

    args = [a for a in argv if a not in ("-q", "--quiet")]
    if not args or args[0] != "run" or "--" in args:
        return None
    opts = RunOptions(quiet=len(args) != len(argv))
    as_json = False
    positional: List[str] = []
    it = iter(args[1:])
    for a in it:
        if a == "--json":
            as_json = True
            continue
        name, eq, inline = a.partition("=")
        if name in _VALUE_OPTIONS:
            value: Optional[str] = inline if eq else next(it, None)
            if value is None or (not eq and value.startswith("-")):
                return None
            field = _VALUE_OPTIONS[name]
            if field == "schedulers":
                opts.schedulers.append(value)
            elif field == "seed":
                if not value.isdigit() or int(value) > _SEED_MAX:
                    return None  # typer's range message
                opts.seed = int(value)
            elif field == "fmt":
                from .tables import FORMATS

                if value not in FORMATS:
                    return None
                opts.fmt = value
            elif field in _PATH_FIELDS:
                from pathlib import Path

                setattr(opts, field, Path(value))
            else:
                setattr(opts, field, value)
        elif a.startswith("-"):
            return None  # --help, an unknown or misspelt option
        else:
            positional.append(a)
    if len(positional) > 1:
        return None
    if positional:
        from .path_text import normalized

        opts.file = normalized(positional[0])
    if as_json:
        if opts.fmt not in ("table", "json"):
            return None  # the full command line says --json and --format disagree
        opts.fmt = "json"
    return opts


def lean_validate_args(argv: List[str]):
    """(drive, trace, timing, scheduler) when `argv` is `validate DRIVE TRACE --json` (with
    `--timing`/`--scheduler` at most) on a drive file that exists, else None (the full command
    line handles presets, tables, --explain and every message)."""
    if not argv or argv[0] != "validate" or "--json" not in argv:
        return None
    values = {"--timing": "after-completion", "--scheduler": "fcfs"}
    positional: List[str] = []
    it = iter(argv[1:])
    for a in it:
        if a == "--json":
            continue
        name, eq, inline = a.partition("=")
        if name in values:
            value = inline if eq else next(it, None)
            if value is None or (not eq and value.startswith("-")):
                return None
            values[name] = value
        elif a.startswith("-"):
            return None
        else:
            positional.append(a)
    import os

    if len(positional) != 2 or not os.path.isfile(positional[0]) or values["--timing"] not in ("after-completion", "arrival"):
        return None
    return positional[0], positional[1], values["--timing"], values["--scheduler"]


def lean_validate(args) -> bool:
    """`validate ... --json` without the command line's libraries: the same JSON object the full
    command line prints. False (nothing printed) if the replay failed: the full command line then
    runs it again and reports the error its way."""
    import json

    from . import _native
    from .tables import emit

    drive, trace, timing, scheduler = args
    try:
        result = json.loads(_native.validate_trace(drive, trace, timing, scheduler=scheduler))
    except ValueError:
        return False
    emit([], "json", json_doc=result)
    return True


def main() -> None:
    argv = sys.argv[1:]
    if argv == ["--version"]:
        from . import __version__

        sys.stdout.write(f"iosched {__version__}\n")
        return
    validate_args = lean_validate_args(argv)
    if validate_args is not None and lean_validate(validate_args):
        return
    opts = lean_run_options(argv)
    if opts is None:
        from .cli import main as full_command_line

        full_command_line()
        return
    from .command_error import CommandError, report
    from .run_command import execute

    try:
        status = execute(opts)
    except CommandError as e:
        status = report(e)
    sys.exit(status)


if __name__ == "__main__":
    main()
