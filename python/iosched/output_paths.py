"""Checks on where a command will write, made before any work so that nothing computed is lost
at the end (missing directory, a directory in place of a file, no permission)."""

from __future__ import annotations

import os
from pathlib import Path

from .command_error import CommandError


def check_output_file(path: Path, what: str) -> None:
    """Raises CommandError if `path` cannot be written."""
    if path.is_dir():
        raise CommandError(f"{what} {path}: is a directory")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise CommandError(f"{what} {path}: directory {parent} does not exist")
    if (path.exists() and not os.access(path, os.W_OK)) or not os.access(parent, os.W_OK | os.X_OK):
        raise CommandError(f"{what} {path}: not writable")


def check_output_dir(path: Path, what: str) -> None:
    """Creates `path` (and parents) and checks it can be written into; raises CommandError."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise CommandError(f"{what} {path}: cannot create: {e.strerror or e}")
    if not os.access(path, os.W_OK | os.X_OK):
        raise CommandError(f"{what} {path}: not writable")
