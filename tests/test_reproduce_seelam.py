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
    # Section 6: the measured ranking on both arrays and adaptive against each fixed scheduler.
    assert "## Figure 5 and the adaptive scheduler (section 6)" in report
    assert (out / "figure5.png").stat().st_size > 1000
    assert report.count("adaptive switched") == 2
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
    assert any("scheduler `las-2.6.9` is not registered" in line for line in skipped)
    assert any("scheduler `cas-2.6.9` is not registered" in line for line in skipped)
    rows, skipped = seelam2005.split_schedulers({"deadline", "las-2.6.9", "cas-2.6.9", "las", "cas", "anticipatory"})
    assert [label for label, _ in rows][:3] == ["deadline", "LAS", "CAS"] and not skipped


def _program_b_time(name: str):
    """Table 2's setting (--quick: 1,776 files beside a streaming cat, 400 s): B's time or None."""
    import tomli_w
    from iosched.pool import run_task

    run = run_task((tomli_w.dumps(seelam2005._t2_scenario({"name": name}, True)), "t2.toml", None))[0]
    return {t["name"]: t for t in run["host"]["tasks"]}["B"]["elapsed_s"], run["scheduler_counters"]


def test_las_of_2_6_9_starves_the_chunk_reader_and_cas_bounds_it():
    deadline, _ = _program_b_time("deadline")
    las, counters = _program_b_time("las-2.6.9")
    cas, _ = _program_b_time("cas-2.6.9")
    assert deadline is not None and deadline < 200
    # LAS: B's cats wait for their reads to expire in the FIFO; 400 s are not enough.
    assert las is None, las
    assert counters["break_close"] == 0 and counters["break_exited"] > 1000
    # CAS dispatches B's close reads during A's anticipation: no slower than deadline.
    assert cas is not None and cas <= deadline, (cas, deadline)
