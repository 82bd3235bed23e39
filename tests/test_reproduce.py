import time

from typer.testing import CliRunner

from iosched.cli import app

runner = CliRunner()


def test_reproduce_seltzer1990_quick(tmp_path):
    out = tmp_path / "seltzer"
    t0 = time.perf_counter()
    r = runner.invoke(app, ["reproduce", "seltzer1990", "--quick", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert time.perf_counter() - t0 < 60
    report = (out / "report.md").read_text()
    for fig in range(2, 9):
        assert (out / f"fig{fig}.png").stat().st_size > 1000
        assert f"## Figure {fig}" in report
    assert "Quick mode" in report
    assert "15.4 ms" in report and "40%" in report
    assert "no check implemented" not in report
    assert (out / "runs.csv").exists()


def test_reproduce_missing_catalogue(tmp_path):
    r = runner.invoke(app, ["reproduce", "seltzer1990", "--quick", "--out", str(tmp_path),
                            "--catalogue", str(tmp_path / "nowhere")])
    assert r.exit_code == 2
    assert "Traceback" not in r.output
    assert "catalogue.toml: no such file" in r.stderr
