"""The tables the CLI prints, in three formats (`--format table|csv|json`).

table: a terminal table fitted to the width (the terminal's, else $COLUMNS, else 80 columns):
when the columns do not fit, the least important are dropped (each column has a priority) and
named in a line under the table; text columns marked `wrap` wrap over lines at spaces, headers
wrap at spaces, and a value is never cut to an ellipsis.
csv: every key of every row in the rows' order (also what a terminal table leaves out), raw
values (no thousands separators, full precision); one table is plain CSV, several are blocks each after a
`# NAME` line and separated by a blank line.
json: one object {NAME: [row, ...]} (commands that have their own JSON document print that).

Keys (the CSV header, the JSON keys) are the names the DataFrames and the summaries use, with
units in the names (`throughput_mb_s`, `response_ms_p99`); labels are what a person reads.
"""

from __future__ import annotations

import os

from .text_table import cell_len

# This module is on `iosched run`'s path: plain classes, and csv, json, shutil and typing
# imported where used (dataclasses brings inspect; together a fifth of a short run's time).
TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at start-up
if TYPE_CHECKING:
    from typing import Any, Callable, List, Optional, Sequence, Union

    Item = Union["TableData", str]

FORMATS = ("table", "csv", "json")

# Width used when stdout is not a terminal and $COLUMNS is not set: what terminals default to.
DEFAULT_WIDTH = 80

# The least width of a column whose text wraps (unless its text is narrower), and the width
# beyond which a single word in it is folded over lines rather than widening it.
WRAP_MIN = 20
WRAP_FOLD = 30


class Column:
    """One column: `key` in CSV and JSON, `label` on a terminal.

    priority: 0 is always shown; a larger number is dropped earlier when the table is too wide.
    fmt: the terminal text of a value (None is shown as "-"). wrap: long text that may wrap at
    spaces (a description, a list); other values keep one line (a name, a number). right: align
    right (numbers)."""

    __slots__ = ("key", "label", "priority", "fmt", "wrap", "right")

    def __init__(self, key: str, label: str, priority: int = 0, fmt: Callable[[Any], str] = str, wrap: bool = False,
                 right: bool = False):
        self.key, self.label, self.priority, self.fmt, self.wrap, self.right = key, label, priority, fmt, wrap, right

    def __repr__(self) -> str:
        return (f"Column(key={self.key!r}, label={self.label!r}, priority={self.priority}, fmt={self.fmt!r}, "
                f"wrap={self.wrap}, right={self.right})")


class TableData:
    """A table: `name` names it in CSV and JSON, `title` heads it on a terminal. `rows` hold raw
    values by key; keys no column shows are written to CSV and JSON only. `show_lines`: a rule
    between rows (for tables whose rows span lines)."""

    def __init__(self, name: str, title: str, columns: List[Column], rows: Optional[List[dict]] = None,
                 show_lines: bool = False):
        self.name, self.title, self.columns = name, title, columns
        self.rows = [] if rows is None else rows
        self.show_lines = show_lines

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(name={self.name!r}, title={self.title!r}, columns={self.columns!r}, "
                f"rows={self.rows!r}, show_lines={self.show_lines})")

    def for_terminal(self) -> "TableData":
        """What a terminal shows (a subclass may show less than CSV and JSON carry)."""
        return self

    def for_data(self) -> "TableData":
        """What CSV and JSON carry."""
        return self

    def cell(self, column: Column, row: dict) -> str:
        value = row.get(column.key)
        return "-" if value is None else column.fmt(value)




def output_format(fmt: str, as_json: bool = False) -> str:
    """The output format from `--format` and the older `--json` flag (its alias); ValueError
    for an unknown format or a contradiction."""
    if fmt not in FORMATS:
        raise ValueError(f"--format: unknown output format `{fmt}` (known: {', '.join(FORMATS)})")
    if as_json and fmt not in ("table", "json"):
        raise ValueError(f"--json and --format {fmt} contradict each other (--json is --format json)")
    return "json" if as_json else fmt


