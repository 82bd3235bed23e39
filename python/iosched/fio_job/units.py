"""fio's numbers: sizes with k/m/g/t/p suffixes under `kb_base`, times with us/ms/s/m/h/d.

As fio's HOWTO ("Parameter types") and its parser (parse.c: str_to_decimal, __get_mult_bytes,
get_mult_time) read them:

- A size is a whole number (decimal, or hexadecimal with 0x), then an optional suffix, not case
  sensitive, an optional `b`/`B` meaning bytes. With kb_base=1024 (fio's default) `k`, `m`,
  `g`, `t`, `p` (and `kb`, `mb`, ...) are powers of 1024 and `kib`, `mib`, ... powers of 1000
  ("opposite units, for compatibility with old scripts"); with kb_base=1000 the other way round.
- A time is a whole number and an optional unit: `us`/`usec`, `ms`/`msec`, `s`, `m` (minutes),
  `h`, `d`; without one, the option's own unit (seconds for runtime, microseconds for thinktime).

Where fio's documentation and its parser disagree, the value is refused with both readings, so a
job file never means something other than its author thought: `4ki` (the HOWTO: 4096 with
kb_base=1000; the parser matches only `kib`, so `ki` reads as `k`), `10sec` (the HOWTO: seconds;
the parser matches `s` only exactly, so `sec` multiplies by 1: microseconds). A decimal point is
refused too: fio's parser stops at it (`1.5g` is 1 byte to fio).
"""

from __future__ import annotations

import re
from typing import Optional, Tuple

class UnitError(ValueError):
    """A value fio would not read as its author meant; the message says why, and the caller
    names the file, line and option around it."""


_NUMBER = re.compile(r"(0[xX][0-9a-fA-F]+|[0-9]+)(.*)")

# Size suffixes (lower case) -> (power, "kb_base" | "other"): `k` follows kb_base, `kib` the other base.
_SIZE_SUFFIXES = {"": (0, "kb_base"), "b": (0, "kb_base")}
for _pow, _letter in enumerate("kmgtp", start=1):
    _SIZE_SUFFIXES[_letter] = (_pow, "kb_base")
    _SIZE_SUFFIXES[_letter + "b"] = (_pow, "kb_base")
    _SIZE_SUFFIXES[_letter + "ib"] = (_pow, "other")

# Time suffixes (lower case) -> microseconds.
TIME_SUFFIXES_US = {"us": 1, "usec": 1, "ms": 1_000, "msec": 1_000, "s": 1_000_000, "m": 60_000_000,
                    "h": 3_600_000_000, "d": 86_400_000_000}


def _split_number(text: str, what: str) -> Tuple[int, str]:
    t = text.strip()
    if not t:
        raise UnitError(f"no value: give {what}")
    if t.startswith("("):
        raise UnitError("arithmetic expressions are not read: write the value itself")
    if t.startswith("-"):
        raise UnitError(f"a negative value: give {what}")
    m = _NUMBER.fullmatch(t)
    if not m:
        raise UnitError(f"`{t}` is not {what}")
    digits, suffix = m.group(1), m.group(2)
    if suffix.startswith(".") or suffix.startswith(","):
        raise UnitError(f"`{t}`: fio reads whole numbers and stops at the `{suffix[0]}` "
                        f"(it would read {digits} with no unit); write it without a fraction, e.g. in a smaller unit")
    value = int(digits, 16) if digits[:2].lower() == "0x" else int(digits)
    return value, suffix


