"""The one verdict rule every paper claim is judged by (docs/reproductions/ledger.md).

- Numbers (`cell`), ratios (`ratio`) and percents (`percent`): **reproduced** when ours is within
  15% of the paper's value in the paper's own metric, or inside the paper's own stated range when
  that is wider; otherwise **off** (factor = ours / paper), or **contradicted** when a ratio or a
  percent points the other way (a ratio on the other side of 1, a percent of the other sign).
- Rankings: reproduced when ours orders the items as the paper does wherever the paper's
  neighbours (in its own order) differ by more than 5%; otherwise contradicted.
- Directions and qualitative claims: reproduced when the claim's test (`ours OP value`, written
  once in its row) holds; otherwise contradicted.
- Thresholds (bounds): reproduced when the test holds; otherwise off (factor = ours / bound).
- "Close to" a reference: reproduced when ours is within 25% of the reference the claim names;
  otherwise off (factor = ours / reference).
- **not attempted** when the claim has no measurement (with the reason), or when the run stopped
  before the measured program finished and the lower bound cannot decide the verdict.

No claim carries a threshold of its own: the constants below are the only ones.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, Optional, Sequence, Tuple, Union

TOLERANCE = 0.15  # numbers, ratios, percents: within 15% of the paper's value
CLOSE = 0.25  # "close to" a reference: within 25% of it
RANKING_TIE = 0.05  # a ranking's neighbours closer than 5% are not ordered by the paper

REPRODUCED = "reproduced"
OFF = "off"
CONTRADICTED = "contradicted"
NOT_ATTEMPTED = "not attempted"
VERDICTS = (REPRODUCED, OFF, CONTRADICTED, NOT_ATTEMPTED)

NUMERIC_KINDS = ("cell", "ratio", "percent")
TEST_KINDS = ("direction", "threshold", "qualitative")
KINDS = NUMERIC_KINDS + ("ranking",) + TEST_KINDS + ("close",)
# Where a ratio or a percent changes direction.
DIRECTION_ORIGIN = {"ratio": 1.0, "percent": 0.0}
TEST_OPS = ("<", "<=", ">", ">=")


@dataclass(frozen=True)
class AtLeast:
    """A measurement known only from below: the run ended before the program finished, so the
    true value is at least `value` (a time, or what grows with it)."""

    value: float


@dataclass(frozen=True)
class AtMost:
    """A measurement known only from above (a rate over a program that did not finish)."""

    value: float


Measured = Union[float, AtLeast, AtMost]


@dataclass(frozen=True)
class Verdict:
    verdict: str
    factor: Optional[float] = None  # ours / paper (numeric claims), ours / bound, ours / reference
    factor_bound: str = ""  # ">" or "<" when the factor is itself only bounded


def _interval(paper) -> Tuple[float, float]:
    """The paper's value as [lo, hi]: a number is [x, x], a range is itself."""
    if isinstance(paper, (list, tuple)):
        lo, hi = float(paper[0]), float(paper[1])
        return (lo, hi) if lo <= hi else (hi, lo)
    return float(paper), float(paper)


def paper_centre(paper) -> float:
    """The number a factor divides by: the value, or a range's midpoint."""
    lo, hi = _interval(paper)
    return (lo + hi) / 2


def accepted_interval(paper) -> Tuple[float, float]:
    """Where ours is **reproduced**: within 15% of the paper's value (of a range's midpoint), or
    inside the paper's stated range when that is wider."""
    lo, hi = _interval(paper)
    mid = (lo + hi) / 2
    band = TOLERANCE * abs(mid)
    return min(lo, mid - band), max(hi, mid + band)


def _opposite(kind: str, paper, ours: float) -> bool:
    """A ratio or percent that points the other way from the paper's."""
    if kind not in DIRECTION_ORIGIN:
        return False
    origin = DIRECTION_ORIGIN[kind]
    mid = paper_centre(paper)
    return (mid - origin) * (ours - origin) < 0


def _factor(ours: float, ref: float) -> Optional[float]:
    if ref == 0 or not math.isfinite(ours):
        return None
    return ours / ref


def judge_number(kind: str, paper, ours: Measured) -> Verdict:
    """A cell, a ratio or a percent (the paper's value a number or a [lo, hi] range)."""
    lo, hi = accepted_interval(paper)
    mid = paper_centre(paper)
    if isinstance(ours, (AtLeast, AtMost)):
        bound = ours.value
        # The true value lies above (AtLeast) or below (AtMost) `bound`: decided only when the
        # whole half-line misses the accepted interval.
        above = isinstance(ours, AtLeast)
        if (above and bound > hi) or (not above and bound < lo):
            sign = ">" if above else "<"
            if _opposite(kind, paper, bound):
                return Verdict(CONTRADICTED, _factor(bound, mid), sign)
            return Verdict(OFF, _factor(bound, mid), sign)
        return Verdict(NOT_ATTEMPTED)
    ours = float(ours)
    if math.isnan(ours):
        return Verdict(NOT_ATTEMPTED)
    if lo <= ours <= hi:
        return Verdict(REPRODUCED, _factor(ours, mid))
    if _opposite(kind, paper, ours):
        return Verdict(CONTRADICTED, _factor(ours, mid))
    return Verdict(OFF, _factor(ours, mid))


