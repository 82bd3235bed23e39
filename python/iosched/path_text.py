"""Paths as text the way pathlib writes them, without importing pathlib: on `iosched run FILE
--json` pathlib (with re, fnmatch and urllib.parse) took longer to import than the rest of the
command's Python. Where the rules are pathlib's own (Windows' drives and separators, a name
with leading or trailing dots), pathlib is asked."""

import os


def normalized(path: str) -> str:
    """str(pathlib.Path(path)): empty and "." components and a trailing slash dropped, ".." kept,
    and a leading "//" kept (POSIX leaves its meaning to the system; three or more are one)."""
    if os.name == "nt":
        from pathlib import Path

        return str(Path(path))
    body = path.lstrip("/")
    slashes = len(path) - len(body)
    root = "//" if slashes == 2 else "/" if slashes else ""
    return root + "/".join(part for part in body.split("/") if part and part != ".") or "."


def stem(path: str) -> str:
    """pathlib.PurePath(path).stem: the last component without its suffix."""
    name = normalized(path).rpartition("/")[2]
    if os.name == "nt" or name.startswith(".") or name.endswith("."):
        # "." itself, hidden files, "a." (Python 3.14 counts a lone trailing dot as a suffix).
        from pathlib import PurePath

        return PurePath(path).stem
    return name.rpartition(".")[0] or name
