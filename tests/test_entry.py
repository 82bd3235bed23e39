"""The lean entry (iosched/entry.py): `iosched --version` and `iosched run` without typer, rich
(unless it draws) or pydantic, with the full command line's output and errors."""

import subprocess
import sys
from pathlib import Path

import pytest

from iosched.entry import lean_run_options

SCENARIO = """name = "lean"
[device]
preset = "ibm-deskstar-34gxp"
[workload]
kind = "poisson"
requests = 300
rate_iops = 40
[[scheduler]]
name = "fcfs"
[[scheduler]]
name = "sstf"
"""

CHECK_MODULES = """
import sys
before = set(sys.modules)
sys.argv = ["iosched"] + sys.argv[1:]
from iosched.entry import main
try:
    main()
except SystemExit as e:
    code = e.code
else:
    code = 0
heavy = sorted(m for m in ("typer", "click", "rich", "pydantic") if m in sys.modules)
sys.stderr.write(f"HEAVY={','.join(heavy)} CODE={code}\\n")
sys.stderr.write(f"NEW={','.join(sorted(set(sys.modules) - before))}\\n")
"""

# What `run --json` and `--version` do without (imported where needed): pathlib brings re,
# fnmatch, enum and urllib.parse, json brings re; together a tenth of a short run's time.
SLOW_STDLIB = {"pathlib", "re", "fnmatch", "enum", "urllib", "typing", "dataclasses", "inspect", "json", "threading",
               "collections", "functools"}


def _scenario(tmp_path: Path) -> Path:
    p = tmp_path / "lean.toml"
    p.write_text(SCENARIO)
    return p


def _check_modules(args) -> "list[str]":
    out = subprocess.run([sys.executable, "-c", CHECK_MODULES, *args], capture_output=True, text=True, timeout=120)
    return out.stderr.splitlines()


def _heavy(args) -> "tuple[str, str]":
    line = [x for x in _check_modules(args) if x.startswith("HEAVY=")][-1]
    heavy, code = line.split(" ")
    return heavy.removeprefix("HEAVY="), code.removeprefix("CODE=")


def _slow_stdlib(args) -> "set[str]":
    """The modules of SLOW_STDLIB (by top-level name) that `iosched ARGS` imported."""
    line = [x for x in _check_modules(args) if x.startswith("NEW=")][-1]
    return {m.split(".")[0] for m in line.removeprefix("NEW=").split(",")} & SLOW_STDLIB


def test_run_json_and_version_import_no_command_line_library(tmp_path):
    path = _scenario(tmp_path)
    assert _heavy(["run", str(path), "--json"]) == ("", "0")
    assert _heavy(["--version"]) == ("", "0")
    # A table is drawn without rich (text_table.py).
    assert _heavy(["run", str(path), "-q"]) == ("", "0")
    # A user's mistake is reported the same lean way (exit 2).
    assert _heavy(["run", str(tmp_path / "missing.toml"), "--json"]) == ("", "2")


def test_run_json_and_version_import_no_slow_stdlib_module(tmp_path):
    path = _scenario(tmp_path)
    bad = tmp_path / "bad.toml"
    bad.write_text("[device\n")
    for args in (["run", str(path), "--json"], ["run", "--json", "-q"], ["--version"],
                 ["run", str(tmp_path / "missing.toml"), "--json"], ["run", str(bad), "--json"]):
        assert _slow_stdlib(args) == set(), args


def test_a_table_imports_only_json_of_the_slow_stdlib(tmp_path):
    # The summaries are JSON text (json brings re, enum, functools and collections); drawing
    # the table needs neither dataclasses, inspect, typing nor pathlib.
    path = _scenario(tmp_path)
    for args in (["run", str(path), "-q"], ["run", str(path), "--format", "csv"]):
        assert _slow_stdlib(args) <= {"json", "re", "enum", "functools", "collections"}, args


def test_what_the_lean_parser_leaves_to_the_full_command_line():
    for argv in (["run", "--help"], ["run", "x.toml", "--bogus"], ["run", "--seed", "-3", "x.toml"],
                 ["run", "--seed", "2e3"], ["run", "a.toml", "b.toml"], ["run", "--format", "yaml"],
                 ["run", "--json", "--format", "csv"], ["run", "--device"], ["list", "devices"], [],
                 ["run", "--", "x.toml"]):
        assert lean_run_options(argv) is None, argv