def holds(ours: float, op: str, value: float) -> bool:
    """`ours OP value`."""
    return {"<": ours < value, "<=": ours <= value, ">": ours > value, ">=": ours >= value}[op]


def judge_test(kind: str, op: str, value: float, ours: Measured) -> Verdict:
    """A direction, a threshold or a qualitative claim: `ours OP value`."""
    if op not in TEST_OPS:
        raise ValueError(f"test operator {op!r}: expected one of {', '.join(TEST_OPS)}")
    fail = CONTRADICTED if kind in ("direction", "qualitative") else OFF
    if isinstance(ours, (AtLeast, AtMost)):
        # Decided when every value the bound allows gives the same answer.
        above = isinstance(ours, AtLeast)
        b = ours.value
        if op in (">", ">=") and above and holds(b, op, value):
            return Verdict(REPRODUCED, _factor(b, value), ">")
        if op in ("<", "<=") and not above and holds(b, op, value):
            return Verdict(REPRODUCED, _factor(b, value), "<")
        if op in ("<", "<=") and above and not holds(b, op, value):
            return Verdict(fail, _factor(b, value), ">")
        if op in (">", ">=") and not above and not holds(b, op, value):
            return Verdict(fail, _factor(b, value), "<")
        return Verdict(NOT_ATTEMPTED)
    ours = float(ours)
    if math.isnan(ours):
        return Verdict(NOT_ATTEMPTED)
    return Verdict(REPRODUCED if holds(ours, op, value) else fail, _factor(ours, value))


def judge_close(ours: Measured, reference: float) -> Verdict:
    """Ours "close to" a reference: within 25% of it."""
    if isinstance(ours, (AtLeast, AtMost)):
        b = ours.value
        if isinstance(ours, AtLeast) and b > reference * (1 + CLOSE):
            return Verdict(OFF, _factor(b, reference), ">")
        if isinstance(ours, AtMost) and b < reference * (1 - CLOSE):
            return Verdict(OFF, _factor(b, reference), "<")
        return Verdict(NOT_ATTEMPTED)
    ours = float(ours)
    if math.isnan(ours) or math.isnan(reference):
        return Verdict(NOT_ATTEMPTED)
    ok = abs(ours - reference) <= CLOSE * abs(reference)
    return Verdict(REPRODUCED if ok else OFF, _factor(ours, reference))


def paper_tiers(paper: Dict[str, float]) -> Sequence[Sequence[str]]:
    """The paper's items in its order (ascending value), grouped into tiers: a neighbour within
    5% of the one before it joins its tier (the paper does not order them)."""
    items = sorted(paper, key=lambda k: (paper[k], k))
    tiers = []
    for k in items:
        if tiers:
            prev = paper[tiers[-1][-1]]
            if abs(paper[k] - prev) <= RANKING_TIE * abs(prev):
                tiers[-1].append(k)
                continue
        tiers.append([k])
    return tiers


def ranking_violations(paper: Dict[str, float], ours: Dict[str, Measured]) -> Sequence[Tuple[str, str]]:
    """Every pair (a, b) the paper orders a before b (a in a lower tier) that ours does not order
    strictly the same way."""
    tiers = paper_tiers(paper)
    tier_of = {k: i for i, t in enumerate(tiers) for k in t}
    bad = []
    keys = sorted(paper, key=lambda k: (tier_of[k], k))
    for i, a in enumerate(keys):
        for b in keys[i + 1:]:
            if tier_of[a] == tier_of[b]:
                continue
            if not _before(ours[a], ours[b]):
                bad.append((a, b))
    return bad


def _before(a: Measured, b: Measured) -> bool:
    """Ours has a strictly below b (a bound counts only when it decides)."""
    av = a.value if isinstance(a, (AtLeast, AtMost)) else float(a)
    bv = b.value if isinstance(b, (AtLeast, AtMost)) else float(b)
    if isinstance(a, AtLeast) or isinstance(b, AtMost):
        # a could be larger, or b smaller, than shown: only a decided "before" counts.
        return isinstance(b, AtLeast) and not isinstance(a, AtLeast) and av < bv
    return av < bv


def judge_ranking(paper: Dict[str, float], ours: Dict[str, Measured]) -> Verdict:
    missing = sorted(set(paper) - set(ours))
    if missing:
        raise ValueError(f"ranking: ours has no value for {', '.join(missing)}")
    if any(isinstance(v, float) and math.isnan(v) for v in ours.values()):
        return Verdict(NOT_ATTEMPTED)
    return Verdict(CONTRADICTED if ranking_violations(paper, ours) else REPRODUCED)


def parse_test(text: str) -> Tuple[str, float]:
    """`"> 1"` -> (">", 1.0): the test of a direction, threshold or qualitative claim."""
    parts = str(text).split()
    if len(parts) != 2 or parts[0] not in TEST_OPS:
        raise ValueError(f"test {text!r}: expected `OP NUMBER` with OP one of {', '.join(TEST_OPS)}")
    try:
        value = float(parts[1])
    except ValueError:
        raise ValueError(f"test {text!r}: {parts[1]!r} is not a number") from None
    return parts[0], value
