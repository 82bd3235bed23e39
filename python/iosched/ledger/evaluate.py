"""Judge a paper's claims on a run's tables: claims.csv, the scoreboard and the claim list.

`judge(claims_file, tables)` gives one `Row` per claim (rule.py decides every verdict);
`write_claims_csv` writes exactly the columns
`id,location,statement,kind,unit,paper_value,ours,verdict,factor,note`;
`scoreboard` counts the verdicts; `report_section` is what every report opens with.
"""

from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Union

from . import rule
from .claims import Claim, ClaimsFile
from .measures import Measure, MeasureError, evaluate
from .rule import AtLeast, AtMost, Measured
from .tables import TableError, Tables

CSV_COLUMNS = ["id", "location", "statement", "kind", "unit", "paper_value", "ours", "verdict", "factor", "note"]


@dataclass(frozen=True)
class Row:
    claim: Claim
    ours: object  # a Measured, a {item: Measured} (rankings), or None (not attempted)
    reference: Optional[Measured]
    verdict: rule.Verdict
    note: str

    def csv(self) -> dict:
        c = self.claim
        return {
            "id": c.id, "location": c.location, "statement": c.statement, "kind": c.kind,
            "unit": c.unit, "paper_value": paper_text(c), "ours": ours_text(self),
            "verdict": self.verdict.verdict, "factor": factor_text(self.verdict), "note": self.note,
        }


class LedgerError(ValueError):
    """A claim whose measure cannot be computed from the tables (names the file and claim)."""


def judge(cf: ClaimsFile, tables: Tables, measures: Optional[Dict[str, Measure]] = None,
          partial: bool = False) -> List[Row]:
    """One row per claim. `partial` (a --quick run, which measures fewer points): a claim whose
    tables are missing is not attempted; otherwise a missing table is an error in the claim."""
    extra = measures or {}
    rows = []
    for c in cf.claims:
        where = f"{cf.path}: claim {c.id}"
        if c.not_attempted:
            # The reason, and what a note adds (e.g. what a stand-in measured, by placeholders).
            try:
                added = fill_note(c.note, tables) if c.note else ""
            except TableError as e:
                if not partial:
                    raise LedgerError(f"{where}: {e}") from None
                added = ""
            note = c.not_attempted + (f" {added}" if added else "")
            rows.append(Row(c, None, None, rule.Verdict(rule.NOT_ATTEMPTED), note))
            continue
        try:
            ours = evaluate(c.ours, tables, extra)
            ref = evaluate(c.reference, tables, extra) if c.kind == "close" else None
            verdict = _verdict(c, ours, ref)
            note = fill_note(c.note, tables)
        except TableError as e:
            if not partial:
                raise LedgerError(f"{where}: {e}") from None
            rows.append(Row(c, None, None, rule.Verdict(rule.NOT_ATTEMPTED), f"not measured by this (partial) run: {e}"))
            continue
        except (MeasureError, ValueError) as e:
            raise LedgerError(f"{where}: {e}") from None
        if verdict.verdict == rule.NOT_ATTEMPTED and not note:
            note = "the run ended before the program finished; the bound does not decide"
        rows.append(Row(c, ours, ref, verdict, note))
    return rows


def _verdict(c: Claim, ours, ref) -> rule.Verdict:
    if c.kind in rule.NUMERIC_KINDS:
        _scalar(c, ours)
        return rule.judge_number(c.kind, c.paper, ours)
    if c.kind in rule.TEST_KINDS:
        _scalar(c, ours)
        op, value = c.test
        return rule.judge_test(c.kind, op, value, ours)
    if c.kind == "close":
        _scalar(c, ours)
        _scalar(c, ref)
        if not isinstance(ref, float):
            raise ValueError("close: the reference must be an exact number")
        return rule.judge_close(ours, ref)
    if c.kind == "ranking":
        if not isinstance(ours, dict):
            raise ValueError("a ranking's measure must give {item: value} (use f = \"items\")")
        return rule.judge_ranking(c.paper, ours)
    raise ValueError(f"kind {c.kind!r}")


def _scalar(c: Claim, x) -> None:
    if not isinstance(x, (float, AtLeast, AtMost)):
        raise ValueError(f"a {c.kind} claim's measure must give one number, got {x!r}")


_PLACEHOLDER = re.compile(r"\{([^{}:/\s]+/[^{}:/]+/[^{}:/]+)(?::([^{}]*))?\}")


