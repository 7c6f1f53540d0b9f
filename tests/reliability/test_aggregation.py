import math

import pytest
from scipy import stats

from predrel_ros.reliability.aggregation import aggregate, summarize


def test_summary_by_hand():
    summary = summarize([0.6, 0.8, 1.0, float("nan")])
    assert summary.n == 3 and summary.missing == 1
    assert summary.mean == pytest.approx(0.8)
    assert summary.std == pytest.approx(0.2)
    half = stats.t.ppf(0.975, 2) * 0.2 / math.sqrt(3)   # t_{0.975, 2} = 4.303
    assert half == pytest.approx(4.302653 * 0.2 / math.sqrt(3), rel=1e-5)
    assert (summary.ci_low, summary.ci_high) == pytest.approx((0.8 - half, 0.8 + half))
    single = summarize([0.5])
    assert single.mean == 0.5 and math.isnan(single.std) and math.isnan(single.ci_low)
    assert summarize([]).n == 0


def test_aggregate_by_group_degradation_and_severity():
    rows = [
        {"predicate": "contact", "degradation": "blur", "severity": 2, "prs": 0.9, "tpc": 1.0},
        {"predicate": "contact", "degradation": "blur", "severity": 10, "prs": 0.5},
        {"predicate": "grasp", "degradation": "blur", "severity": 2, "prs": 0.7},
        {"predicate": "static", "degradation": "blur", "severity": 2, "prs": 0.8},
    ]
    by_group = aggregate(rows, by=("group",))
    assert list(by_group) == [("contact",), ("derived",), ("static",)]
    assert by_group[("contact",)]["prs"].mean == pytest.approx(0.7)
    assert by_group[("contact",)]["tpc"].n == 1
    by_severity = aggregate(rows, by=("degradation", "severity"), metrics=("prs",))
    assert list(by_severity) == [("blur", 2), ("blur", 10)]      # numeric order, not text order
    assert by_severity[("blur", 2)]["prs"].n == 3
    with pytest.raises(ValueError, match="lacks the field"):
        aggregate([{"prs": 1.0}], by=("degradation",))
