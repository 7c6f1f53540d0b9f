import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from predrel_ros.reliability.calibration import CalibrationSummary, calibration_summary, expected_calibration_error


def test_bins_and_ece_by_hand():
    confidence = [0.1, 0.15, 0.7, 0.75, 1.0]
    correct = [False, True, True, True, False]
    summary = calibration_summary(confidence, correct, n_bins=2)
    assert summary.counts == (2, 3)
    assert summary.mean_confidence[0] == pytest.approx(0.125)
    assert summary.agreement == pytest.approx((0.5, 2 / 3))
    # ECE = 2/5 |0.5 - 0.125| + 3/5 |2/3 - 0.8167|
    expected = 0.4 * 0.375 + 0.6 * abs(2 / 3 - (0.7 + 0.75 + 1.0) / 3)
    assert summary.ece == pytest.approx(expected)
    assert expected_calibration_error(confidence, correct, n_bins=2) == pytest.approx(expected)


def test_expected_agreement_uses_bin_or_nearest_filled_bin():
    summary = calibration_summary([0.05, 0.95], [False, True], n_bins=10)
    assert summary.expected_agreement(0.02) == 0.0
    assert summary.expected_agreement(0.99) == 1.0
    assert summary.expected_agreement(0.3) == 0.0    # bin 3 empty: nearest filled is bin 0
    empty = calibration_summary([], [], n_bins=4)
    assert empty.expected_agreement(0.42) == 0.42
    assert math.isnan(empty.ece)


def test_round_trip_and_errors():
    summary = calibration_summary([0.2, 0.9, 0.9], [True, True, False], n_bins=5)
    again = CalibrationSummary.from_dict(summary.to_dict())
    assert again.counts == summary.counts and again.ece == pytest.approx(summary.ece)
    assert math.isnan(again.agreement[0])
    with pytest.raises(ValueError, match="same length"):
        calibration_summary([0.5], [True, False])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        calibration_summary([1.5], [True])
    with pytest.raises(ValueError, match="malformed"):
        CalibrationSummary.from_dict({"edges": [0, 1]})


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.booleans()), min_size=1, max_size=60), st.integers(1, 12))
def test_ece_bounds_and_perfect_calibration(samples, n_bins):
    confidence = np.array([c for c, _ in samples])
    correct = np.array([ok for _, ok in samples])
    summary = calibration_summary(confidence, correct, n_bins)
    assert 0.0 <= summary.ece <= 1.0
    assert sum(summary.counts) == len(samples)
    # outcomes at exactly 0 or 1 confidence that match their confidence are perfectly calibrated
    certain = np.where(correct, 1.0, 0.0)
    assert calibration_summary(certain, correct, n_bins).ece == pytest.approx(0.0)