def fill_note(note: str, tables: Tables) -> str:
    """A note's `{table/row/column:format}` placeholders filled from the run's tables, so a note
    quoting a controlled run's figure is regenerated with it."""
    def sub(m):
        v = tables.ref(m.group(1))
        return fmt_number(v, m.group(2) or ".3g")

    return _PLACEHOLDER.sub(sub, note)


# -- text -----------------------------------------------------------------------------------

def fmt_number(v: Measured, spec: str = ".6g") -> str:
    if isinstance(v, AtLeast):
        return ">=" + format(v.value, spec)
    if isinstance(v, AtMost):
        return "<=" + format(v.value, spec)
    v = float(v)
    if math.isnan(v):
        return "nan"
    return format(v, spec)


def paper_text(c: Claim) -> str:
    p = c.paper
    if c.kind == "ranking":
        return ranking_text(p, rule.paper_tiers(p))
    if c.kind == "close":
        return f"within {rule.CLOSE:.0%} of the reference"
    if isinstance(p, list):
        return f"{fmt_number(float(p[0]))} to {fmt_number(float(p[1]))}"
    if isinstance(p, str):
        return p
    return fmt_number(float(p))


def ranking_text(values: dict, tiers) -> str:
    """`a = b < c` (tiers joined by =, in ascending order)."""
    return " < ".join(" = ".join(f"{k} {fmt_number(values[k])}" for k in t) for t in tiers)


def ours_text(row: Row) -> str:
    if row.ours is None:
        return ""
    if row.claim.kind == "ranking":
        ours = row.ours
        order = sorted(ours, key=lambda k: (_sort_value(ours[k]), k))
        return " < ".join(f"{k} {fmt_number(ours[k])}" for k in order)
    text = fmt_number(row.ours)
    if row.claim.kind == "close" and row.reference is not None:
        text += f" (reference {fmt_number(row.reference)})"
    return text


def _sort_value(v: Measured) -> float:
    return v.value if isinstance(v, (AtLeast, AtMost)) else float(v)


def factor_text(v: rule.Verdict) -> str:
    if v.factor is None or math.isnan(v.factor):
        return ""
    return v.factor_bound + format(v.factor, ".3g")


def write_claims_csv(rows: List[Row], path: Union[str, Path]) -> Path:
    path = Path(path)
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=CSV_COLUMNS, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow(r.csv())
    return path


def count_verdicts(rows: List[Row]) -> Dict[str, int]:
    counts = {"claims": len(rows)}
    for v in rule.VERDICTS:
        counts[v] = sum(1 for r in rows if r.verdict.verdict == v)
    return counts


def scoreboard_line(counts: Dict[str, int]) -> str:
    n = counts["claims"]
    share = f" ({counts[rule.REPRODUCED] / n:.0%})" if n else ""
    return (f"{n} claims: {counts[rule.REPRODUCED]} reproduced{share}, {counts[rule.OFF]} off, "
            f"{counts[rule.CONTRADICTED]} contradicted, {counts[rule.NOT_ATTEMPTED]} not attempted")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def report_section(rows: List[Row], claims_path: str) -> List[str]:
    """The scoreboard and every claim, as markdown lines (what a report opens with)."""
    counts = count_verdicts(rows)
    lines = [
        "## Scoreboard",
        "",
        "| claims | reproduced | off | contradicted | not attempted |",
        "|---|---|---|---|---|",
        f"| {counts['claims']} | {counts[rule.REPRODUCED]} | {counts[rule.OFF]} | "
        f"{counts[rule.CONTRADICTED]} | {counts[rule.NOT_ATTEMPTED]} |",
        "",
        f"Every quantitative claim of the paper's experiments is a row of `{claims_path}`, judged "
        "by one rule (docs/reproductions/ledger.md): numbers, ratios and percents within "
        f"{rule.TOLERANCE:.0%} of the paper's value in its own metric (or inside its stated range); "
        f"rankings in the paper's order wherever its neighbours differ by more than {rule.RANKING_TIE:.0%}; "
        f"\"close to\" within {rule.CLOSE:.0%}; directions and thresholds by the test in the row. "
        "Factor = ours / paper. The same rows are in claims.csv.",
        "",
        "| id | where | claim | unit | paper | ours | verdict | factor | note |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        d = r.csv()
        verdict = f"**{d['verdict']}**" if d["verdict"] != rule.REPRODUCED else d["verdict"]
        lines.append("| " + " | ".join(_cell(x) for x in [
            d["id"], d["location"], d["statement"], d["unit"], d["paper_value"], d["ours"], verdict,
            d["factor"], d["note"]]) + " |")
    lines.append("")
    return lines
