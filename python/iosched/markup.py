"""Console markup as the command line writes it, drawn without importing rich.

The syntax is rich's (`[bold]name[/bold]`, `escape()` turning a bracket that would read as a
tag into `\\[`), so text escaped here or by `rich.markup.escape` reads the same either way;
importing rich's console and table code costs about 60 ms, more than a 1,000-request run.
Styles are drawn as ANSI codes on a terminal only; piped, a line is its plain text. Unlike
rich, `:name:` emoji codes are left as written. Unknown style names are dropped, as rich drops
them; a closing tag that closes nothing is an error (a defect in the caller), as in rich.
"""

from __future__ import annotations

import os

from .text_table import clean

# Neither `re` nor `typing` is imported: with `enum`, which `re` brings, they were a quarter of
# a short run's time.
TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at start-up
if TYPE_CHECKING:
    from typing import Iterator, List, Optional, Sequence, Tuple

    Segment = Tuple[str, Tuple[str, ...]]

# What may follow a tag's opening bracket (rich's pattern `(\\*)\[([a-z#/@][^[]*?)]`).
_TAG_START = frozenset("abcdefghijklmnopqrstuvwxyz#/@")

# Styles the command line uses, as SGR parameters; colours are left out under NO_COLOR.
_ATTRIBUTES = {"bold": "1", "b": "1", "dim": "2", "d": "2", "italic": "3", "i": "3", "underline": "4", "u": "4"}
_COLOURS = {"black": "30", "red": "31", "green": "32", "yellow": "33", "blue": "34", "magenta": "35",
            "cyan": "36", "white": "37"}


def _tags(text: str) -> Iterator[Tuple[int, int, int]]:
    """Each tag in `text` as (start, bracket, end): the tag is text[bracket:end], preceded by
    the backslashes text[start:bracket]; rich's pattern `(\\\\*)\\[([a-z#/@][^[]*?)]` found
    left to right."""
    position = 0
    bracket = text.find("[", position)
    while bracket >= 0:
        close = text.find("]", bracket + 2)
        if bracket + 1 < len(text) and text[bracket + 1] in _TAG_START and close >= 0 \
                and text.find("[", bracket + 1, close) < 0:
            start = bracket
            while start > position and text[start - 1] == "\\":
                start -= 1
            yield start, bracket, close + 1
            position = close + 1
        bracket = text.find("[", max(position, bracket + 1))


def escape(text: str) -> str:
    """`text` with every bracket that would read as a tag escaped (rich's `escape`)."""
    parts, position = [], 0
    for start, bracket, end in _tags(text):
        backslashes = text[start:bracket]
        parts += [text[position:start], backslashes, backslashes, "\\", text[bracket:end]]
        position = end
    text = "".join(parts) + text[position:]
    if text.endswith("\\") and not text.endswith("\\\\"):
        return text + "\\"
    return text


def segments(markup: str) -> List[Segment]:
    """`markup` as (text, styles open) pieces, in order."""
    out: List[Segment] = []
    stack: List[str] = []
    position = 0

    def text(piece: str) -> None:
        piece = clean(piece.replace("\\[", "["))
        if piece:
            out.append((piece, tuple(stack)))

    for start, bracket, end in _tags(markup):
        text(markup[position:start])
        backslashes, escaped = divmod(bracket - start, 2)
        if backslashes:
            out.append(("\\" * backslashes, tuple(stack)))
        if escaped:
            out.append((clean(markup[bracket:end]), tuple(stack)))
            position = end
            continue
        name = markup[bracket + 1:end - 1].partition("=")[0]
        if name.startswith("/"):
            closing = " ".join(name[1:].lower().split())
            if not closing:
                if not stack:
                    raise ValueError(f"markup {markup!r}: closing tag '[/]' at position {start} has nothing to close")
                stack.pop()
            elif closing in stack:
                del stack[len(stack) - 1 - stack[::-1].index(closing)]
            else:
                raise ValueError(f"markup {markup!r}: closing tag '[{name}]' at position {start} doesn't match any open tag")
        else:
            stack.append(" ".join(name.lower().split()))
        position = end
    text(markup[position:])
    return out


def sgr(styles: Sequence[str], colours: bool = True) -> str:
    """The ANSI code that sets `styles` (each may name several words: "bold red"), or ""."""
    codes = []
    for style in styles:
        for word in style.split():
            if word in _ATTRIBUTES:
                codes.append(_ATTRIBUTES[word])
            elif colours and word in _COLOURS:
                codes.append(_COLOURS[word])
    return f"\x1b[{';'.join(codes)}m" if codes else ""


def styled(text: str, styles: Sequence[str], colours: bool = True) -> str:
    code = sgr(styles, colours)
    return f"{code}{text}\x1b[0m" if code else text


def use_styles(stream) -> bool:
    """Whether to draw styles on `stream`, as rich decides: TTY_COMPATIBLE=1/0 says whether it
    is a terminal, else FORCE_COLOR (set and not empty: yes; set empty: no), else whether it is
    one; and never on a dumb terminal (TERM=dumb or unknown)."""
    env = os.environ
    tty = env.get("TTY_COMPATIBLE", "")
    if tty in ("0", "1"):
        terminal = tty == "1"
    elif env.get("FORCE_COLOR") is not None:
        terminal = env["FORCE_COLOR"] != ""
    else:
        try:
            terminal = stream.isatty()
        except (AttributeError, ValueError):
            terminal = False
    return terminal and env.get("TERM", "").lower() not in ("dumb", "unknown")


def colours_allowed() -> bool:
    """NO_COLOR (no-color.org) removes colours and keeps bold and italic, as rich does."""
    return not os.environ.get("NO_COLOR")


def line_text(markup: str, width: Optional[int], styles: bool, markup_read: bool = True) -> str:
    """A line of markup as written out: wrapped at words to `width` (None: not wrapped) and
    styled with ANSI codes when `styles`; the text ends without a newline. With `markup_read`
    false the line is plain text (no tags read in it)."""
    from .text_table import crop_at, divide_line, expand_tabs, rstrip_end

    pieces = segments(markup) if markup_read else [(clean(markup), ())]
    text = "".join(t for t, _ in pieces)
    lines: List[List[Segment]] = []
    offset = 0
    # Each source line is wrapped alone; a wrapped line's trailing spaces beyond the width go.
    for source in text.split("\n"):
        source_pieces = _slice(pieces, offset, offset + len(source))
        offset += len(source) + 1
        if "\t" in source:
            expanded = expand_tabs([t for t, _ in source_pieces])
            source_pieces = [(t, s) for t, (_, s) in zip(expanded, source_pieces)]
            source = "".join(expanded)
        if width is None:
            lines.append(source_pieces)
            continue
        breaks = divide_line(source, width)
        for a, b in zip([0] + breaks, breaks + [len(source)]):
            kept, spaces = crop_at(rstrip_end(source[a:b], width), width)
            lines.append(_slice(source_pieces, a, a + kept) + ([(" " * spaces, ())] if spaces else []))
    colours = colours_allowed()
    return "\n".join("".join(styled(t, s, colours) if styles else t for t, s in line) for line in lines)


def _slice(pieces: List[Segment], start: int, end: int) -> List[Segment]:
    """The pieces covering characters [start, end) of their joined text."""
    out: List[Segment] = []
    at = 0
    for t, s in pieces:
        a, b = max(start, at), min(end, at + len(t))
        if a < b:
            out.append((t[a - at:b - at], s))
        at += len(t)
    return out
