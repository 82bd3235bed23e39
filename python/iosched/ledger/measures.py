"""Named measures: how a claim's `ours` is computed from the run's tables.

A claim's `ours = { f = "ratio", num = "t/r/c", den = "t/r/c" }` calls the measure `ratio` with
its arguments evaluated first: a string is a table reference, a number is itself, an inline table
with `f` is a measure, a list or a table is evaluated element by element. The measures here serve
every paper; a reproduction may pass measures of its own to `ledger.evaluate`.

Bounds (`AtLeast`, `AtMost`: a program the run's end stopped) travel through the arithmetic when
the result is still bounded one way, and give NaN (nothing known) when it is not.
"""

from __future__ import annotations

import math
from typing import Callable, Dict

from .rule import AtLeast, AtMost, Measured
from .tables import Tables

Measure = Callable[..., object]
MEASURES: Dict[str, Measure] = {}


def measure(name: str):
    def add(fn: Measure) -> Measure:
        MEASURES[name] = fn
        return fn

    return add


class MeasureError(ValueError):
    pass


def evaluate(spec, tables: Tables, extra: Dict[str, Measure]):
    """Evaluate an argument or a measure spec (see the module's doc)."""
    if isinstance(spec, dict) and "f" in spec:
        name = spec["f"]
        fn = extra.get(name) or MEASURES.get(name)
        if fn is None:
            known = sorted(set(MEASURES) | set(extra))
            raise MeasureError(f"unknown measure {name!r} (known: {', '.join(known)})")
        args = {k: evaluate(v, tables, extra) for k, v in spec.items() if k != "f"}
        try:
            return fn(**args)
        except TypeError as e:
            raise MeasureError(f"measure {name!r}: {e}") from None
    if isinstance(spec, dict):
        return {k: evaluate(v, tables, extra) for k, v in spec.items()}
    if isinstance(spec, list):
        return [evaluate(v, tables, extra) for v in spec]
    if isinstance(spec, str):
        return tables.ref(spec)
    if isinstance(spec, bool):
        raise MeasureError(f"argument {spec!r}: a boolean is not a measure argument")
    if isinstance(spec, (int, float)):
        return float(spec)
    raise MeasureError(f"argument {spec!r}: not a reference, number, list or measure")


# -- bounded arithmetic ---------------------------------------------------------------------

def _lo_hi(x: Measured):
    """(lowest, highest) value x may have."""
    if isinstance(x, AtLeast):
        return x.value, math.inf
    if isinstance(x, AtMost):
        return -math.inf, x.value
    return float(x), float(x)


def _from_lo_hi(lo: float, hi: float) -> Measured:
    if math.isnan(lo) or math.isnan(hi):
        return math.nan
    if lo == hi:
        return lo
    if math.isinf(hi) and not math.isinf(lo):
        return AtLeast(lo)
    if math.isinf(lo) and not math.isinf(hi):
        return AtMost(hi)
    return math.nan  # unbounded both ways: nothing known


def _exact(x: Measured) -> bool:
    return not isinstance(x, (AtLeast, AtMost))


def _div(a: Measured, b: Measured) -> Measured:
    """a / b. With a bound on either side, both must be non-negative quantities (times, rates)
    and b > 0; the result is then bounded the way the inputs allow."""
    if _exact(a) and _exact(b):
        return math.nan if float(b) == 0 else float(a) / float(b)
    alo, ahi = _lo_hi(a)
    blo, bhi = _lo_hi(b)
    if blo <= 0 or (alo < 0 and not math.isinf(alo)):
        return math.nan
    lo = alo / bhi if not math.isinf(bhi) else -math.inf  # a quantity over an unbounded one: no floor known
    hi = ahi / blo
    return _from_lo_hi(lo, hi)


def _affine(x: Measured, scale: float, offset: float) -> Measured:
    """scale * x + offset (scale may be negative)."""
    lo, hi = _lo_hi(x)
    a, b = scale * lo + offset, scale * hi + offset
    return _from_lo_hi(min(a, b), max(a, b))


# -- the measures ---------------------------------------------------------------------------

@measure("value")
def value(x):
    """A table cell as it is."""
    return x


@measure("scale")
def scale(x, by):
    """x times a unit factor (e.g. 100 for a fraction shown in %, 1e-3 for ms in s)."""
    return _affine(x, by, 0.0)


@measure("ratio")
def ratio(num, den):
    """num / den ("A is N times B")."""
    return _div(num, den)


