"""Box-drawn tables as text, without importing rich (about 60 ms of imports, more than a
1,000-request run takes).

The drawing is rich's `Table` as the command line used it (box HEAVY_HEAD, one space of padding
each side of a cell, the title centred over the table, headers aligned to their bottom line,
fixed column widths, overflow folded), so output piped to a file is the same text as before
(but for the few differences docs/benchmarks.md lists under "Tables without rich");
tests/test_text_table.py compares the two on random tables. Widths are in terminal cells, as
rich measures them (`cell_len`: printable ASCII here, anything else by `rich.cells`), and the
control characters rich's text drops are dropped (`clean`).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (nor `re`) at start-up
if TYPE_CHECKING:
    from typing import Iterator, List, Optional, Sequence, Tuple

# top, header, header rule, body, row rule, bottom: (left, fill, between columns, right).
_HEAVY_HEAD = ("┏━┳┓", "┃ ┃┃", "┡━╇┩", "│ ││", "├─┼┤", "└─┴┘")
# What rich draws when the output's encoding cannot carry box characters.
_ASCII = ("+--+", "| ||", "|-+|", "| ||", "|-+|", "+--+")


# Control characters rich's Text removes (bell, backspace, vertical tab, form feed, carriage
# return): a name holding one would move the cursor inside a table row.
_STRIPPED = {7: None, 8: None, 11: None, 12: None, 13: None}


def clean(text: str) -> str:
    """`text` without the control characters rich removes."""
    return text.translate(_STRIPPED) if not text.isprintable() else text


def _simple(text: str) -> bool:
    """Printable ASCII: one cell per character (the tables' usual text)."""
    return text.isascii() and text.isprintable()


def cell_len(text: str) -> int:
    """The terminal cells `text` takes. Printable ASCII is counted here; other text by rich's
    own measure (`rich.cells`, 15 ms to import, only for such text), so that wide characters,
    emoji sequences, combining and control characters take what rich gave them."""
    if _simple(text):
        return len(text)
    from rich.cells import cell_len as rich_cell_len

    return rich_cell_len(text)


def _chop(text: str, width: int) -> List[str]:
    """`text` cut into pieces of at most `width` cells (rich's `chop_cells`)."""
    if _simple(text):
        return [text[i:i + width] for i in range(0, len(text), width)]
    from rich.cells import chop_cells

    return chop_cells(text, width)


def crop_at(text: str, width: int) -> Tuple[int, int]:
    """Where `text` is cut to fit `width` cells: (characters kept, spaces added for a wide
    character cut in half), as rich's `set_cell_size`; (len(text), 0) when it fits."""
    if cell_len(text) <= width:
        return len(text), 0
    if _simple(text):
        return width, 0
    from rich.cells import set_cell_size

    try:
        cropped = set_cell_size(text, width)
    except ZeroDivisionError:  # rich's own failure on text of zero cells' width (joiners alone)
        cropped = text[:width]
    kept = 0
    while kept < min(len(text), len(cropped)) and text[kept] == cropped[kept]:
        kept += 1
    return kept, len(cropped) - kept


def crop(text: str, width: int) -> str:
    """`text` cut to `width` cells when longer (`crop_at`)."""
    kept, spaces = crop_at(text, width)
    return text[:kept] + " " * spaces


def expand_tabs(parts: List[str], tab: int = 8) -> List[str]:
    """The pieces of one line with its tabs turned into spaces up to the next multiple of `tab`
    cells from the line's start (each tab at least one space), as rich expands them. The column
    is measured on the line so far, not piece by piece: a mark that joins what follows it (a
    variation selector) counts with its neighbour, as in rich."""
    out, line = [], ""
    for part in parts:
        pieces = part.split("\t")
        for k, piece in enumerate(pieces):
            line += piece
            if k < len(pieces) - 1:
                spaces = 1 + (-(cell_len(line) + 1)) % tab
                pieces[k] = piece + " " * spaces
                line += " " * spaces
        out.append("".join(pieces))
    return out


def pad(text: str, width: int, justify: str = "left") -> str:
    """`text` (at most `width` cells) padded with spaces to `width` cells."""
    room = width - cell_len(text)
    if justify == "right":
        return " " * room + text
    if justify == "center":
        return " " * (room // 2) + text + " " * (room - room // 2)
    return text + " " * room


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
        length = cell_len(word.rstrip())
        if width - used >= length:
            used += cell_len(word)
        elif length > width:
            pieces = _chop(word, width) or [word]
            for k, piece in enumerate(pieces):
                if start:
                    breaks.append(start)
                if k == len(pieces) - 1:
                    used = cell_len(piece)
                else:
                    start += len(piece)
        elif used and start:
            breaks.append(start)
            used = cell_len(word)
    return breaks


def rstrip_end(line: str, width: int) -> str:
    """`line` without the trailing spaces that take it past `width` (counted in characters, as
    rich's `rstrip_end` counts)."""
    excess = len(line) - width
    if excess > 0:
        trailing = len(line) - len(line.rstrip())
        line = line[:len(line) - min(trailing, excess)]
    return line


def wrap(text: str, width: int, justify: str = "left") -> List[str]:
    """`text` wrapped at words to lines of exactly `width` columns, justified left, right or
    centre (each source line alone)."""
    out = []
    for source in text.split("\n"):
        if "\t" in source:
            source = expand_tabs([source])[0]
        breaks = divide_line(source, width)
        for a, b in zip([0] + breaks, breaks + [len(source)]):
            line = rstrip_end(source[a:b], width)
            out.append(pad(crop(line if justify == "left" else line.rstrip(), width), width, justify))
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
    # The control characters rich drops, dropped here too (a carriage return in a name would
    # overwrite its row).
    has_title = bool(title)  # rich draws a title line even if nothing of it is left to show
    title, labels, rows = clean(title), [clean(x) for x in labels], [[clean(x) for x in r] for r in rows]
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
            for cell, w, p in zip(wrapped, texts, padded):
                if p < 2:  # narrower than its padding (a line of a few columns): blank
                    parts.append(" " * p)
                    continue
                # A header sits on its last lines, a body cell on its first.
                k = i - (height - len(cell)) if header else i
                text = cell[k] if 0 <= k < len(cell) else " " * w
                parts.append(" " + (style("header", text) if header else text) + " ")
            lines.append(left + between.join(parts) + end)
        return lines

    out = []
    if has_title:
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
