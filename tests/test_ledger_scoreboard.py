"""`iosched reproduce all` runs every paper and writes scoreboard.md from their claims.csv."""

import csv
import shutil
from pathlib import Path

from typer.testing import CliRunner

from iosched import cli
from iosched.ledger import scoreboard
from iosched.ledger.evaluate import CSV_COLUMNS

REPO = Path(__file__).resolve().parents[1]
runner = CliRunner()


def test_reproduce_all_runs_every_paper_and_writes_the_scoreboard(tmp_path, monkeypatch):
    ran = []

    def fake_reproduce(paper, out_dir, jobs, dask, **options):
        # Stands in for the runs: the committed claims.csv is what a run would write.
        ran.append((paper, options))
        out_dir.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / "docs" / "reproductions" / paper / "claims.csv", out_dir / "claims.csv")

    monkeypatch.setattr(cli, "_reproduce", fake_reproduce)
    r = runner.invoke(cli.app, ["reproduce", "all", "--quick", "--out", str(tmp_path)])
    assert r.exit_code == 0, r.output
    assert [p for p, _ in ran] == list(scoreboard.PAPERS)
    assert all(o["quick"] for _, o in ran)
    page = (tmp_path / "scoreboard.md").read_text()
    assert "iosched reproduce all --quick" in page
    for paper in scoreboard.PAPERS:
        rows = scoreboard.read_claims(tmp_path / paper / "claims.csv")
        c = scoreboard.counts(rows)
        assert f"({paper}/report.md) | {c['claims']} | {c['reproduced']}" in page
        assert f"{paper}: {c['claims']} claims: {c['reproduced']} reproduced" in r.output


def test_committed_claims_csv_have_exactly_the_columns():
    for paper in scoreboard.PAPERS:
        with (REPO / "docs" / "reproductions" / paper / "claims.csv").open(newline="") as f:
            assert next(csv.reader(f)) == CSV_COLUMNS


def test_committed_scoreboard_matches_the_committed_claims():
    page = (REPO / "docs" / "reproductions" / "scoreboard.md").read_text()
    for paper in scoreboard.PAPERS:
        c = scoreboard.counts(scoreboard.read_claims(REPO / "docs" / "reproductions" / paper / "claims.csv"))
        assert f"({paper}/report.md) | {c['claims']} | {c['reproduced']}" in page


def test_the_readme_shows_the_committed_scoreboards():
    by_paper = {p: scoreboard.counts(scoreboard.read_claims(REPO / "docs" / "reproductions" / p / "claims.csv"))
                for p in scoreboard.PAPERS}
    readme = (REPO / "README.md").read_text()
    assert "\n".join(scoreboard.table(by_paper, "docs/reproductions/")) in readme
