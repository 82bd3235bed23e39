"""`iosched validate`: replay of a DiskSim validate trace on a drive model (issue 4 part 2).

The small cases run on a built-in preset (a drive name that is not a file); the DiskSim drives
of ../shared/disksim-validation run when that directory and the DiskSim loader are available.
"""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from iosched.cli import app

runner = CliRunner()

VALID = Path(__file__).resolve().parents[2] / "shared" / "disksim-validation"

TRACE = """R Hit    1000   8   5000.0  20000.0
R Hit    1008   8    600.0  20000.0
W Miss 900000   8   9000.0   3000.0
R Doub 500000  16  12000.0      0.0
"""


def _trace(tmp_path, text=TRACE, name="t.trace"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_json_has_the_figures_and_the_breakdown(tmp_path):
    r = runner.invoke(app, ["validate", "ibm-deskstar-34gxp", str(_trace(tmp_path)), "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["requests"] == 4
    assert out["measured_mean_ms"] == pytest.approx((5.0 + 0.6 + 9.0 + 12.0) / 4)
    assert out["simulated_mean_ms"] > 0 and out["demerit_ms"] > 0
    assert out["demerit_disksim_method_ms"] > 0
    assert out["timing"] == "after-completion"
    by = {(c["by"], c["class"]): c["requests"] for c in out["classes"]}
    assert by[("buffer", "Hit")] == 2 and by[("buffer", "Miss")] == 1 and by[("buffer", "Doub")] == 1
    assert by[("op", "read")] == 3 and by[("op", "write")] == 1
    assert by[("seek", "sequential")] == 1
    assert sum(n for (k, _), n in by.items() if k == "simulated") == 4


def test_table_output(tmp_path):
    r = runner.invoke(app, ["validate", "ibm-deskstar-34gxp", str(_trace(tmp_path))])
    assert r.exit_code == 0, r.output
    assert "measured mean 6.650 ms" in r.stdout and "demerit" in r.stdout
    assert "by DiskSim's rms method" in r.stdout
    assert "sequential" in r.stdout and "write" in r.stdout


def test_open_loop_timing_queues_behind_long_requests(tmp_path):
    # Open loop: gaps are between arrivals, so the 3 ms gap before the 4th request makes it wait.
    closed = json.loads(runner.invoke(app, ["validate", "ibm-deskstar-34gxp", str(_trace(tmp_path)), "--json"]).stdout)
    opened = runner.invoke(app, ["validate", "ibm-deskstar-34gxp", str(_trace(tmp_path)), "--json", "--timing", "arrival"])
    assert opened.exit_code == 0, opened.output
    assert json.loads(opened.stdout)["timing"] == "arrival"
    assert json.loads(opened.stdout)["simulated_mean_ms"] >= closed["simulated_mean_ms"]


def _error(args):
    r = runner.invoke(app, args)
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("error: ")
    return lines[0]


@pytest.mark.parametrize(
    "line, expected",
    [
        ("X Hit 1 4 10 10", "the first field must be R or W: `X`"),
        ("R Maybe 1 4 10 10", "the second field must be one of Hit, Miss, Doub, Trip: `Maybe`"),
        ("R Hit 1 4 10", "expected 6 fields"),
        ("R Hit abc 4 10 10", "start block: expected a non-negative integer: `abc`"),
        ("R Hit 1 4 -5 10", "response time (µs): expected a number in [0, 1e9]: `-5`"),
        ("R Hit 99999999999 4 10 10", "beyond the"),
    ],
)
def test_bad_trace_line_names_file_line_and_text(tmp_path, line, expected):
    p = _trace(tmp_path, "R Hit 0 4 10 10\n\n" + line + "\n")
    msg = _error(["validate", "ibm-deskstar-34gxp", str(p)])
    assert msg.startswith(f"error: {p}:3: "), msg
    assert expected in msg


def test_missing_files_and_wrong_formats(tmp_path):
    missing = tmp_path / "nope.trace"
    assert _error(["validate", "ibm-deskstar-34gxp", str(missing)]) == f"error: {missing}: cannot read the trace: no such file"
    ascii_trace = _trace(tmp_path, "0.0 0 0 4 1\n", "a.trace")
    msg = _error(["validate", "ibm-deskstar-34gxp", str(ascii_trace)])
    assert str(ascii_trace) in msg and "ascii format" in msg
    bad_drive = tmp_path / "nope.parv"
    msg = _error(["validate", str(bad_drive), str(_trace(tmp_path))])
    assert str(bad_drive) in msg
    assert _error(["validate", "ibm-deskstar-34gxp", str(_trace(tmp_path)), "--timing", "soon"]).startswith("error: --timing")


def test_bench_validate_reports_the_replay(tmp_path):
    p = _trace(tmp_path)
    r = runner.invoke(app, ["bench", "--validate", "ibm-deskstar-34gxp", "--validate", str(p), "--repeats", "1", "--json"])
    assert r.exit_code == 0, r.output
    (row,) = json.loads(r.stdout)["results"]
    assert row["requests"] == 4 and row["scheduler"] == "fcfs" and row["requests_per_cpu_s"] > 0
    assert _error(["bench", "--validate", "ibm-deskstar-34gxp"]).startswith("error: --validate")


@pytest.mark.skipif(not (VALID / "hp_c2247a.parv").exists(), reason="../shared/disksim-validation absent")
def test_explain_lists_every_parameter_with_no_timing_effect_and_why(tmp_path):
    drive, trace = VALID / "hp_c2247a.parv", VALID / "hp_c2247a.trace"
    r = runner.invoke(app, ["validate", str(drive), str(trace), "--json", "--explain"])
    assert r.exit_code == 0, r.output
    ex = json.loads(r.stdout)["explain"]
    assert ex["drive"] == "HP_C2247A_validate"
    names = [i["parameter"] for i in ex["ignored"]]
    assert any(n.startswith("Sparing scheme used = 1 (") for n in names)
    assert all(i["reason"] for i in ex["ignored"])
    # Without --explain the JSON is as before (no `explain` key).
    plain = json.loads(runner.invoke(app, ["validate", str(drive), str(trace), "--json"]).stdout)
    assert "explain" not in plain
    table = runner.invoke(app, ["validate", str(drive), str(trace), "--explain"])
    assert table.exit_code == 0 and "parameters with no timing effect" in table.output
