"""Box-drawn tables as text, without importing rich (about 60 ms of imports, more than a
1,000-request run takes).

The drawing is rich's `Table` as the command line used it (box HEAVY_HEAD, one space of padding
each side of a cell, the title centred over the table, headers aligned to their bottom line,
fixed column widths, overflow folded), so output piped to a file is the same text as before;
tests/test_text_table.py compares the two on random tables. Every character is taken as one
column wide (rich measures East Asian wide characters as two; the tables hold numbers, names
and paths).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (nor `re`) at start-up
if TYPE_CHECKING:
    from typing import Iterator, List, Optional, Sequence, Tuple

# top, header, header rule, body, row rule, bottom: (left, fill, between columns, right).
_HEAVY_HEAD = ("┏━┳┓", "┃ ┃┃", "┡━╇┩", "│ ││", "├─┼┤", "└─┴┘")
# What rich draws when the output's encoding cannot carry box characters.
_ASCII = ("+--+", "| ||", "|-+|", "| ||", "|-+|", "+--+")


def _words(text: str) -> Iterator[Tuple[int, str]]:
    """Each word with the spaces around it, as (start, text): rich's `\\s*\\S+\\s*` from the
    start of the line (spaces before the first word belong to it; spaces alone are no word)."""
    position, n = 0, len(text)
    while True:
        end = position
        while end < n and text[end].isspace():
            end += 1
        if end == n:
            return
        while end < n and not text[end].isspace():
            end += 1
        while end < n and text[end].isspace():
            end += 1
        yield position, text[position:end]
        position = end


def divide_line(text: str, width: int) -> List[int]:
    """The offsets at which `text` breaks to fit `width` columns: at the start of a word that
    does not fit the rest of the line; a word longer than a line is folded (rich's rule)."""
    breaks: List[int] = []
    used = 0
    for start, word in _words(text):
        length = len(word.rstrip())
        if width - used >= length:
            used += len(word)
        elif length > width:
            pieces = [word[i:i + width] for i in range(0, len(word), width)] or [word]
            for k, piece in enumerate(pieces):
                if start:
                    breaks.append(start)
                if k == len(pieces) - 1:
                    used = len(piece)
                else:
                    start += len(piece)
        elif used and start:
            breaks.append(start)
            used = len(word)
    return breaks


def wrap(text: str, width: int, justify: str = "left") -> List[str]:
    """`text` wrapped at words to lines of exactly `width` columns, justified left, right or
    centre (each source line alone)."""
    out = []
    for source in text.split("\n"):
        if "\t" in source:
            source = source.expandtabs(8)
        breaks = divide_line(source, width)
        for a, b in zip([0] + breaks, breaks + [len(source)]):
            line = source[a:b]
            excess = len(line) - width
            if excess > 0:
                trailing = len(line) - len(line.rstrip())
                line = line[:len(line) - min(trailing, excess)]
            if justify == "left":
                line = line[:width].ljust(width)
            else:
                line = line.rstrip()[:width]
                if justify == "right":
                    line = line.rjust(width)
                else:
                    line = (" " * ((width - len(line)) // 2) + line).ljust(width)
            out.append(line)
    return out


def _reduce_evenly(excess: int, widths: List[int]) -> List[int]:
    """`widths` less `excess` in all, spread evenly (rich's last resort for a table wider than
    the line)."""
    out = []
    remaining, parts = excess, sum(1 for w in widths if w)
    for w in widths:
        if w and parts > 0:
            taken = min(w, round(remaining / parts))
            out.append(w - taken)
            remaining -= taken
            parts -= 1
        else:
            out.append(w)
    return out


def draw(title: str, labels: Sequence[str], right: Sequence[bool], widths: Sequence[int],
         rows: Sequence[Sequence[str]], total: int, show_lines: bool = False, ascii_only: bool = False,
         styles: Optional[dict] = None) -> str:
    """The table as lines of text (no final newline): `labels` head the columns, `right`
    aligns a column right, `widths` are the columns' text widths, `rows` the cells' text (plain,
    no markup), `total` the line's width. `styles` (ANSI codes: "title", "header") styles a
    terminal's text; None draws plain text."""
    box = _ASCII if ascii_only else _HEAVY_HEAD
    padded = [w + 2 for w in widths]
    room = total - (len(padded) + 1)
    if sum(padded) > room:
        padded = _reduce_evenly(sum(padded) - room, padded)
    texts = [max(p - 2, 0) for p in padded]
    table_width = sum(padded) + len(padded) + 1
    styles = styles or {}

    def style(kind: str, text: str) -> str:
        code = styles.get(kind, "")
        return f"{code}{text}\x1b[0m" if code and text.strip() else text

    def rule(kind: int) -> str:
        left, fill, between, end = box[kind]
        return left + between.join(fill * p for p in padded) + end

    def row_lines(cells: Sequence[str], kind: int, header: bool) -> List[str]:
        wrapped = [wrap(cell, w, "right" if r else "left") if w else [""] for cell, w, r in zip(cells, texts, right)]
        height = max((len(c) for c in wrapped), default=1)
        left, _, between, end = box[kind]
        lines = []
        for i in range(height):
            parts = []
            for cell, w in zip(wrapped, texts):
                # A header sits on its last lines, a body cell on its first.
                k = i - (height - len(cell)) if header else i
                text = cell[k] if 0 <= k < len(cell) else " " * w
                parts.append(" " + (style("header", text) if header else text) + " ")
            lines.append(left + between.join(parts) + end)
        return lines

    out = []
    if title:
        out += [style("title", line) for line in wrap(title, table_width, "center")]
    out.append(rule(0))
    out += row_lines(labels, 1, True)
    out.append(rule(2))
    for i, cells in enumerate(rows):
        # The last row takes the bottom's verticals, the others the body's (the same characters).
        out += row_lines(cells, 3, False)
        if show_lines and i < len(rows) - 1:
            out.append(rule(4))
    out.append(rule(5))
    return "\n".join(out)