def test_lean_parser_reads_every_run_option():
    o = lean_run_options(["-q", "run", "x.toml", "--seed=7", "--scheduler", "bfq:low_latency=0", "--scheduler=noop",
                          "--device", "maxtor-stm332061", "--format", "csv", "--requests-csv", "r.csv",
                          "--requests-parquet=r.parquet", "--plot", "plots", "--traces", "tr"])
    assert (o.file, o.seed, o.schedulers, o.device, o.fmt, o.quiet) == (
        "x.toml", 7, ["bfq:low_latency=0", "noop"], "maxtor-stm332061", "csv", True)
    assert (o.requests_csv, o.requests_parquet, o.plot, o.traces) == (Path("r.csv"), Path("r.parquet"), Path("plots"), Path("tr"))
    assert lean_run_options(["run", "--json"]).fmt == "json" and lean_run_options(["run"]).file is None
    # The scenario file is a str (no pathlib), written as str(Path(...)) would write it.
    assert lean_run_options(["run", ".//d/./x.toml/"]).file == str(Path(".//d/./x.toml/")) == "d/x.toml"


@pytest.mark.parametrize("extra", [[], ["--json"], ["--format", "csv"], ["--seed", "9", "--scheduler", "clook"]])
def test_lean_output_is_the_full_command_lines(tmp_path, extra):
    path = str(_scenario(tmp_path))
    lean = subprocess.run([sys.executable, "-m", "iosched.entry", "run", path, *extra], capture_output=True, text=True,
                          timeout=120)
    full = subprocess.run([sys.executable, "-m", "iosched.cli", "run", path, *extra], capture_output=True, text=True,
                          timeout=120)
    assert lean.returncode == full.returncode == 0, lean.stderr + full.stderr
    assert lean.stdout == full.stdout and lean.stderr == full.stderr


DISKSIM = Path(__file__).resolve().parents[1].parent / "shared" / "disksim-validation"


@pytest.mark.skipif(not (DISKSIM / "atlas10k.trace").is_file(), reason="../shared/disksim-validation absent")
def test_validate_json_is_lean_and_prints_what_the_full_command_line_prints():
    drive, trace = str(DISKSIM / "atlas10k.parv"), str(DISKSIM / "atlas10k.trace")
    for extra in ([], ["--timing", "arrival", "--scheduler=sstf"]):
        assert _heavy(["validate", drive, trace, "--json", *extra]) == ("", "0")
        lean = subprocess.run([sys.executable, "-m", "iosched.entry", "validate", drive, trace, "--json", *extra],
                              capture_output=True, text=True, timeout=120)
        full = subprocess.run([sys.executable, "-m", "iosched.cli", "validate", drive, trace, "--json", *extra],
                              capture_output=True, text=True, timeout=120)
        assert lean.returncode == full.returncode == 0, lean.stderr + full.stderr
        assert lean.stdout == full.stdout and lean.stderr == full.stderr


def test_what_the_lean_validate_leaves_to_the_full_command_line(tmp_path):
    from iosched.entry import lean_validate_args

    f = tmp_path / "d.parv"
    f.write_text("")
    for argv in (["validate", str(f), "t.trace"], ["validate", str(f), "t.trace", "--json", "--explain"],
                 ["validate", "ibm-deskstar-34gxp", "t.trace", "--json"], ["validate", str(f), "--json"],
                 ["validate", str(f), "t.trace", "--json", "--timing", "soon"], ["validate", str(f), "t", "--json", "--format", "csv"]):
        assert lean_validate_args(argv) is None, argv
    assert lean_validate_args(["validate", str(f), "t.trace", "--json"]) == (str(f), "t.trace", "after-completion", "fcfs")
    # A replay that fails goes to the full command line, which names the problem its way (exit 2).
    bad = subprocess.run([sys.executable, "-m", "iosched.entry", "validate", str(f), str(tmp_path / "none.trace"), "--json"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode != 0 and "Traceback" not in bad.stderr and bad.stderr.strip(), bad.stderr


def test_path_text_writes_paths_as_pathlib_does():
    import itertools
    from pathlib import PurePath

    from iosched import path_text

    parts = ["/", ".", "..", "a", "b.c", "x.toml", ".d", "e.", " "]
    for n in range(5):
        for combo in itertools.product(parts, repeat=n):
            p = "".join(combo)
            assert (path_text.normalized(p), path_text.stem(p)) == (str(PurePath(p)), PurePath(p).stem), p
