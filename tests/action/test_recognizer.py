"""The live recognizer: trust gating, config, causal window, frame gaps, order and reset."""
from __future__ import annotations

import numpy as np
import pytest

from predrel_ros.action.encoding import TemporalSpec, encode_sequence
from predrel_ros.action.recognizer import ActionRecognizer
from predrel_ros.action.trust_gate import ActionConfig, trust_decision
from predrel_ros.core.frame import PRIMITIVE_LABELS
from predrel_ros.predicates import FrameOrderError
from predrel_ros.reliability.trust import TrustAssessment


def test_result_carries_the_message_fields(hand_model, pair):
    result = ActionRecognizer(hand_model()).update(0, pair("T", "S"))
    assert result.primitive == "grasp" and result.class_names == PRIMITIVE_LABELS
    assert result.probability == pytest.approx(result.probabilities.max())
    assert result.probabilities.sum() == pytest.approx(1.0)
    assert result.trusted and result.reason == "" and result.relied_on == ("contact",)


def test_untrusted_predicate_the_decision_relies_on_makes_it_untrusted_with_the_reason(hand_model, pair):
    recognizer = ActionRecognizer(hand_model())
    trust = {"contact": TrustAssessment("contact", "ERROR", ["tpc_s 0.62 < 0.70"], {}), "dynamic": "OK"}
    result = recognizer.update(0, pair("T", "S"), trust)
    assert result.primitive == "grasp" and not result.trusted
    assert result.reason == "relies on contact (100%, ERROR: tpc_s 0.62 < 0.70)"


def test_untrusted_predicate_the_decision_does_not_use_leaves_it_trusted(hand_model, pair):
    recognizer = ActionRecognizer(hand_model())
    result = recognizer.update(0, pair("T", "S"), {"dynamic": "ERROR", "static": "ERROR", "contact": "OK"})
    assert result.trusted and result.reason == ""
    approach = recognizer.update(1, pair("N", "GC"), {"contact": "ERROR", "dynamic": "OK"})
    assert approach.primitive == "approach" and approach.relied_on == ("dynamic",) and approach.trusted


def test_group_level_and_warn_levels(hand_model, pair):
    recognizer = ActionRecognizer(hand_model(), ActionConfig(untrusted_levels=("WARN", "ERROR")))
    assert not recognizer.update(0, pair("T", "S"), {"contact": "WARN"}).trusted
    # a group entry counts for its predicates: release belongs to "derived"
    result = recognizer.update(1, pair("N", "S", release="T"), {"derived": "ERROR", "contact": "OK"})
    assert result.primitive == "release" and not result.trusted
    assert result.reason == "relies on release (100%, derived ERROR)"
    # the predicate's own entry comes first
    assert recognizer.update(2, pair("N", "S", release="T"), {"derived": "ERROR", "release": "OK"}).trusted


def test_stream_keyed_trust_any_untrusted_stream_of_a_relied_predicate(hand_model, pair):
    recognizer = ActionRecognizer(hand_model())
    trust = {("contact", 1, 2): "ERROR", ("contact", 1, 3): "OK", ("dynamic", 1, 2): "ERROR"}
    result = recognizer.update(0, pair("T", "S"), trust)
    assert not result.trusted and result.reason == "relies on contact (100%, contact(1, 2) ERROR)"
    calm = {("contact", 1, 2): "OK", "contact": "OK", ("dynamic", 1, 2): "ERROR"}
    assert recognizer.update(1, pair("T", "S"), calm).trusted


def test_low_probability_is_untrusted_and_missing_trust_only_when_required(hand_model, pair):
    recognizer = ActionRecognizer(hand_model(), ActionConfig(min_probability=0.99))
    result = recognizer.update(0, pair("T", "S", c=0.5))
    assert not result.trusted and result.reason.startswith("probability ")
    strict = ActionRecognizer(hand_model(), ActionConfig(require_trust=True))
    assert "contact (100%), which has no trust assessment" in strict.update(0, pair("T", "S"), {}).reason
    assert strict.update(1, pair("T", "S"), None).trusted      # no reliability node: probability only


