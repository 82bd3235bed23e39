"""`iosched calibrate`: the positioning-time calibration of a simulated preset."""

import csv
import json

from typer.testing import CliRunner

from iosched.cli import app

runner = CliRunner()


def test_calibrate_json_report(tmp_path):
    out = tmp_path / "cal.csv"
    r = runner.invoke(app, ["calibrate", "--device", "seagate-st318451lw", "--samples", "2", "--pairs", "50",
                            "--json", "--out", str(out)])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["device"] == "seagate-st318451lw" and doc["seed"] == 2001
    points = doc["calibration"]["points"]
    assert len(points) == len(doc["fitted_ns"]) > 20
    assert [p["distance"] for p in points] == sorted(p["distance"] for p in points)
    assert {a["pairs_kind"] for a in doc["accuracy"]} == {"uniform", "log-distance"}
    for a in doc["accuracy"]:
        assert a["pairs"] == 50 and 0.0 <= a["fitted_within_25"] <= 1.0
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == len(points)
    assert set(rows[0]) == {"distance_sectors", "measured_immediate_ms", "measured_delayed_ms",
                            "measured_mean_ms", "fitted_ms", "model_ms", "actual_ms"}


def test_calibrate_is_deterministic_and_prints_tables():
    args = ["calibrate", "--samples", "2", "--pairs", "20", "--seed", "5"]
    a = runner.invoke(app, args)
    assert a.exit_code == 0, a.output
    assert "ibm-deskstar-34gxp" in a.stdout and "fitted within 25%" in a.stdout
    assert runner.invoke(app, args).stdout == a.stdout


def test_calibrate_unknown_device_is_a_clear_error():
    r = runner.invoke(app, ["calibrate", "--device", "floppy"])
    assert r.exit_code == 2
    assert "floppy" in r.output and "ibm-deskstar-34gxp" in r.output
