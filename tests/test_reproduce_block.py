"""`iosched reproduce block --quick`: every section is there and its numbers come from runs."""

from typer.testing import CliRunner

from iosched.cli import app


def test_block_quick(tmp_path):
    out = tmp_path / "block"
    res = CliRunner().invoke(app, ["-q", "reproduce", "block", "--quick", "--out", str(out), "--jobs", "2"])
    assert res.exit_code == 0, res.output
    report = (out / "report.md").read_text()
    for section in ["## NCQ", "## Merging", "## Request limits", "## kyber"]:
        assert section in report, section
    assert (out / "ncq.png").stat().st_size > 5000
    # Every row's scenario is kept and runs as written.
    scenarios = sorted((out / "scenarios").glob("*.toml"))
    assert len(scenarios) >= 30
    res = CliRunner().invoke(app, ["run", str(scenarios[0]), "--json"])
    assert res.exit_code == 0, res.output
