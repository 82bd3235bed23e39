"""`iosched reproduce valente2014 --quick`: Valente 2014's benchmark suite on the host (issue 14)."""

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from iosched.cli import app
from iosched.experiments import valente2014

TRACES = Path(os.environ.get("IOSCHED_S_TRACES", Path(__file__).resolve().parents[2] / "shared" / "traces"))


def _run(tmp_path, traces):
    out = tmp_path / "valente"
    args = ["reproduce", "valente2014", "--quick", "--out", str(out), "--jobs", "2"]
    if traces is not None:
        args += ["--traces", str(traces)]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    return out, (out / "report.md").read_text()


@pytest.mark.skipif(not (TRACES / "s_startup_xterm.trace").is_file(), reason="S start-up traces not found")
def test_valente_quick(tmp_path):
    out, report = _run(tmp_path, TRACES)
    for section in ["## Aggregate throughput (section 7.2, Figure 3)", "## Responsiveness: application start-up",
                    "## Start-up with NCQ (section 7.3.2, Table 2)", "## Video playback (section 7.4, Figure 7)",
                    "## Code development under load", "## Fairness"]:
        assert section in report, section
    assert (out / "throughput_first_seconds.png").stat().st_size > 1000
    # The paper's three schedulers have their rows, distinct (BFQ+ and BFQ must not share a key).
    for label in ["| BFQ+ |", "| BFQ |", "| CFQ |"]:
        assert label in report, label
    assert list((out / "scenarios").glob("tp-10r-seq-bfq-plus.toml"))
    assert list((out / "scenarios").glob("tp-10r-seq-bfq-original.toml"))
    # The weights are honoured by every BFQ whatever the budgets.
    assert "not honoured" not in report
    # Deterministic: a second run gives the same report apart from the wall time.
    _, again = _run(tmp_path / "again", TRACES)
    strip = lambda r: [line for line in r.splitlines() if "runs in" not in line]  # noqa: E731
    assert strip(report) == strip(again)


def test_missing_traces_are_reported_not_fatal(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    p = valente2014.traces_dir(empty)
    assert valente2014._trace(p, "xterm") is None
    res = CliRunner().invoke(app, ["reproduce", "valente2014", "--quick", "--traces", str(tmp_path / "nope"),
                                   "--out", str(tmp_path / "o")])
    assert res.exit_code != 0 and "not a directory" in res.output


def test_valente_quick_without_traces_runs_the_rest(tmp_path):
    empty = tmp_path / "no-traces"
    empty.mkdir()
    out, report = _run(tmp_path, empty)
    assert "(not found: xterm, gnometerm, lowriter)" in report
    assert "Not run: no S start-up trace found" in report
    assert "## Aggregate throughput (section 7.2, Figure 3)" in report and "## Fairness" in report
    assert "not honoured" not in report
