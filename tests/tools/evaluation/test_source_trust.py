"""Trust on footage against its labels, window by window (`source_trust.label_comparison`)."""
from __future__ import annotations

import math

import pytest

from predrel_ros.tools.evaluation.source_trust import label_comparison, label_table


def test_label_comparison_by_hand():
    counts = [{"contact": (2, 2, 1)}, {}, {"contact": (1, 1, 0), "static": (1, 0, 0)}, {}]
    series = [{"contact": (0.8, False)},
              {"contact": (math.nan, True), "static": (math.nan, True)},
              {"contact": (0.4, True)},                                   # static not judged here
              {"contact": (0.1, True), "static": (0.3, False)}]
    comparison = label_comparison(counts, series, window=2)
    assert set(comparison) == {"contact", "static"}                     # no reference stream of the others
    contact = comparison["contact"]
    # window 2: true agreement 1/2, 1/2, 0/1, 0/1; expected 0.8, -, 0.4, 0.1
    assert contact["windows"] == 4 and contact["true_agreement"] == pytest.approx(0.25)
    assert contact["expected_agreement"] == pytest.approx(1.3 / 3)
    assert contact["mae"] == pytest.approx((0.3 + 0.4 + 0.1) / 3)
    assert contact["flagged_share"] == 0.75 and contact["low_windows"] == 4 and contact["flagged_share_low"] == 0.75
    assert (contact["reference_streams"], contact["found_share"]) == (3, 1.0)
    assert contact["agreement"] == pytest.approx(1 / 3)
    static = comparison["static"]               # frame 1 has no static reference in its window; frame 2 is not judged
    assert static["windows"] == 1 and static["true_agreement"] == 0.0 and static["mae"] == pytest.approx(0.3)
    assert static["flagged_share"] == 0.0 and static["flagged_share_low"] == 0.0 and static["found_share"] == 0.0
    assert "| contact | 3 (1.00) | 4 | 0.25 | 0.43 | 0.27 | 0.75 | 0.75 (4) |" in label_table(comparison)


def test_a_group_never_judged_has_no_window():
    comparison = label_comparison([{"derived": (2, 1, 1)}], [{}], window=30)
    assert comparison["derived"]["windows"] == 0 and comparison["derived"]["true_agreement"] is None
    assert comparison["derived"]["agreement"] == 0.5
    assert "| derived | 2 (0.50) | 0 | n/a |" in label_table(comparison)
