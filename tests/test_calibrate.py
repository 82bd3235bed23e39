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
    a = runner.invoke(app, args, env={"COLUMNS": "200"})  # every header on one line
    assert a.exit_code == 0, a.output
    assert "ibm-deskstar-34gxp" in a.stdout and "fitted within 25%" in a.stdout
    assert runner.invoke(app, args, env={"COLUMNS": "200"}).stdout == a.stdout


def test_calibrate_unknown_device_is_a_clear_error():
    r = runner.invoke(app, ["calibrate", "--device", "floppy"])
    assert r.exit_code == 2
    assert "floppy" in r.output and "ibm-deskstar-34gxp" in r.output


def test_calibrate_a_real_file_and_save_the_curve(tmp_path):
    """--real times O_DIRECT reads of a real file (no model to compare with) and --curve saves
    what `iosched mount --backend real --calibration` loads."""
    f = tmp_path / "data"
    f.write_bytes(bytes(range(256)) * (4 * 4096))  # 4 MiB
    curve = tmp_path / "curve.json"
    r = runner.invoke(app, ["calibrate", "--real", str(f), "--samples", "1", "--max-idle-ms", "0.2",
                            "--curve", str(curve), "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["path"] == str(f) and doc["reads"] > 50
    points = doc["calibration"]["points"]
    assert any(p["distance"] > 5000 for p in points) and any(p["distance"] < -5000 for p in points)
    assert json.loads(curve.read_text())["calibration"]["curve"]["forward"]


def test_calibrate_real_bad_path_one_message(tmp_path):
    r = runner.invoke(app, ["calibrate", "--real", str(tmp_path / "missing")])
    assert r.exit_code == 2
    assert "missing" in r.output and "Traceback" not in r.output