@measure("gain")
def gain(base, new):
    """100 (new / base - 1): "new is X% higher than base" (throughput gained, "trails by X%")."""
    return _affine(_div(new, base), 100.0, -100.0)


@measure("time_saved")
def time_saved(base, new):
    """100 (1 - new / base): "X% faster" when it means X% less time (the time saved)."""
    return _affine(_div(new, base), -100.0, 100.0)


@measure("max")
def maximum(of):
    """The largest of a list (or of a table's values)."""
    return _extreme(_values(of), max)


@measure("min")
def minimum(of):
    """The smallest of a list (or of a table's values)."""
    return _extreme(_values(of), min)


@measure("mean")
def mean(of):
    """The arithmetic mean (NaN if any value is a bound)."""
    xs = _values(of)
    if not xs or any(isinstance(x, (AtLeast, AtMost)) for x in xs):
        return math.nan
    return sum(float(x) for x in xs) / len(xs)


@measure("median")
def median(of):
    """The median (NaN if any value is a bound)."""
    xs = _values(of)
    if not xs or any(isinstance(x, (AtLeast, AtMost)) for x in xs):
        return math.nan
    xs = sorted(float(x) for x in xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


@measure("abs")
def absolute(x):
    """|x| (a bound only when it keeps its sign); of a table of values, each value's."""
    if isinstance(x, dict):
        return {k: absolute(v) for k, v in x.items()}
    lo, hi = _lo_hi(x)
    if lo >= 0:
        return x
    if hi <= 0:
        return _from_lo_hi(-hi, -lo)
    return math.nan


@measure("ratios")
def ratios(num, den):
    """{key: num[key] / den[key]} over the keys both tables of values have."""
    _need_dicts("ratios", num, den)
    return {k: _div(num[k], den[k]) for k in num if k in den}


@measure("gains")
def gains(base, new):
    """{key: gain(base[key], new[key])}, percent."""
    _need_dicts("gains", base, new)
    return {k: gain(base[k], new[k]) for k in new if k in base}


@measure("reductions")
def reductions(base, new):
    """{key: time_saved(base[key], new[key])}: percent by which `new` is lower."""
    _need_dicts("reductions", base, new)
    return {k: time_saved(base[k], new[k]) for k in new if k in base}


@measure("select")
def select(of, min=None, max=None):  # noqa: A002 - the claim files' argument names
    """The entries of {key: value} whose numeric key lies in [min, max]."""
    _need_dicts("select", of)
    lo = -math.inf if min is None else float(min)
    hi = math.inf if max is None else float(max)
    return {k: v for k, v in of.items() if lo <= float(k) <= hi}


@measure("farthest_from_one")
def farthest_from_one(of):
    """The ratio farthest from 1 (by |log|): "A equals B at every point" judged at its worst."""
    xs = [x for x in _values(of)]
    if not xs or any(isinstance(x, (AtLeast, AtMost)) for x in xs):
        return math.nan
    return max((float(x) for x in xs), key=lambda x: abs(math.log(x)) if x > 0 else math.inf)


@measure("max_each")
def max_each(of):
    """Key by key, the largest of several tables of values: {key: max(t[key] for t in of)}."""
    return _each(of, maximum)


@measure("min_each")
def min_each(of):
    """Key by key, the smallest of several tables of values."""
    return _each(of, minimum)


def _each(of, pick):
    if not isinstance(of, list) or not of:
        raise MeasureError("max_each/min_each: `of` must be a list of tables of values")
    _need_dicts("max_each/min_each", *of)
    keys = [k for k in of[0] if all(k in t for t in of[1:])]
    return {k: pick([t[k] for t in of]) for k in keys}


def _values(of):
    if isinstance(of, dict):
        return list(of.values())
    if isinstance(of, list):
        return of
    raise MeasureError(f"expected a list or a table of values, got {of!r}")


def _need_dicts(name, *xs):
    for x in xs:
        if not isinstance(x, dict):
            raise MeasureError(f"{name}: expected tables of values (references like table/*/column), got {x!r}")


@measure("items")
def items(of):
    """A ranking's items: {item: value}, as they are."""
    if not isinstance(of, dict):
        raise MeasureError("items: `of` must be a table item -> reference")
    return of


def _extreme(xs, pick):
    if not xs:
        raise MeasureError("max/min: `of` must be a non-empty list")
    los = [_lo_hi(x)[0] for x in xs]
    his = [_lo_hi(x)[1] for x in xs]
    return _from_lo_hi(pick(los), pick(his))