def parse_size(text: str, kb_base: int = 1024, percent_ok: bool = False) -> Tuple[int, bool]:
    """A size in bytes as fio reads `text` under `kb_base`: (bytes, False), or (percent, True)
    for `N%` where `percent_ok`."""
    value, suffix = _split_number(text, "a size (a whole number with an optional k, m, g, t suffix)")
    s = suffix.strip().lower()
    if s == "%":
        if not percent_ok:
            raise UnitError(f"`{text.strip()}`: a percentage is not read for this option")
        if not 1 <= value <= 100:
            raise UnitError(f"`{text.strip()}`: a percentage must be between 1 and 100")
        return value, True
    if s in ("ki", "mi", "gi", "ti", "pi"):
        prefix = s[0]
        power = "kmgtp".index(prefix) + 1
        doc = (1024 if kb_base == 1000 else 1000) ** power
        parser = kb_base ** power
        raise UnitError(f"`{text.strip()}` is ambiguous: fio's HOWTO reads `{s}` as {doc:,} per unit with "
                        f"kb_base={kb_base}, its parser as `{prefix}`, {parser:,}; write `{prefix}ib` or `{prefix}`")
    if s.endswith("z"):
        raise UnitError(f"`{text.strip()}`: zone counts (z) are for zoned block devices, which iosched does not model")
    if s not in _SIZE_SUFFIXES:
        raise UnitError(f"`{text.strip()}`: unknown size suffix `{suffix}` (known: k, m, g, t, p, each with an "
                        f"optional b; kib, mib, ... for the other base; kb_base = {kb_base})")
    power, base = _SIZE_SUFFIXES[s]
    unit = kb_base if base == "kb_base" else (1000 if kb_base == 1024 else 1024)
    return value * unit ** power, False


def parse_time_us(text: str, default_unit_us: int) -> int:
    """A time in microseconds as fio reads `text`; `default_unit_us` is the option's unit when
    none is written (1_000_000 for runtime, 1 for thinktime)."""
    value, suffix = _split_number(text, "a time (a whole number with an optional us, ms, s, m, h or d)")
    s = suffix.strip().lower()
    if s == "":
        return value * default_unit_us
    if s in ("sec", "secs", "min", "mins"):
        word = "seconds" if s.startswith("sec") else "minutes"
        raise UnitError(f"`{text.strip()}` is ambiguous: fio's HOWTO reads `{s}` as {word}, its parser "
                        f"(get_mult_time) as microseconds; write `{value}{'s' if word == 'seconds' else 'm'}`")
    if s not in TIME_SUFFIXES_US:
        raise UnitError(f"`{text.strip()}`: unknown time unit `{suffix}` (known: us, usec, ms, msec, s, m, h, d)")
    return value * TIME_SUFFIXES_US[s]


def parse_int(text: str, lo: int, hi: int) -> int:
    """A plain whole number in [lo, hi] (fio's int options without units: numjobs, iodepth, ...)."""
    value, suffix = _split_number(text, f"a whole number in [{lo}, {hi}]")
    if suffix.strip():
        raise UnitError(f"`{text.strip()}` is not a whole number in [{lo}, {hi}]")
    if not lo <= value <= hi:
        raise UnitError(f"{value} is outside [{lo}, {hi}]")
    return value


def parse_bool(text: Optional[str]) -> bool:
    """fio's bool: a bare option means 1; otherwise 0 or 1 (fio parses the integer)."""
    if text is None:
        return True
    t = text.strip()
    if t in ("1", "0"):
        return t == "1"
    raise UnitError(f"`{t}` is not a boolean (fio reads 0 or 1; a bare option means 1)")


def split_directions(text: str):
    """A per-direction value (`bs`, `rate`, `rate_iops`, `ba`) split as fio splits it: one value
    applies to reads, writes and trims; `8k,32k` is 8k for reads, 32k for writes and trims (a
    value not followed by a comma applies to the directions after it); an empty part keeps the
    default. Returns [read, write, trim] strings or None (the default)."""
    parts = text.split(",")
    if len(parts) > 3:
        raise UnitError(f"`{text}`: at most three values (reads, writes, trims)")
    out = [None, None, None]
    for i, part in enumerate(parts):
        part = part.strip()
        if not part:
            continue
        out[i] = part
        if i == len(parts) - 1:
            for j in range(i + 1, 3):
                out[j] = part
    return out
