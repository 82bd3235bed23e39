"""`iosched reproduce valente2014 --quick`: Valente 2014's benchmark suite on the host (issue 14), its
claims judged by the ledger (issue 22)."""

import csv
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from iosched import ledger
from iosched.cli import app
from iosched.experiments import valente2014
from iosched.ledger import Tables
from iosched.ledger.evaluate import CSV_COLUMNS, fill_note
from iosched.ledger.rule import AtLeast

from conftest import TRACES

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = ROOT / "docs" / "reproductions" / "valente2014"
HAVE_TRACES = (TRACES / "s_startup_xterm.trace").is_file()


def _run(tmp_path, traces, jobs=2):
    out = tmp_path / "valente"
    args = ["reproduce", "valente2014", "--quick", "--out", str(out), "--jobs", str(jobs)]
    if traces is not None:
        args += ["--traces", str(traces)]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    return out, (out / "report.md").read_text()


def _claims(path):
    with open(path, newline="", encoding="utf-8") as f:
        r = csv.DictReader(f)
        assert r.fieldnames == CSV_COLUMNS
        return list(r)


def test_claims_file_tables_and_notes():
    cf = ledger.load(ledger.claims_path("valente2014"))
    counts = Counter(c.table for c in cf.claims if c.table)
    assert counts == {"Table 1": 9, "Table 2": 16}
    # Every claim about an absolute bash or konsole time is not attempted, naming the missing trace.
    for c in cf.claims:
        if c.table == "Table 2":
            assert c.not_attempted and ("no bash trace" in c.not_attempted or "no konsole trace" in c.not_attempted)
    # A relative claim judged on a stand-in names it in its statement.
    for c in cf.claims:
        if c.ours is not None and c.statement.startswith(("bash", "konsole")):
            assert "standing in for" in c.statement, c.id
        if c.id.startswith("video"):
            assert "xterm" in c.statement, c.id


@pytest.mark.skipif(not (COMMITTED / "claims.csv").is_file(), reason="no committed reproduction")
def test_committed_outputs_agree_with_the_claims_file():
    """The committed claims.csv is what the claims file gives on the committed tables.csv, and the
    notes' words hold on those tables (a note may not contradict the report)."""
    rows = _claims(COMMITTED / "claims.csv")
    t = Tables.read_csv(COMMITTED / "tables.csv")
    judged = ledger.judge(ledger.load(ledger.claims_path("valente2014")), t, valente2014.MEASURES)
    assert [r["id"] for r in rows] == [r.claim.id for r in judged]
    assert [r["verdict"] for r in rows] == [r.verdict.verdict for r in judged]
    assert [r["note"] for r in rows] == [r.note for r in judged]
    report = (COMMITTED / "report.md").read_text()
    assert report.startswith("# Valente 2014") and "\n## Scoreboard\n" in report
    assert report.index("## Scoreboard") < report.index("## The runs")
    for r in rows:
        if r["verdict"] in ("off", "contradicted"):
            assert r["note"], r["id"]
    v = lambda ref: t.ref(ref)  # noqa: E731
    wls = valente2014.WORKLOADS
    # Notes: "without the gaps BFQ+ is lower than CFQ and BFQ with every workload".
    for appname in ("xterm", "lowriter"):
        for wl in wls:
            assert v(f"startup_nd_{appname}/BFQ+/{wl}") < min(v(f"startup_nd_{appname}/CFQ/{wl}"),
                                                               v(f"startup_nd_{appname}/BFQ/{wl}"))
    # "BFQ is then below CFQ with 10r-seq and 10r-rand" (the no-gaps run).
    for wl in ("10r-seq", "10r-rand"):
        assert v(f"startup_nd_xterm/BFQ/{wl}") < v(f"startup_nd_xterm/CFQ/{wl}")
    # "CFQ drops more than BFQ+ with every workload".
    for wl in wls:
        assert v(f"video/CFQ/{wl}") > v(f"video/BFQ+/{wl}")
    # "The writers hardly reach the disk" (under a twentieth of the disk's traffic).
    for lab in ("BFQ+", "BFQ", "CFQ"):
        for wl in ("5r5w-seq", "5r5w-rand"):
            assert v(f"tp_write/{lab}/{wl}") < v(f"tp/{lab}/{wl}") / 20
    # "R_est lies between the two rates", "the worst here is the second disk".
    for disk in valente2014.DISKS:
        assert v(f"disks/{disk}/peak_at_s_mb_s") < v(f"disks/{disk}/estimate_mb_s") < v(f"disks/{disk}/peak_mb_s")
    ratios = {d: v(f"disks/{d}/estimate_over_peak") for d in valente2014.DISKS}
    assert min(ratios, key=ratios.get) == valente2014.NCQ_DISK
    # The bounds in the start-up tables are bounds (the NCQ runs stop at 300 s).
    assert any(isinstance(x, AtLeast) for x in t.ref("ncq_lowriter/CFQ/*").values())


