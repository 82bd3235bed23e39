"""The claims ledger: every paper's quantitative claims as data, judged by one rule.

- `rule.py`: the verdict rule (the only tolerances there are).
- `claims.py`: a paper's claims file (catalogues/PAPER/claims.toml), checked on load.
- `tables.py`: what a reproduction's runs measured (tables.csv beside its report).
- `measures.py`: named functions computing a claim's `ours` from the tables.
- `evaluate.py`: verdicts, claims.csv, the scoreboard a report opens with (`count_verdicts`).
- `scoreboard.py`: every paper's scoreboard in one page (`iosched reproduce all`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Optional, Tuple

from .claims import Claim, ClaimsError, ClaimsFile, load
from .evaluate import LedgerError, Row, count_verdicts, judge, report_section, write_claims_csv
from .tables import Tables


def claims_path(paper: str) -> Path:
    """The installed claims file of `paper`."""
    from ..catalogues import catalogue_dir

    return catalogue_dir(paper) / "claims.toml"


def write(paper: str, tables: Tables, out: Path, measures: Optional[Dict] = None,
          path: Optional[Path] = None, partial: bool = False) -> Tuple[List[Row], List[str]]:
    """Judge `paper`'s claims on `tables`; write tables.csv and claims.csv into `out`. Returns the
    rows and the report's opening section (markdown lines). `partial`: a --quick run (claims
    whose tables it did not measure are not attempted)."""
    cf = load(path or claims_path(paper))
    rows = judge(cf, tables, measures, partial=partial)
    out = Path(out)
    tables.write_csv(out / "tables.csv")
    write_claims_csv(rows, out / "claims.csv")
    shown = f"python/iosched/catalogues/{paper}/claims.toml"
    return rows, report_section(rows, shown)


__all__ = ["Claim", "ClaimsError", "ClaimsFile", "LedgerError", "Row", "Tables", "claims_path", "judge",
           "count_verdicts", "load", "report_section", "write", "write_claims_csv"]
