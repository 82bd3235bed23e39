"""A reproduction's tables: what its runs measured, by table, row and column.

Every number a claim is judged on comes from here through a reference `"table/row/column"`.
A reproduction builds its tables from its runs' summaries and writes them beside its report as
tables.csv (one line per value), so each claim's `ours` can be recomputed from that file alone.
A value is a float, or a bound (`rule.AtLeast`, `rule.AtMost`) when the run ended before the
measured program finished; tables.csv writes bounds as `>=X` and `<=X`.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Dict, Iterable, Union

from .rule import AtLeast, AtMost, Measured


class TableError(KeyError):
    """A reference to a table, row or column that the run did not produce."""

    def __str__(self) -> str:  # KeyError quotes its message; this one reads as a sentence
        return str(self.args[0])


def _key(x) -> str:
    if isinstance(x, float) and x.is_integer():
        x = int(x)
    s = str(x)
    if "/" in s or not s:
        raise ValueError(f"table key {s!r}: must be non-empty and without '/'")
    return s


class Tables:
    """name -> row -> column -> value."""

    def __init__(self) -> None:
        self._t: Dict[str, Dict[str, Dict[str, Measured]]] = {}

    def add(self, name: str, rows) -> "Tables":
        """Add a table from {row: {column: value}} or a pandas DataFrame (index = rows)."""
        if hasattr(rows, "to_dict") and hasattr(rows, "index"):
            rows = rows.to_dict(orient="index")
        t = self._t.setdefault(_key(name), {})
        for r, cols in rows.items():
            dest = t.setdefault(_key(r), {})
            for c, v in cols.items():
                dest[_key(c)] = _value(v)
        return self

    def set(self, name: str, row, column, value) -> None:
        self._t.setdefault(_key(name), {}).setdefault(_key(row), {})[_key(column)] = _value(value)

    def ref(self, ref: str):
        """The value at "table/row/column"; "table/*/column" gives {row: value} over the rows
        that have the column, "table/row/*" gives the row as {column: value}."""
        parts = ref.split("/")
        if len(parts) != 3:
            raise TableError(f"reference {ref!r}: expected table/row/column")
        name, row, col = parts
        if name not in self._t:
            raise TableError(f"reference {ref!r}: no table {name!r} (tables: {', '.join(sorted(self._t))})")
        t = self._t[name]
        if row == "*":
            column = {r: cols[col] for r, cols in t.items() if col in cols}
            if not column:
                raise TableError(f"reference {ref!r}: no row of {name!r} has column {col!r}")
            return column
        if row not in t:
            raise TableError(f"reference {ref!r}: table {name!r} has no row {row!r} (rows: {', '.join(sorted(t))})")
        if col == "*":
            return dict(t[row])
        if col not in t[row]:
            raise TableError(f"reference {ref!r}: row {row!r} of {name!r} has no column {col!r} "
                             f"(columns: {', '.join(sorted(t[row]))})")
        return t[row][col]

    def __contains__(self, ref: str) -> bool:
        try:
            self.ref(ref)
            return True
        except TableError:
            return False

    def items(self) -> Iterable:
        for name in sorted(self._t):
            for row in self._t[name]:
                for col, v in self._t[name][row].items():
                    yield name, row, col, v

    def write_csv(self, path: Union[str, Path]) -> Path:
        path = Path(path)
        with path.open("w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(["table", "row", "column", "value"])
            for name, row, col, v in self.items():
                w.writerow([name, row, col, format_value(v)])
        return path

    @staticmethod
    def read_csv(path: Union[str, Path]) -> "Tables":
        t = Tables()
        with Path(path).open(newline="", encoding="utf-8") as f:
            for i, rec in enumerate(csv.DictReader(f), 2):
                try:
                    t.set(rec["table"], rec["row"], rec["column"], parse_value(rec["value"]))
                except (KeyError, ValueError) as e:
                    raise ValueError(f"{path}:{i}: {e}") from None
        return t


def _value(v) -> Measured:
    if isinstance(v, (AtLeast, AtMost)):
        return v
    if v is None:
        return math.nan
    return float(v)


def format_value(v: Measured) -> str:
    if isinstance(v, AtLeast):
        return f">={v.value!r}"
    if isinstance(v, AtMost):
        return f"<={v.value!r}"
    return repr(float(v))


def parse_value(s: str) -> Measured:
    if s.startswith(">="):
        return AtLeast(float(s[2:]))
    if s.startswith("<="):
        return AtMost(float(s[2:]))
    return float(s)
