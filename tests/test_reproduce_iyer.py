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


def test_iyer2001_full_from_any_directory(tmp_path):
    """Issue 9: outside the checkout the applications section was silently left out. The
    catalogue is package data now; the full report has every section."""
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "iosched.cli", "-q", "reproduce", "iyer2001", "--out", "rep", "--jobs", "2"],
                       capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    report = (tmp_path / "rep" / "report.md").read_text()
    assert "## Applications (sections 4.3-4.7)" in report
    for row in ["4.3 Andrew: scan phase time saved", "4.4 Apache (read)", "4.5 GnuLD", "4.6 TPC-B", "Stride with a 1:2 contract", "Figure 8 on the host", "Figure 7 adversary"]:
        assert row in report, row


def test_an_incomplete_catalogue_is_an_error_not_an_omission(tmp_path, monkeypatch):
    import iosched.catalogues

    monkeypatch.setattr(iosched.catalogues, "catalogue_dir", lambda paper: tmp_path / paper)
    res = CliRunner().invoke(app, ["reproduce", "iyer2001", "--out", str(tmp_path / "out"), "--jobs", "1"])
    assert res.exit_code == 2, res.output
    assert "iyer2001/andrew.toml: no such file" in res.stderr and "Traceback" not in res.output
