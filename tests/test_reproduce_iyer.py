"""`iosched reproduce iyer2001 --quick` writes a report whose numbers come from the model."""

from typer.testing import CliRunner

from iosched.cli import app


def test_iyer2001_quick(tmp_path):
    out = tmp_path / "iyer"
    res = CliRunner().invoke(app, ["reproduce", "iyer2001", "--quick", "--out", str(out)])
    assert res.exit_code == 0, res.output
    report = (out / "report.md").read_text()
    assert "Figure 4" in report and "Figure 5" in report and "Timer granularity" in report
    for fig in ["fig5.png", "fig6.png", "random.png"]:
        assert (out / fig).stat().st_size > 1000
    # Every point's scenario is kept and runs as written.
    scenarios = sorted((out / "scenarios").glob("*.toml"))
    assert len(scenarios) > 20
    res = CliRunner().invoke(app, ["run", str(scenarios[0]), "--json"])
    assert res.exit_code == 0, res.output