def width(stream=None) -> int:
    """Columns to fit: $COLUMNS when set (piped or not, as `ls` and rich do), else the terminal's
    width, else DEFAULT_WIDTH."""
    import sys

    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    stream = stream or sys.stdout
    try:
        if stream.isatty():
            import shutil

            return shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns
    except (AttributeError, ValueError, OSError):
        pass
    return DEFAULT_WIDTH


def _is_terminal() -> bool:
    import sys

    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


# rich's default box with padding (0, 1): a border before each column and after the last, and
# a space each side of every cell.
def _frame(n_columns: int) -> int:
    return 3 * n_columns + 1


def _lines(text: str) -> List[str]:
    return text.split("\n") or [""]


def _longest_word(text: str) -> int:
    return max((cell_len(w) for line in _lines(text) for w in line.split(" ")), default=0)


def _longest_line(text: str) -> int:
    return max((cell_len(line) for line in _lines(text)), default=0)


def _wrapped_lines(text: str, w: int) -> int:
    lines, used = 1, 0
    for word in text.split(" "):
        n = cell_len(word)
        if used and used + 1 + n > w:
            lines, used = lines + 1, n
        else:
            used += (1 if used else 0) + n
    return lines


def _label_width(label: str) -> int:
    """The least width at which a label takes at most two lines (three read badly)."""
    w = max(_longest_word(label), 1)
    while _wrapped_lines(label, w) > 2:
        w += 1
    return w


class PlainLine(str):
    """A line between tables printed as written: no markup is read in it (a path, which may
    hold brackets or end in a backslash)."""


class Fit:
    """What a terminal table shows: the columns kept (in order), their widths, the labels of
    the columns dropped."""

    __slots__ = ("columns", "widths", "dropped")

    def __init__(self, columns: List[Column], widths: List[int], dropped: List[str]):
        self.columns, self.widths, self.dropped = columns, widths, dropped


def fit(table: TableData, total: int) -> Fit:
    """Chooses the columns and widths of `table` for `total` columns of text.

    A column's least width is its longest value (its longest word for a wrap column) and its
    label's longest word; its natural width fits its longest value and label on one line.
    Columns are dropped, highest priority number first (the rightmost of equals), until the
    least widths fit; the room left goes first to labels and values kept on one line (by
    priority), then to the wrap columns, the most important first."""
    cells = {id(c): [table.cell(c, r) for r in table.rows] for c in table.columns}

    def natural(c: Column) -> int:
        return max([_longest_line(v) for v in cells[id(c)]] + [_longest_line(c.label), 1])

    def least(c: Column) -> int:
        values = cells[id(c)]
        if c.wrap:
            # Not narrower than WRAP_MIN (when it needs that much): a few words a line reads;
            # one a line does not, and the column is better dropped.
            # A longer word (a list without spaces) is broken over lines (fold), not cut.
            body = max(min(max((_longest_word(v) for v in values), default=0), WRAP_FOLD), min(natural(c), WRAP_MIN))
        else:
            body = max((_longest_line(v) for v in values), default=0)
        return max(body, _label_width(c.label), 1)

    kept = list(table.columns)
    dropped = []
    while sum(least(c) for c in kept) + _frame(len(kept)) > total and len(kept) > 1:
        # Priority 0 goes too when nothing else is left, from the right, never the first column
        # (what names the row).
        droppable = [c for c in kept if c.priority > 0] or kept[1:]
        worst = max(droppable, key=lambda c: (c.priority, kept.index(c)))
        kept.remove(worst)
        dropped.append(worst)
    widths = {id(c): least(c) for c in kept}
    room = total - sum(widths.values()) - _frame(len(kept))
    for c in sorted((c for c in kept if not c.wrap), key=lambda c: c.priority):
        add = min(max(room, 0), natural(c) - widths[id(c)])
        widths[id(c)] += add
        room -= add
    for c in sorted((c for c in kept if c.wrap), key=lambda c: c.priority):
        add = min(max(room, 0), natural(c) - widths[id(c)])
        widths[id(c)] += add
        room -= add
    dropped.sort(key=table.columns.index)
    return Fit(kept, [widths[id(c)] for c in kept], [c.label for c in dropped])


