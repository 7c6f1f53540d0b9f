"""Accuracy, macro-F1 and the confusion matrix, checked by hand."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from predrel_ros.action.metrics import accuracy, confusion_matrix, macro_f1, per_class_f1


def test_hand_counted_example():
    # classes 0, 1, 2; the last frame has no ground truth, one frame has no prediction
    y_true = [0, 0, 0, 1, 1, 2, -1]
    y_pred = [0, 0, 1, 1, -1, 1, 2]
    matrix = confusion_matrix(y_true, y_pred, 3)
    np.testing.assert_array_equal(matrix, [[2, 1, 0, 0],
                                           [0, 1, 0, 1],
                                           [0, 1, 0, 0]])
    assert accuracy(y_true, y_pred, 3) == pytest.approx(3 / 6)
    # class 0: TP 2, FP 0, FN 1 -> 4/5; class 1: TP 1, FP 2, FN 1 -> 2/5; class 2: TP 0, FP 0, FN 1 -> 0
    np.testing.assert_allclose(per_class_f1(y_true, y_pred, 3), [0.8, 0.4, 0.0])
    assert macro_f1(y_true, y_pred, 3) == pytest.approx((0.8 + 0.4 + 0.0) / 3)


def test_classes_absent_from_truth_and_predictions_are_left_out_of_macro_f1():
    f1 = per_class_f1([0, 1], [0, 1], 4)
    assert f1[0] == f1[1] == 1.0 and math.isnan(f1[2]) and math.isnan(f1[3])
    assert macro_f1([0, 1], [0, 1], 4) == 1.0


def test_a_class_only_predicted_counts_with_f1_zero():
    assert macro_f1([0, 0], [0, 2], 3) == pytest.approx((2 / 3 + 0.0) / 2)


def test_no_scored_frame_gives_nan():
    assert math.isnan(accuracy([-1, -1], [0, 1], 2))
    assert math.isnan(macro_f1([], [], 2))


def test_refuses_bad_labels_and_lengths():
    with pytest.raises(ValueError, match="same length"):
        accuracy([0, 1], [0], 2)
    with pytest.raises(ValueError, match="class indices 0..1"):
        accuracy([0, 2], [0, 1], 2)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(-1, 3), st.integers(-1, 3)), min_size=1, max_size=40))
def test_properties(pairs):
    y_true = [t for t, _ in pairs]
    y_pred = [p for _, p in pairs]
    matrix = confusion_matrix(y_true, y_pred, 4)
    scored = sum(t >= 0 for t in y_true)
    assert matrix.sum() == scored
    if scored:
        assert accuracy(y_true, y_pred, 4) == pytest.approx(np.trace(matrix[:, :4]) / scored)
        f1 = macro_f1(y_true, y_pred, 4)
        assert 0.0 <= f1 <= 1.0
        assert (f1 == 1.0) == all(t == p for t, p in pairs if t >= 0)
