"""Offline evaluation: per-frame predictions with dropped frames, masking, probabilities for DIS."""
from __future__ import annotations

import numpy as np
import pytest

from predrel_ros.action.evaluation import evaluate_streams, predict_stream
from predrel_ros.action.streams import EpisodeStream
from predrel_ros.core.errors import UserError
from predrel_ros.core.frame import PRIMITIVE_LABELS
from predrel_ros.reliability import metrics as reliability_metrics

GRASP, APPROACH, IDLE = (PRIMITIVE_LABELS.index(name) for name in ("grasp", "approach", "idle"))


def stream(pair, delivered: dict[int, tuple[str, str]], labels: list) -> EpisodeStream:
    frames = [(index, pair(*values, frame=index)) for index, values in sorted(delivered.items())]
    return EpisodeStream("hand-built", "test", frames, labels)


def test_dropped_frames_hold_the_last_estimate_and_frames_before_the_first_have_none(hand_model, pair):
    model = hand_model()
    labels = ["approach", "approach", "approach", "grasp", "grasp", None]
    episode = stream(pair, {1: ("N", "GC"), 3: ("T", "S")}, labels)
    prediction = predict_stream(model, episode)
    np.testing.assert_array_equal(prediction.y_true, [APPROACH, APPROACH, APPROACH, GRASP, GRASP, -1])
    np.testing.assert_array_equal(prediction.y_pred, [-1, APPROACH, APPROACH, GRASP, GRASP, GRASP])
    p_approach = prediction.probabilities[0, APPROACH]
    p_grasp = prediction.probabilities[1, GRASP]
    np.testing.assert_allclose(prediction.p_true[:5], [0.0, p_approach, p_approach, p_grasp, p_grasp])
    assert np.isnan(prediction.p_true[5])
    result = evaluate_streams(model, [episode])
    assert result.frames == 5 and result.episodes == 1
    assert result.accuracy == pytest.approx(4 / 5)
    # approach: TP 2, FN 1 (no prediction) -> 0.8; grasp: TP 2 -> 1.0
    assert result.macro_f1 == pytest.approx((0.8 + 1.0) / 2)
    assert result.confusion[APPROACH, -1] == 1
    assert result.to_dict()["per_class_f1"]["approach"] == pytest.approx(0.8)


def test_masking_and_dis_from_true_class_probabilities(hand_model, pair):
    model = hand_model()
    episode = stream(pair, {0: ("T", "S"), 1: ("T", "S"), 2: ("N", "GC")}, ["grasp", "grasp", "approach"])
    clean = evaluate_streams(model, [episode])
    without_contact = evaluate_streams(model, [episode], masked=["contact"])
    assert clean.accuracy == 1.0 and without_contact.accuracy == pytest.approx(1 / 3)
    assert reliability_metrics.dis_accuracy(clean.accuracy, without_contact.accuracy) == pytest.approx(2 / 3)
    dis = reliability_metrics.dis_prob(clean.p_true, without_contact.p_true)
    # frames 0, 1 lose the grasp evidence, frame 2 keeps its approach evidence
    expected = 2 * (clean.p_true[0] - without_contact.p_true[0]) / 3
    assert dis == pytest.approx(expected) and dis > 0.5
    with pytest.raises(ValueError, match="cannot mask"):
        evaluate_streams(model, [episode], masked=["touch"])


def test_confidence_override_drops_confidences_at_inference(hand_model, pair):
    model = hand_model()
    episode = EpisodeStream("low", "test", [(0, pair("T", "S", c=0.3))], ["grasp"])
    weighted = predict_stream(model, episode)
    unweighted = predict_stream(model, episode, confidence_weighted=False)
    assert unweighted.p_true[0] > weighted.p_true[0]


def test_unknown_primitive_and_empty_stream(hand_model, pair):
    model = hand_model()
    with pytest.raises(UserError, match="'wave'"):
        predict_stream(model, EpisodeStream("x", "test", [(0, pair("T", "S"))], ["wave"]))
    nothing = predict_stream(model, EpisodeStream("dropped", "test", [], ["idle", "idle"]))
    np.testing.assert_array_equal(nothing.y_pred, [-1, -1])
    np.testing.assert_array_equal(nothing.p_true, [0.0, 0.0])