@pytest.mark.skipif(not HAVE_TRACES, reason="S start-up traces not found")
def test_valente_quick(tmp_path):
    out, report = _run(tmp_path, TRACES)
    lines = report.splitlines()
    assert lines[0].startswith("# Valente 2014") and lines[2].startswith("P. Valente")
    assert "## Scoreboard" in lines[:12]
    for section in ["## Scoreboard", "## The three systems' disks (Table 1)",
                    "## Aggregate throughput (section 7.2, Figures 3 and 4)", "## Responsiveness: application start-up",
                    "### Controlled run: the recorded gaps not slept", "### Controlled run: S's replayer as it is compiled",
                    "## Start-up with NCQ (section 7.3.2, Table 2)", "## Video playback (section 7.4, Figure 7)",
                    "## Code development under load", "## Fairness"]:
        assert section in report, section
    assert (out / "throughput_first_seconds.png").stat().st_size > 1000
    # The paper's three schedulers have their rows, distinct (BFQ+ and BFQ must not share a key).
    for label in ["| BFQ+ |", "| BFQ |", "| CFQ |"]:
        assert label in report, label
    assert list((out / "scenarios").glob("tp-10r-seq-bfq-plus.toml"))
    assert list((out / "scenarios").glob("tp-10r-seq-bfq-original.toml"))
    # The ledger: claims.csv with its exact columns, one row per claim, every note filled.
    rows = _claims(out / "claims.csv")
    cf = ledger.load(ledger.claims_path("valente2014"))
    assert [r["id"] for r in rows] == [c.id for c in cf.claims]
    t = Tables.read_csv(out / "tables.csv")
    for c in cf.claims:
        if c.note:  # also the notes of not-attempted claims: their placeholders name real cells
            assert "{" not in fill_note(c.note, t), c.id
    # No verdict of the module's own below the ledger's section.
    body = report[report.index("## The runs"):]
    for word in ("reproduced", "not reproduced", "same order", "honoured", "verdict"):
        assert word not in body, word
    # Deterministic, whatever the number of workers: the same outputs apart from the wall time.
    out2, again = _run(tmp_path / "again", TRACES, jobs=1)
    strip = lambda r: [line for line in r.splitlines() if "runs in" not in line]  # noqa: E731
    assert strip(report) == strip(again)
    for name in ("claims.csv", "tables.csv"):
        assert (out / name).read_bytes() == (out2 / name).read_bytes(), name


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
    assert "## Aggregate throughput (section 7.2, Figures 3 and 4)" in report and "## Fairness" in report
    rows = {r["id"]: r for r in _claims(out / "claims.csv")}
    assert rows["responsive-xterm"]["verdict"] == "not attempted"
    assert rows["t1-stm332061-peak"]["verdict"] != "not attempted"


def test_measures():
    series = {"1": 40.0, "2": 50.0, "3": 60.0}
    assert valente2014.first_second_same(series, 58.0) == 2.0  # 50 >= 0.85 x 58
    assert valente2014.first_second_same(series, 100.0) == AtLeast(4.0)
    assert valente2014.count_above({"a": 2.0, "b": 1.0, "c": 3.0}, {"a": 1.0, "b": 2.0, "c": 1.0}) == 2.0
