"""A user's mistake found by a command (a bad scenario, an unwritable output path): printed as
one line `error: ...` on stderr, exit status 2. Kept free of the command-line libraries so that
the lean entry (entry.py) can report it without importing them."""

from __future__ import annotations

import sys

USAGE_ERROR_STATUS = 2


class CommandError(Exception):
    """The message says what was wrong and where (file, field, value)."""


def one_line(message: object) -> str:
    """The message's non-empty lines joined by "; " (an error is one line on stderr)."""
    return "; ".join(part.strip() for part in str(message).splitlines() if part.strip())


def report(message: object) -> int:
    """Prints `error: message` on stderr; returns the exit status to end with."""
    sys.stderr.write(f"error: {one_line(message)}\n")
    sys.stderr.flush()
    return USAGE_ERROR_STATUS