def terminal_table(table: TableData, total: int, styles: bool = False, ascii_only: bool = False):
    """(`table` drawn as text fitted to `total` columns, the labels of the columns dropped).
    A word longer than its column (only when even one column does not fit the width) is
    broken over lines (fold), never cut."""
    from .markup import sgr
    from .text_table import draw

    f = fit(table, total)
    rows = [[table.cell(c, r) for c in f.columns] for r in table.rows]
    codes = {"title": sgr(["italic"]), "header": sgr(["bold"])} if styles else None
    text = draw(table.title, [c.label for c in f.columns], [c.right for c in f.columns], f.widths, rows, total,
                show_lines=table.show_lines, ascii_only=ascii_only, styles=codes)
    return text, f.dropped


def dropped_note(dropped: Sequence[str], total: int) -> str:
    return f"columns not shown ({total} wide): {', '.join(dropped)}; --format csv has every column"


def csv_text(tables: Sequence[TableData]) -> str:
    """The tables as CSV: every key of every row, in the order rows first have them (the
    DataFrames' order); one table alone is plain CSV, several are `# NAME` blocks."""
    import csv
    import io

    out = io.StringIO()
    for i, t in enumerate(tables):
        if len(tables) > 1:
            if i:
                out.write("\n")
            out.write(f"# {t.name}\n")
        keys = list(dict.fromkeys([k for r in t.rows for k in r] + [c.key for c in t.columns]))
        w = csv.writer(out, lineterminator="\n")
        w.writerow(keys)
        for r in t.rows:
            w.writerow([_csv_value(r.get(k)) for k in keys])
    return out.getvalue()


def _csv_value(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return "; ".join(_csv_value(x) for x in v)
    if isinstance(v, dict):
        import json

        return json.dumps(v)
    return str(v)


def json_text(tables: Sequence[TableData]) -> str:
    import json

    return json.dumps({t.name: t.rows for t in tables})


def emit(items: Sequence[Item], fmt: str, json_doc: Any = None) -> None:
    """Prints `items` (tables, and lines of markup between them: markup.py) in `fmt`.

    table: each item in turn on stdout, every table fitted to `width()`. csv: the tables only,
    and the lines to stderr (they are not CSV). json: `json_doc` when the command has its own
    JSON document, else the tables as one object."""
    import sys

    from .markup import line_text, use_styles

    tables = [x.for_data() for x in items if isinstance(x, TableData)]
    if fmt == "json":
        import json

        sys.stdout.write((json.dumps(json_doc) if json_doc is not None else json_text(tables)) + "\n")
        sys.stdout.flush()
        return
    if fmt == "csv":
        err_styles = use_styles(sys.stderr)
        for x in items:
            if isinstance(x, str):
                sys.stderr.write(line_text(x, None, err_styles, markup_read=not isinstance(x, PlainLine)) + "\n")
        sys.stderr.flush()
        sys.stdout.write(csv_text(tables))
        sys.stdout.flush()
        return
    total = width()
    styles = use_styles(sys.stdout)
    encoding = (getattr(sys.stdout, "encoding", None) or "utf-8").lower()
    # Each item is written as it is drawn: what came before an item that fails is out.
    for x in items:
        if isinstance(x, str):
            # Lines of text are wrapped at words on a terminal; piped, they are not broken (a
            # path stays whole for grep). Tables fit the width either way.
            sys.stdout.write(line_text(x, total if _is_terminal() else None, styles, markup_read=not isinstance(x, PlainLine)) + "\n")
            continue
        text, dropped = terminal_table(x.for_terminal(), total, styles=styles, ascii_only=not encoding.startswith("utf"))
        sys.stdout.write(text + "\n")
        if dropped:
            sys.stdout.write(line_text(dropped_note(dropped, total), total if _is_terminal() else None, False, markup_read=False) + "\n")
    sys.stdout.flush()
