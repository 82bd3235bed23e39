"""A paper's claims file (catalogues/PAPER/claims.toml): one row per quantitative claim.

```toml
paper = "seelam2005"
title = "Seelam et al. 2005: ..."

[[claim]]
id = "t1-deadline-time"                  # unique in the file
location = "5.4, Table 1"                # section, table, figure
statement = "deadline: the reader's (cat 200 MB) execution time"
kind = "cell"                            # rule.KINDS
unit = "s"
paper = 129                              # a number, [lo, hi], "OP N" (tests), a table (rankings)
ours = { f = "value", x = "table1/deadline/reader_time_s" }   # a named measure and its arguments
note = "..."                             # the mechanism, when ours is off (may quote {t/r/c:.1f})
```

`kind = "close"` also takes `reference = { f = ..., ... }` (what ours should be close to) and
`paper = "close"`; a claim with no measurement has `not_attempted = "the reason"` instead of
`ours`. Everything is checked on load, with the file and the claim's id in every message.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Union

from . import rule

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


class ClaimsError(ValueError):
    """A claims file that cannot be read or is malformed (names the file and the claim)."""


@dataclass(frozen=True)
class Claim:
    id: str
    location: str
    statement: str
    kind: str
    unit: str
    paper: Union[float, list, str, Dict[str, float]]
    ours: Optional[dict] = None  # {"f": measure name, **arguments}
    reference: Optional[dict] = None  # kind "close"
    not_attempted: str = ""
    note: str = ""
    table: str = ""  # the paper's table this claim is a cell of ("Table 4"), for completeness counts

    @property
    def test(self):
        """(op, value) of a direction, threshold or qualitative claim."""
        return rule.parse_test(self.paper)


@dataclass
class ClaimsFile:
    path: Path
    paper: str
    title: str
    claims: List[Claim] = field(default_factory=list)


ALLOWED = {"id", "location", "statement", "kind", "unit", "paper", "ours", "reference",
           "not_attempted", "note", "table"}
REQUIRED = ("id", "location", "statement", "kind", "unit", "paper")


def _is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _check_paper(where: str, kind: str, paper) -> None:
    if kind in rule.NUMERIC_KINDS:
        ok = _is_number(paper) or (isinstance(paper, list) and len(paper) == 2 and all(map(_is_number, paper)))
        if not ok:
            raise ClaimsError(f"{where}: paper: a {kind} needs a number or [lo, hi], got {paper!r}")
    elif kind in rule.TEST_KINDS:
        try:
            rule.parse_test(paper)
        except ValueError as e:
            raise ClaimsError(f"{where}: paper: {e}") from None
    elif kind == "ranking":
        if not isinstance(paper, dict) or len(paper) < 2 or not all(map(_is_number, paper.values())):
            raise ClaimsError(f"{where}: paper: a ranking needs a table of at least two items -> numbers, got {paper!r}")
    elif kind == "close":
        if paper != "close":
            raise ClaimsError(f"{where}: paper: a close claim has paper = \"close\" (the rule defines it), got {paper!r}")


def _check_measure(where: str, name: str, spec) -> None:
    if not isinstance(spec, dict) or not isinstance(spec.get("f"), str):
        raise ClaimsError(f"{where}: {name}: expected an inline table with f = \"measure name\", got {spec!r}")


def load(path: Union[str, Path]) -> ClaimsFile:
    """Read and check a claims file."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ClaimsError(f"{path}: no such file") from None
    except tomllib.TOMLDecodeError as e:
        raise ClaimsError(f"{path}: {e}") from None
    for key in ("paper", "title"):
        if not isinstance(data.get(key), str):
            raise ClaimsError(f"{path}: `{key}` (a string) is missing")
    extra = set(data) - {"paper", "title", "claim"}
    if extra:
        raise ClaimsError(f"{path}: unknown top-level key(s): {', '.join(sorted(extra))}")
    out = ClaimsFile(path, data["paper"], data["title"])
    seen = set()
    for i, row in enumerate(data.get("claim", []), 1):
        where = f"{path}: claim {row.get('id', f'#{i}')!s}"
        unknown = set(row) - ALLOWED
        if unknown:
            raise ClaimsError(f"{where}: unknown field(s): {', '.join(sorted(unknown))}")
        for key in REQUIRED:
            if key not in row:
                raise ClaimsError(f"{where}: `{key}` is missing")
        for key in ("id", "location", "statement", "kind", "unit", "note", "not_attempted", "table"):
            if key in row and not isinstance(row[key], str):
                raise ClaimsError(f"{where}: `{key}` must be a string, got {row[key]!r}")
        if row["id"] in seen:
            raise ClaimsError(f"{where}: id used twice")
        if not row["id"] or "," in row["id"]:
            raise ClaimsError(f"{where}: id must be non-empty and without commas")
        seen.add(row["id"])
        if row["kind"] not in rule.KINDS:
            raise ClaimsError(f"{where}: kind {row['kind']!r}: expected one of {', '.join(rule.KINDS)}")
        _check_paper(where, row["kind"], row["paper"])
        has_ours = "ours" in row
        if has_ours == bool(row.get("not_attempted")):
            raise ClaimsError(f"{where}: give exactly one of `ours` (a measure) and `not_attempted` (the reason)")
        if has_ours:
            _check_measure(where, "ours", row["ours"])
        if row["kind"] == "close" and has_ours:
            if "reference" not in row:
                raise ClaimsError(f"{where}: a close claim names its `reference` (a measure)")
            _check_measure(where, "reference", row["reference"])
        elif "reference" in row:
            raise ClaimsError(f"{where}: only a close claim has a `reference`")
        out.claims.append(Claim(**row))
    if not out.claims:
        raise ClaimsError(f"{path}: no [[claim]] rows")
    return out
