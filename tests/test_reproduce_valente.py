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
    # Table 2: bash is recorded here, so its cells are judged; konsole's are not attempted, naming why.
    for c in cf.claims:
        if c.table == "Table 2":
            if "-bash-" in c.id:
                assert c.ours is not None and not c.not_attempted, c.id
            else:
                assert c.not_attempted and "konsole cannot be installed" in c.not_attempted, c.id
    # A relative claim about konsole is judged on the stand-in and says so.
    for c in cf.claims:
        if c.ours is not None and "konsole" in c.statement.split(":")[0]:
            assert "standing in for konsole" in c.statement, c.id
        if c.id.startswith("video") and c.ours is not None:
            assert "bash" in c.statement and "xterm" not in c.statement, c.id


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
    # responsive-bash: "most of the difference is each start-up's first read waiting for the reader
    # in service"; "shorter slots trade that wait for others".
    extra_ms = 1000 * (v("startup_bash/BFQ+/10r-seq") - v("startup_bash/idle/idle"))
    wait_ms = v("startup_first_ms_bash/BFQ+/10r-seq") - v("startup_first_ms_bash/idle/idle")
    assert wait_ms > extra_ms / 2
    assert v("startup_first_ms_bash/BFQ+ timeout_sync 31 ms/10r-seq") < v("startup_first_ms_bash/BFQ+/10r-seq") / 1.5
    assert v("startup_bash/BFQ+ timeout_sync 31 ms/10r-seq") > 0.85 * v("startup_bash/BFQ+/10r-seq")
    # video-bound: "the command is BFQ+'s cost ...; not the raising".
    assert v("video_nocmd/BFQ+/5r5w-rand") < v("video/BFQ+/5r5w-rand") / 3
    assert v("video/BFQ+ low_latency off/5r5w-rand") > v("video/BFQ+/5r5w-rand") / 2
    # t2-bfq-plus-bash-max: "the 10r-* cells lie in or near the paper's range; 5r5w-* are the outliers".
    for wl in ("10r-seq", "10r-rand"):
        assert v(f"ncq_bash/BFQ+/{wl}") < 0.4
    for wl in ("5r5w-seq", "5r5w-rand"):
        assert v(f"ncq_bash/BFQ+/{wl}") > 1.0
        assert v(f"tp_ncq_write/BFQ+/{wl}") > v(f"tp_write/BFQ+/{wl}")
    # "R_est lies between the two rates", "the worst here is the second disk".
    for disk in valente2014.DISKS:
        assert v(f"disks/{disk}/peak_at_s_mb_s") < v(f"disks/{disk}/estimate_mb_s") < v(f"disks/{disk}/peak_mb_s")
    ratios = {d: v(f"disks/{d}/estimate_over_peak") for d in valente2014.DISKS}
    assert min(ratios, key=ratios.get) == valente2014.NCQ_DISK


def test_valente_quick(tmp_path):
    """Runs with the start-ups recorded here (installed with the package) and S's when found."""
    traces = TRACES if HAVE_TRACES else None
    out, report = _run(tmp_path, traces)
    lines = report.splitlines()
    assert lines[0].startswith("# Valente 2014") and lines[2].startswith("P. Valente")
    assert "## Scoreboard" in lines[:12]
    for section in ["## Scoreboard", "## The three systems' disks (Table 1)",
                    "## Aggregate throughput (section 7.2, Figures 3 and 4)", "## Responsiveness: application start-up",
                    "### bash (`bash -c exit`, recorded here)", "### python3.11 importing stdlib packages",
                    "### Controlled run: a freshly selected scheduler", "### Controlled run: the README replay",
                    "## Start-up with NCQ (section 7.3.2, Table 2)", "## Video playback (section 7.4, Figure 7)",
                    "## Code development under load", "## Fairness"]:
        assert section in report, section
    assert (out / "throughput_first_seconds.png").stat().st_size > 1000
    # The paper's four schedulers have their rows, distinct (BFQ+ and BFQ must not share a key).
    for label in ["| BFQ+ |", "| BFQ |", "| CFQ |", "| NOOP |"]:
        assert label in report, label
    assert list((out / "scenarios").glob("tp-10r-seq-bfq-plus.toml"))
    assert list((out / "scenarios").glob("tp-10r-seq-bfq-original.toml"))
    assert list((out / "scenarios").glob("tp-ncq-10r-seq-cfq.toml"))  # Figure 4 with CFQ
    # The ledger: claims.csv with its exact columns, one row per claim, every note filled.
    rows = _claims(out / "claims.csv")
    cf = ledger.load(ledger.claims_path("valente2014"))
    assert [r["id"] for r in rows] == [c.id for c in cf.claims]
    by_id = {r["id"]: r for r in rows}
    assert by_id["responsive-bash"]["verdict"] != "not attempted"
    assert by_id["t2-bfq-plus-bash-min"]["verdict"] != "not attempted"
    t = Tables.read_csv(out / "tables.csv")
    s_tables = ("_xterm/", "_gnometerm/", "_lowriter/")  # the S suite's start-ups: run with its traces only
    for c in cf.claims:
        if c.note and (traces is not None or not any(x in c.note for x in s_tables)):
            assert "{" not in fill_note(c.note, t), c.id
    # No verdict of the module's own below the ledger's section.
    body = report[report.index("## The runs"):]
    for word in ("reproduced", "not reproduced", "same order", "honoured", "verdict"):
        assert word not in body, word
    # Deterministic, whatever the number of workers: the same outputs apart from the wall time.
    out2, again = _run(tmp_path / "again", traces, jobs=1)
    strip = lambda r: [line for line in r.splitlines() if "runs in" not in line]  # noqa: E731
    assert strip(report) == strip(again)
    for name in ("claims.csv", "tables.csv"):
        assert (out / name).read_bytes() == (out2 / name).read_bytes(), name


