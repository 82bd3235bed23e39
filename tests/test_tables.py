"""Issue 23, tables: every table the CLI prints fits 80 columns (and $COLUMNS when piped), drops
its least important columns by priority and names them, never cuts a name to an ellipsis, and
prints as table, csv or json (--json its alias)."""

import csv
import io
import json
import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from conftest import REPO, TRACES
from iosched.cli import app
from iosched.tables import Column, TableData, csv_text, fit, output_format

runner = CliRunner()

ELLIPSIS = "\u2026"


def invoke(args, columns):
    r = runner.invoke(app, args, env={"COLUMNS": str(columns)})
    assert r.exit_code == 0, r.output
    return r


def assert_fits(text: str, columns: int):
    assert ELLIPSIS not in text, text
    for line in text.splitlines():
        # Tables fit; lines of plain text are left whole (a path), so only table lines count.
        if line[:1] in "┏┃┡│└├╇┗":
            assert len(line) <= columns, f"{len(line)} > {columns}: {line}"


# Commands that print tables, quick enough to run here (bench and sweep have their own tests).
COMMANDS = [
    ["run"],
    ["list", "schedulers"],
    ["list", "devices"],
    ["trace", "formats"],
    ["calibrate", "--samples", "1", "--pairs", "10"],
]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a[:2]))
@pytest.mark.parametrize("columns", [80, 200])
def test_tables_fit_the_width_with_no_ellipsis(args, columns):
    r = invoke(args, columns)
    assert_fits(r.stdout, columns)


def test_run_at_80_columns_names_what_it_left_out_and_200_shows_everything():
    narrow = invoke(["run"], 80).stdout
    # Before issue 23: `sche…` and `ibm-…` at 80 columns, and 160 columns whatever $COLUMNS said.
    assert "anticipatory(aged-sptf)" in narrow and "columns not shown (80 wide): device" in narrow
    assert "--format csv has every column" in narrow
    wide = invoke(["run"], 200).stdout
    assert "columns not shown" not in wide
    assert "ibm-deskstar-34gxp" in wide and "util transfer" in wide and "resp p95 ms" in wide


def test_list_devices_names_are_whole_at_80_columns():
    out = invoke(["list", "devices"], 80).stdout
    for name in ("ibm-deskstar-34gxp", "seagate-st318451lw", "wd-ultrastar-hc310"):
        assert f"│ {name}" in out, name


def test_piped_output_honours_columns():
    env = dict(os.environ)  # the installed package, as a user runs it
    env.pop("COLUMNS", None)
    cmd = [sys.executable, "-m", "iosched.cli", "run"]
    default = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True).stdout
    assert_fits(default, 80)
    assert "columns not shown (80 wide)" in default
    wide = subprocess.run(cmd, capture_output=True, text=True, env={**env, "COLUMNS": "200"}, check=True).stdout
    assert "columns not shown" not in wide and max(len(x) for x in wide.splitlines()) > 120


def test_run_csv_is_every_column_of_the_dataframes():
    import iosched

    r = invoke(["run", "--format", "csv"], 80)
    blocks = r.stdout.split("\n\n")
    assert blocks[0].startswith("# runs\n") and blocks[1].startswith("# processes\n")
    runs = list(csv.DictReader(io.StringIO(blocks[0].split("\n", 1)[1])))
    procs = list(csv.DictReader(io.StringIO(blocks[1].split("\n", 1)[1])))
    res = iosched.run(iosched.Scenario.default(), records=False)
    assert list(runs[0]) == list(res.runs.columns)
    assert list(procs[0]) == list(res.processes.columns)
    assert [p["name"] for p in procs] == list(res.processes["name"])
    assert float(runs[2]["throughput_mb_s"]) == pytest.approx(res.runs["throughput_mb_s"][2])
    assert "run" not in r.stdout.split("\n")[0] or r.stdout.startswith("# runs")  # no title line in CSV


def test_format_json_is_the_json_flag():
    a = invoke(["run", "--format", "json"], 80).stdout
    b = invoke(["run", "--json"], 80).stdout
    assert json.loads(a) == json.loads(b)
    for args in (["list", "schedulers"], ["list", "devices"], ["trace", "formats"]):
        assert json.loads(invoke(args + ["--format", "json"], 80).stdout) == json.loads(invoke(args + ["--json"], 80).stdout)


