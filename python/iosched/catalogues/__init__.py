"""The paper catalogues: one directory per paper with its scenario files and the paper's numbers
(package data, so `iosched reproduce` works from any directory; in a checkout,
experiments/seltzer1990 and experiments/iyer2001 link here)."""

from pathlib import Path


def catalogue_dir(paper: str) -> Path:
    """The installed catalogue directory of `paper` (e.g. "seltzer1990")."""
    return Path(__file__).resolve().parent / paper
