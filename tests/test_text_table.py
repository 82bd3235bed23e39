"""The tables and lines the command line prints, drawn without rich (text_table.py, markup.py),
against what rich drew before: the same text, piped, on random tables, widths and markup."""

import io
import random

from rich.console import Console
from rich.markup import escape as rich_escape
from rich.text import Text

from iosched.markup import escape, line_text, segments
from iosched.tables import Column, TableData, fit, terminal_table
from iosched.text_table import divide_line, wrap

WORDS = ["a", "io", "MB/s", "resp", "mean", "ms", "p99", "anticipatory", "scheduler", "read_lat_nsec",
         "/work/shared/traces/some/long/path/file.blktrace.0", "1,734", "11.34", "-", "x" * 41, "[bold]", "a\\b",
         # Cells, not characters: wide (two cells), a combining mark (none), a long wide word,
         # emoji sequences (a variation selector, a skin tone). Not a zero-width joiner: rich
         # lets it take the next character's width, even a space's, and misaligns the border.
         "读者", "한국어", "µs", "cafe\u0301", "—", "数据" * 9, "\u2714\ufe0f", "\U0001f44d\U0001f3fd",
         # Control characters rich drops (carriage return, bell) or counts as no cell (escape).
         "a\rb", "x\x07", "e\x1b", "t\tab"]


def _text(rng: random.Random, most_words: int) -> str:
    text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, most_words)))
    if rng.random() < 0.1:
        text += "\n" + " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 3)))
    if rng.random() < 0.1:
        text = "  " + text + "   "
    return text


def _table(rng: random.Random) -> TableData:
    columns = [Column(f"k{i}", _text(rng, 3), priority=rng.randint(0, 3) if i else 0, wrap=rng.random() < 0.3,
                      right=rng.random() < 0.4) for i in range(rng.randint(1, 7))]
    rows = [{c.key: (_text(rng, 6 if c.wrap else 1) if rng.random() < 0.9 else None) for c in columns}
            for _ in range(rng.randint(0, 5))]
    return TableData("t", _text(rng, 4), columns, rows, show_lines=rng.random() < 0.3)


def plain(markup: str) -> str:
    """The text `markup` shows, without its styles."""
    return "".join(t for t, _ in segments(markup))


def rich_table(table: TableData, total: int):
    """(a rich Table of `table` fitted to `total` columns, the labels of the columns dropped):
    what the command line drew before text_table.py."""
    from rich.markup import escape as rich_escape
    from rich.table import Table

    f = fit(table, total)
    t = Table(title=rich_escape(table.title), show_lines=table.show_lines)
    for c, w in zip(f.columns, f.widths):
        t.add_column(rich_escape(c.label), width=w, justify="right" if c.right else "left", overflow="fold")
    for r in table.rows:
        t.add_row(*[rich_escape(table.cell(c, r)) for c in f.columns])
    return t, f.dropped


def _rich_text(table: TableData, total: int) -> "tuple[str, list]":
    out = io.StringIO()
    t, dropped = rich_table(table, total)
    Console(file=out, width=total, color_system=None, emoji=False).print(t, soft_wrap=False)
    return out.getvalue(), dropped


def test_tables_are_drawn_as_rich_drew_them():
    rng = random.Random(27)
    for case in range(1500):
        table = _table(rng)
        total = rng.choice([20, 30, 40, 60, 80, 100, 132, 200])
        ours, dropped = terminal_table(table, total)
        theirs, rich_dropped = _rich_text(table, total)
        assert (ours + "\n", dropped) == (theirs, rich_dropped), (case, total, table)


def test_a_table_wider_than_the_line_is_narrowed_as_rich_narrowed_it():
    # One column whose least width exceeds the line: rich reduced it and folded its words.
    table = TableData("t", "title", [Column("k", "name")], [{"k": "y" * 50}, {"k": "a b"}])
    for total in (10, 20, 31):
        ours, _ = terminal_table(table, total)
        assert ours + "\n" == _rich_text(table, total)[0]


def test_markup_lines_read_as_rich_read_them():
    rng = random.Random(28)
    pieces = ["[bold]", "[/bold]", "name", " ", "\\[x]", "\\\\", "[red]", "[/red]", "a [b", "c]", ":", "[/]", "\t", "[BOLD]",
              "[/Bold]", "读"]
    for case in range(3000):
        markup = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        raw = "".join(rng.choice(WORDS + [" ", "[", "]", "\\", "\t"]) for _ in range(rng.randint(0, 8)))
        for text in (markup, f"[bold]{escape(raw)}[/bold] ({escape(raw)})"):
            for total in (None, 7, 25, 80):
                out = io.StringIO()
                console = Console(file=out, width=total or 80, color_system=None, emoji=False, highlight=False,
                                  soft_wrap=total is None)
                try:
                    console.print(text)
                except Exception:  # rich refused it: a closing tag that closes nothing
                    try:
                        line_text(text, total, False)
                    except ValueError:
                        continue
                    raise AssertionError((case, text))
                assert line_text(text, total, False) + "\n" == out.getvalue(), (case, text, total)


def test_escape_is_riches_and_round_trips():
    rng = random.Random(29)
    for _ in range(2000):
        raw = "".join(rng.choice(["[", "]", "\\", "a", "bold", "/", "@", "#", " ", "="]) for _ in range(rng.randint(0, 10)))
        assert escape(raw) == rich_escape(raw)
        # Escaped text reads as rich reads it: as written, but for rich's backslash quirks (a
        # trailing backslash is doubled so as not to escape a tag after it).
        for markup in (escape(raw), f"[bold]{escape(raw)}[/bold]"):
            assert plain(markup) == Text.from_markup(markup, emoji=False).plain, markup
        if "\\" not in raw:
            assert plain(escape(raw)) == raw


def test_a_cell_ending_in_a_backslash_is_shown_as_written():
    # rich drew the cell through escape(), which doubles a trailing backslash: "a \\" showed
    # two backslashes. Cells are plain text here.
    table = TableData("t", "", [Column("k", "path")], [{"k": "C:\\"}])
    assert "│ C:\\  │" in terminal_table(table, 20)[0]


def test_styles_on_a_terminal():
    assert line_text("[bold]x[/bold] y", None, True) == "\x1b[1mx\x1b[0m y"
    assert segments("[bold]a [red]b[/red][/bold]") == [("a ", ("bold",)), ("b", ("bold", "red"))]
    table = TableData("t", "title", [Column("k", "name")], [{"k": "v"}])
    text, _ = terminal_table(table, 40, styles=True)
    assert "\x1b[3m" in text.splitlines()[0] and "\x1b[1mname" in text
    # Plain when not styled: the same text without codes.
    assert "\x1b" not in terminal_table(table, 40)[0]


def test_wrapping_by_hand():
    assert divide_line("aaaa bbbb cccc", 10) == [10]
    assert wrap("aaaa bbbb cccc", 10) == ["aaaa bbbb ", "cccc      "]
    assert wrap("util busy", 7, "right") == ["   util", "   busy"]
    assert wrap("abcdefghij", 4) == ["abcd", "efgh", "ij  "]
    assert wrap("ab", 6, "center") == ["  ab  "]