def test_the_scenarios_follow_the_papers_procedure(tmp_path):
    """The start-up runs as the 2011 script: a previous sequential benchmark, the caches dropped,
    the workload, 16 s, then 1 s pause + drop + start-up, S's replayer as compiled."""
    found = valente2014.find_traces(tmp_path)  # no S traces there: the two recorded here
    assert set(found) == {"bash", "pyimport"}
    scn = valente2014._startup_scenario(valente2014.PAPER_DISK, 1, {"name": "bfq-plus"}, found["bash"], "10r-rand",
                                        False, 100.0)
    tasks = {t["name"]: t for t in scn["task"]}
    assert list(tasks) == ["previous", "drop", "background", "app"]
    assert tasks["previous"]["command"] == "cat" and tasks["drop"]["after"] == "previous"
    assert tasks["background"]["after"] == "drop" and tasks["app"]["after"] == "drop"
    app = tasks["app"]
    assert (app["start_ms"], app["pause_s"], app["settle_s"], app["short_startup_pause_s"], app["iterations"]) == (
        16000.0, 1.0, 0.0, 0.0, 10)
    assert "deltas" not in app and "async_ra" not in app  # the defaults are S's code
    cold = valente2014._startup_scenario(valente2014.PAPER_DISK, 1, {"name": "bfq-plus"}, found["bash"], "10r-rand",
                                         False, 100.0, warm=False)
    assert [t["name"] for t in cold["task"]] == ["background", "app"]
    readme = valente2014._startup_scenario(valente2014.PAPER_DISK, 1, {"name": "bfq-plus"}, found["bash"], None,
                                           False, 100.0, readme=True)
    app = [t for t in readme["task"] if t["name"] == "app"][0]
    assert (app["deltas"], app["async_ra"]) == (True, False) and "start_ms" not in app
    video = {t["name"]: t for t in valente2014._video_scenario({"name": "cfq"}, "10r-seq", found, False)["task"]}
    assert video["video"]["start_ms"] == video["command"]["start_ms"] == 16000.0
    assert video["command"]["trace"] == str(found["bash"])


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
    assert "### bash (`bash -c exit`, recorded here)" in report and "### xterm (S)" not in report
    assert "## Aggregate throughput (section 7.2, Figures 3 and 4)" in report and "## Fairness" in report
    rows = {r["id"]: r for r in _claims(out / "claims.csv")}
    assert rows["responsive-xterm"]["verdict"] == "not attempted"
    assert rows["responsive-bash"]["verdict"] != "not attempted"
    assert rows["t1-stm332061-peak"]["verdict"] != "not attempted"


def test_measures():
    series = {"1": 40.0, "2": 50.0, "3": 60.0}
    assert valente2014.first_second_same(series, 58.0) == 2.0  # 50 >= 0.85 x 58
    assert valente2014.first_second_same(series, 100.0) == AtLeast(4.0)
    assert valente2014.count_above({"a": 2.0, "b": 1.0, "c": 3.0}, {"a": 1.0, "b": 2.0, "c": 1.0}) == 2.0