def test_trust_decision_orders_relied_predicates_and_joins_reasons():
    config = ActionConfig(reliance_share=0.2, min_probability=0.6)
    trusted, reason, relied = trust_decision({"grasp": 0.1, "contact": 0.5, "dynamic": 0.4}, 0.5,
                                             {"contact": "ERROR", "dynamic": "STALE", "grasp": "ERROR"}, config)
    assert relied == ("contact", "dynamic") and not trusted
    assert reason == "relies on contact (50%, ERROR); probability 0.50 < 0.60"
    with pytest.raises(ValueError, match="trust level must be one of"):
        trust_decision({"contact": 1.0}, 0.9, {"contact": "BAD"}, config)


def test_action_config_validation_and_yaml(tmp_path):
    with pytest.raises(ValueError, match="min_probability must lie in"):
        ActionConfig(min_probability=1.5)
    with pytest.raises(ValueError, match="unknown level"):
        ActionConfig(untrusted_levels=("FATAL",))
    with pytest.raises(ValueError, match="must not contain OK"):
        ActionConfig(untrusted_levels=("OK",))
    path = tmp_path / "action.yaml"
    path.write_text("action:\n  min_probability: 0.3\n  untrusted_levels: [WARN, ERROR]\n")
    config = ActionConfig.load(path, section="action")
    assert config.min_probability == 0.3 and config.untrusted_levels == ("WARN", "ERROR")
    path.write_text("action:\n  min_probabilty: 0.3\n")
    with pytest.raises(ValueError, match="unknown key.*min_probabilty"):
        ActionConfig.load(path, section="action")


def test_shipped_config_file_loads_and_its_model_exists():
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    config = ActionConfig.load(root / "config" / "action.yaml", section="action")
    recognizer = ActionRecognizer.from_config(config)
    assert recognizer.model.class_names == PRIMITIVE_LABELS


def test_window_is_causal_and_streaming_equals_offline_with_gaps(hand_model, pair):
    temporal = TemporalSpec(lags=(0, 2), recent_max=3, max_hold=1)
    recognizer = ActionRecognizer(hand_model(temporal))
    frames = [(0, pair("N", "GC")), (1, pair("N", "GC")), (4, pair("T", "S")), (5, pair("T", "S")),
              (9, pair("N", "S"))]
    offline = recognizer.model.probabilities(encode_sequence(frames, temporal))
    for row, (frame_index, estimates) in zip(offline, frames):
        result = recognizer.update(frame_index, estimates)
        np.testing.assert_allclose(result.probabilities, row)
    # causal: the result at frame 1 does not change when later frames differ
    other = ActionRecognizer(hand_model(temporal))
    other.update(0, pair("N", "GC"))
    np.testing.assert_allclose(other.update(1, pair("N", "GC")).probabilities, offline[1])


def test_frame_order_and_reset(hand_model, pair):
    recognizer = ActionRecognizer(hand_model())
    recognizer.update(5, pair("T", "S"))
    with pytest.raises(FrameOrderError, match="frame 5 arrived after frame 5"):
        recognizer.update(5, pair("T", "S"))
    with pytest.raises(FrameOrderError):
        recognizer.update(3, pair("T", "S"))
    assert recognizer.last_frame == 5
    recognizer.reset()
    assert recognizer.last_frame is None
    assert recognizer.update(0, pair("N", "GC")).primitive == "approach"


def test_far_ahead_frames_are_refused_and_old_ones_restart_by_the_stream_order_policy(hand_model, pair):
    from predrel_ros.core.stream_order import RESTART_AFTER

    recognizer = ActionRecognizer(hand_model())
    recognizer.update(10, pair("T", "S"))
    with pytest.raises(FrameOrderError, match="ahead"):
        recognizer.update(2**63, pair("T", "S"))
    assert recognizer.update(11, pair("T", "S")).frame_index == 11
    for frame in range(RESTART_AFTER - 1):
        with pytest.raises(FrameOrderError):
            recognizer.update(frame, pair("T", "S"))
    assert recognizer.update(RESTART_AFTER - 1, pair("N", "GC")).primitive == "approach"
    assert recognizer.last_frame == RESTART_AFTER - 1


def test_masking_at_inference_removes_the_evidence(hand_model, pair):
    recognizer = ActionRecognizer(hand_model(), masked=["contact"])
    assert recognizer.update(0, pair("T", "S")).primitive == "idle"
