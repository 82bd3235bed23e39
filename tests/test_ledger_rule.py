"""The one verdict rule (iosched/ledger/rule.py) on hand-checked cases: each kind, each outcome."""

import math

import pytest

from iosched.ledger import rule
from iosched.ledger.measures import gain, maximum, minimum, ratio, time_saved
from iosched.ledger.rule import AtLeast, AtMost

R, OFF, C, NA = rule.REPRODUCED, rule.OFF, rule.CONTRADICTED, rule.NOT_ATTEMPTED


@pytest.mark.parametrize("ours,verdict", [
    (129.0, R), (110.0, R), (148.0, R),        # within 15% of 129 (109.65 to 148.35)
    (109.0, OFF), (149.0, OFF), (50.3, OFF),   # outside: off, factor ours / paper
])
def test_cell(ours, verdict):
    v = rule.judge_number("cell", 129, ours)
    assert v.verdict == verdict
    assert v.factor == pytest.approx(ours / 129)


def test_cell_is_never_contradicted():
    # A cell (a time, a throughput) has no direction of its own.
    assert rule.judge_number("cell", 10, 0.1).verdict == OFF


def test_percent_time_saved_metric():
    # "54% faster" meaning 54% less time: compared as the time saved, in percent.
    ours = time_saved(base=224.6, new=83.4)  # 62.9% saved
    assert ours == pytest.approx(62.87, abs=0.01)
    assert rule.judge_number("percent", 54, ours).verdict == OFF  # 62.9 > 54 * 1.15 = 62.1
    assert rule.judge_number("percent", 54, time_saved(100.0, 50.0)).verdict == R
    # The same runs judged as a speed-up ratio would read 2.7x: the metric matters.
    assert ratio(224.6, 83.4) == pytest.approx(2.693, abs=1e-3)


def test_percent_contradicted_when_the_sign_differs():
    v = rule.judge_number("percent", 62, gain(base=451.5, new=451.5 * 0.99))
    assert v.verdict == C
    assert rule.judge_number("percent", 2, 4.0).verdict == OFF  # same direction, twice as large
    assert rule.judge_number("percent", 2, -1.0).verdict == C


def test_percent_zero_is_off_not_contradicted():
    # No change is not the opposite direction.
    assert rule.judge_number("percent", 62, 0.0).verdict == OFF


def test_ratio_contradicted_across_one():
    assert rule.judge_number("ratio", 8, 0.23).verdict == C  # 4.3x slower where the paper has 8x faster
    assert rule.judge_number("ratio", 8, 6.0).verdict == OFF  # 6x is not "8x" (6.8 to 9.2)
    assert rule.judge_number("ratio", 8, 7.0).verdict == R


def test_range_uses_the_wider_of_range_and_tolerance():
    # "8-9x": midpoint 8.5, 15% -> 7.225 to 9.775, wider than the range itself.
    assert rule.accepted_interval([8, 9]) == pytest.approx((7.225, 9.775))
    assert rule.judge_number("ratio", [8, 9], 7.3).verdict == R
    assert rule.judge_number("ratio", [8, 9], 7.2).verdict == OFF
    # "29% to 71%": the range is wider than 15% of its midpoint 50 (42.5 to 57.5).
    assert rule.accepted_interval([29, 71]) == pytest.approx((29, 71))
    assert rule.judge_number("percent", [29, 71], 30).verdict == R
    assert rule.judge_number("percent", [29, 71], 28).verdict == OFF
    assert rule.judge_number("percent", [29, 71], 28).factor == pytest.approx(28 / 50)


def test_bounds_decide_only_when_they_can():
    # A program the run stopped: its time is at least the run's length.
    assert rule.judge_number("cell", 4767, AtLeast(300)).verdict == NA
    v = rule.judge_number("cell", 129, AtLeast(300))
    assert (v.verdict, v.factor_bound) == (OFF, ">")
    assert rule.judge_number("cell", 129, AtMost(50)).verdict == OFF
    assert rule.judge_number("cell", 129, math.nan).verdict == NA


def test_direction_threshold_qualitative():
    assert rule.judge_test("direction", ">", 1, 1.2).verdict == R
    assert rule.judge_test("direction", ">", 1, 0.9).verdict == C
    assert rule.judge_test("qualitative", "<", 1, 2.0).verdict == C
    v = rule.judge_test("threshold", "<", 40, 45.0)
    assert (v.verdict, v.factor) == (OFF, pytest.approx(45 / 40))
    assert rule.judge_test("threshold", "<=", 30, 30.0).verdict == R
    # A lower bound decides a ">" test and refutes a "<" test.
    assert rule.judge_test("threshold", ">", 10, AtLeast(20)).verdict == R
    assert rule.judge_test("threshold", "<", 10, AtLeast(20)).verdict == OFF
    assert rule.judge_test("threshold", "<", 30, AtLeast(20)).verdict == NA


def test_close_to_a_reference():
    assert rule.judge_close(3.7, 3.0).verdict == R  # within 25% of 3.0 (2.25 to 3.75)
    v = rule.judge_close(16.3, 3.02)
    assert (v.verdict, v.factor) == (OFF, pytest.approx(16.3 / 3.02))
    assert rule.judge_close(AtLeast(300), 8.7).verdict == OFF


def test_ranking_tiers_and_order():
    # Seelam Table 4, web server: CAS 855, LAS 863 (within 1%), noop 910, deadline 924, CFQ 931.
    paper = {"deadline": 924, "LAS": 863, "CAS": 855, "CFQ": 931, "noop": 910}
    assert [list(t) for t in rule.paper_tiers(paper)] == [["CAS", "LAS"], ["noop", "deadline", "CFQ"]]
    # Within a tier any order; across tiers the paper's.
    ours_ok = {"deadline": 1300, "LAS": 516, "CAS": 517, "CFQ": 1200, "noop": 1369}
    assert rule.judge_ranking(paper, ours_ok).verdict == R
    ours_bad = {"deadline": 1300, "LAS": 516, "CAS": 517, "CFQ": 500, "noop": 1369}
    assert rule.judge_ranking(paper, ours_bad).verdict == C
    assert ("CAS", "CFQ") in rule.ranking_violations(paper, ours_bad)


def test_ranking_ties_in_ours_do_not_keep_an_order():
    # Mail server: the paper has CAS 109 < CFQ 112 (2.8%, one tier) < deadline 118 < noop 125 < LAS 177.
    paper = {"deadline": 118, "LAS": 177, "CAS": 109, "CFQ": 112, "noop": 125}
    ours = {"deadline": 872, "LAS": 451.5, "CAS": 451.5, "CFQ": 468, "noop": 1119}
    assert rule.judge_ranking(paper, ours).verdict == C  # LAS is the paper's worst, ours ties for best


def test_tests_parse():
    assert rule.parse_test("> 1") == (">", 1.0)
    with pytest.raises(ValueError):
        rule.parse_test("about 1")


def test_bounded_arithmetic():
    assert ratio(AtLeast(300), 100.0) == AtLeast(3.0)
    assert ratio(100.0, AtLeast(50)) == AtMost(2.0)
    assert math.isnan(ratio(AtLeast(1), AtLeast(2)))
    assert time_saved(base=AtLeast(200), new=100.0) == AtLeast(50.0)
    assert gain(base=10.0, new=AtLeast(20)) == AtLeast(100.0)
    assert maximum([1.0, AtLeast(3)]) == AtLeast(3)
    assert minimum([1.0, AtLeast(3)]) == 1.0