def test_unknown_format_and_contradictions_are_one_line_errors():
    r = runner.invoke(app, ["run", "--format", "xml"])
    assert r.exit_code == 2 and "unknown output format `xml`" in r.stderr and "table, csv, json" in r.stderr
    r = runner.invoke(app, ["list", "devices", "--json", "--format", "csv"])
    assert r.exit_code == 2 and "contradict" in r.stderr


def test_list_csv_has_raw_values_and_what_the_table_leaves_out():
    rows = list(csv.DictReader(io.StringIO(invoke(["list", "devices", "--format", "csv"], 80).stdout)))
    d = next(r for r in rows if r["name"] == "ibm-deskstar-34gxp")
    assert d["rpm"] == "7200" and "IBM" in d["description"] and d["source"]
    rows = list(csv.DictReader(io.StringIO(invoke(["list", "schedulers", "--format", "csv"], 80).stdout)))
    deadline = next(r for r in rows if r["name"] == "deadline")
    assert "read_expire = 500 ms [0..2147483647]" in deadline["tunables"]


def test_trace_stats_formats():
    path = TRACES / "mqsim_tpcc-small.trace"
    if not path.exists():
        pytest.skip(f"{path} not present")
    for columns in (80, 200):
        assert_fits(invoke(["trace", "stats", str(path)], columns).stdout, columns)
    out = invoke(["trace", "stats", str(path), "--format", "csv"], 80).stdout
    assert out.startswith("# summary\nmetric,value\nrequests,6999\n")
    doc = json.loads(invoke(["trace", "stats", str(path), "--format", "json"], 80).stdout)
    assert doc["requests"] == 6999
    # The trace's own format: --trace-format, and --format NAME as before.
    for args in (["--trace-format", "mqsim"], ["--format", "mqsim"]):
        assert "6,999" in invoke(["trace", "stats", str(path), *args], 80).stdout


def test_sweep_summary_formats(tmp_path):
    scn = tmp_path / "s.toml"
    scn.write_text((REPO / "experiments" / "examples" / "two-readers.toml").read_text()
                   .replace("duration_s = 20", "duration_s = 0.2").replace("file_mib = 1024", "file_mib = 64"))
    args = ["sweep", str(scn), "--set", "device.preset=ibm-deskstar-34gxp,maxtor-stm332061", "-j", "1", "--plot", "none"]
    out = invoke(args + ["--out", str(tmp_path / "a")], 80).stdout
    assert_fits(out, 80)
    assert "one seed: no confidence interval" in " ".join(out.split()) and "95% CI" not in out
    text = invoke(args + ["--out", str(tmp_path / "b"), "--format", "csv"], 80).stdout
    rows = list(csv.DictReader(io.StringIO(text)))
    assert {r["param:device.preset"] for r in rows} == {"ibm-deskstar-34gxp", "maxtor-stm332061"}
    assert {r["metric"] for r in rows} == {"throughput_mb_s"}


def test_fit_drops_by_priority_and_keeps_the_first_column():
    t = TableData("t", "t", [Column("a", "name"), Column("b", "important", 1), Column("c", "extra", 3),
                             Column("d", "less", 2)],
                  [{"a": "x" * 20, "b": "y" * 20, "c": "z" * 20, "d": "w" * 20}])
    assert fit(t, 200).dropped == []
    assert fit(t, 80).dropped == ["extra"]
    assert fit(t, 60).dropped == ["extra", "less"]
    assert fit(t, 10).columns[0].key == "a"  # what names the row stays


def test_wrap_columns_wrap_and_names_do_not():
    t = TableData("t", "t", [Column("n", "name"), Column("s", "summary", 1, wrap=True)],
                  [{"n": "anticipatory(aged-sptf)", "s": "word " * 30}])
    f = fit(t, 60)
    assert f.dropped == [] and f.widths[0] == len("anticipatory(aged-sptf)")
    assert sum(f.widths) + 3 * 2 + 1 == 60


def test_csv_of_one_table_is_plain():
    t = TableData("t", "t", [Column("a", "A")], [{"a": 1.5, "b": [1, 2], "c": None}])
    assert csv_text([t]) == "a,b,c\n1.5,1; 2,\n"
    assert output_format("table", True) == "json"
