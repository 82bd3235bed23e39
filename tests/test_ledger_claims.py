"""The claims files: each loads, each is complete (every cell of the paper's tables is a row), and
a malformed row is refused with the file and the claim named."""

from collections import Counter

import pytest

from iosched import ledger
from iosched.ledger import ClaimsError, Tables, judge, rule
from iosched.ledger.scoreboard import PAPERS

# Cells of each paper's tables (rows x columns as printed), counted from the papers' text.
TABLE_CELLS = {
    "seltzer1990": {"Table 1": 7},  # the Eagle: 7 specifications
    "iyer2001": {},  # figures only
    "seelam2005": {"Table 1": 6, "Table 2": 6, "Table 3": 6, "Table 4": 20},
    # Table 1: size, read peak rate and NCQ of three disks; Table 2: min and max start-up of
    # bash and konsole under four schedulers.
    "valente2014": {"Table 1": 9, "Table 2": 16},
}


@pytest.mark.parametrize("paper", PAPERS)
def test_claims_file_loads_and_every_table_cell_is_a_row(paper):
    cf = ledger.load(ledger.claims_path(paper))
    assert cf.paper == paper
    counts = Counter(c.table for c in cf.claims if c.table)
    assert dict(counts) == TABLE_CELLS[paper]


@pytest.mark.parametrize("paper", PAPERS)
def test_every_claim_off_or_not_attempted_says_why(paper):
    """Checked on the committed claims.csv: an off or contradicted claim names its mechanism."""
    from pathlib import Path

    from iosched.ledger.scoreboard import read_claims

    path = Path(__file__).resolve().parents[1] / "docs" / "reproductions" / paper / "claims.csv"
    rows = read_claims(path)
    assert rows, path
    for r in rows:
        if r["verdict"] in (rule.OFF, rule.CONTRADICTED, rule.NOT_ATTEMPTED):
            assert r["note"].strip(), f"{paper} {r['id']}: {r['verdict']} without a note"


def _write(tmp_path, body: str):
    p = tmp_path / "claims.toml"
    p.write_text('paper = "x"\ntitle = "X"\n' + body)
    return p


GOOD = '''
[[claim]]
id = "a"
location = "1"
statement = "s"
kind = "cell"
unit = "s"
paper = 10
ours = { f = "value", x = "t/r/c" }
'''


def test_a_good_file_is_judged(tmp_path):
    cf = ledger.load(_write(tmp_path, GOOD))
    rows = judge(cf, Tables().add("t", {"r": {"c": 11.0}}))
    assert rows[0].verdict.verdict == rule.REPRODUCED


@pytest.mark.parametrize("body,message", [
    (GOOD.replace('kind = "cell"', 'kind = "guess"'), "kind 'guess'"),
    (GOOD.replace('paper = 10', 'paper = "about 10"'), "a cell needs a number"),
    (GOOD.replace('unit = "s"\n', ''), "`unit` is missing"),
    (GOOD + GOOD, "id used twice"),
    (GOOD.replace('ours = { f = "value", x = "t/r/c" }', ''), "exactly one of `ours`"),
    (GOOD.replace('kind = "cell"', 'kind = "direction"'), "expected `OP NUMBER`"),
    (GOOD.replace('id = "a"', 'id = "a"\ntolerance = 0.3'), "unknown field(s): tolerance"),
])
def test_a_malformed_row_is_named(tmp_path, body, message):
    with pytest.raises(ClaimsError) as e:
        ledger.load(_write(tmp_path, body))
    assert message in str(e.value)
    assert "claims.toml" in str(e.value)


def test_a_reference_the_run_lacks_is_an_error_unless_partial(tmp_path):
    cf = ledger.load(_write(tmp_path, GOOD))
    with pytest.raises(ledger.LedgerError) as e:
        judge(cf, Tables().add("t", {"r": {"d": 1.0}}))
    assert "claim a" in str(e.value) and "no column 'c'" in str(e.value)
    rows = judge(cf, Tables().add("t", {"r": {"d": 1.0}}), partial=True)
    assert rows[0].verdict.verdict == rule.NOT_ATTEMPTED


def test_notes_are_filled_from_the_tables(tmp_path):
    body = GOOD.replace('ours =', 'note = "ours {t/r/c:.1f} s"\nours =')
    rows = judge(ledger.load(_write(tmp_path, body)), Tables().add("t", {"r": {"c": 20.0}}))
    assert rows[0].note == "ours 20.0 s"
    assert rows[0].verdict.verdict == rule.OFF
