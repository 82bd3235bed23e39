"""`iosched reproduce seelam2005 --quick`: Seelam et al. 2005's Tables 1-3 and Figure 3 on the host."""

from typer.testing import CliRunner

from iosched.cli import app
from iosched.experiments import seelam2005


def test_seelam_quick(tmp_path):
    out = tmp_path / "seelam"
    res = CliRunner().invoke(app, ["reproduce", "seelam2005", "--quick", "--out", str(out)])
    assert res.exit_code == 0, res.output
    report = (out / "report.md").read_text()
    for section in ["## Table 1: streaming writes against a streaming read", "## Table 2: a streaming reader against a chunk reader",
                    "## Table 3 and Figure 3: one and two chunk readers"]:
        assert section in report, section
    assert (out / "figure3.png").stat().st_size > 1000
    assert list((out / "scenarios").glob("t2-*.toml"))
    known = seelam2005.registered_names()
    # deadline always runs, with the paper's figures beside ours.
    assert "| deadline | 129 |" in report and "| deadline | 297 |" in report and "| deadline | 14.5 |" in report
    for label, sched in seelam2005.SCHEDULERS:
        if sched["name"] in known:
            assert f"\n| {label} |" in report, label
        else:
            assert f"not run: scheduler `{sched['name']}` is not registered" in report, label


def test_unregistered_schedulers_are_skipped():
    rows, skipped = seelam2005.split_schedulers({"deadline", "anticipatory"})
    assert [label for label, _ in rows][0] == "deadline"
    assert all("stand-in" in label for label, _ in rows[1:])
    assert any("scheduler `las` is not registered" in line for line in skipped)
    assert any("scheduler `cas` is not registered" in line for line in skipped)
    rows, skipped = seelam2005.split_schedulers({"deadline", "las", "cas", "anticipatory"})
    assert [label for label, _ in rows][:3] == ["deadline", "LAS", "CAS"] and not skipped
