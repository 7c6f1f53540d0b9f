"""ActionEstimate decoding: an estimate that contradicts itself (the fuzzer's `teleport 5.00
trusted`) is refused; every estimate the encoder builds passes."""
import pytest
from ros_testing import require_ros

require_ros()

from predrel_ros.core.frame import PRIMITIVE_LABELS  # noqa: E402
from predrel_ros.ros.messages.actions import (  # noqa: E402
    action_to_msg,
    check_action_estimate,
    ground_truth_action_to_msg,
)

pytestmark = pytest.mark.ros


def test_encoded_estimates_pass():
    check_action_estimate(action_to_msg(3, ["grasp", "idle"], [0.7, 0.3], trusted=False, reason="low trust"))
    check_action_estimate(ground_truth_action_to_msg("insert", 4))


@pytest.mark.parametrize("change, match", [
    ({"primitive": "teleport", "probability": 5.0}, "is not the most probable class"),
    ({"probabilities": [5.0] + [0.0] * (len(PRIMITIVE_LABELS) - 1)}, "must lie in \\[0, 1\\]"),
    ({"probabilities": [0.5] + [0.0] * (len(PRIMITIVE_LABELS) - 1)}, "sum to 0.5000, not 1"),
    ({"probabilities": [float("nan")] * len(PRIMITIVE_LABELS)}, "must lie in \\[0, 1\\]"),
    ({"class_names": []}, "0 class names"),
])
def test_contradicting_estimates_are_refused(change, match):
    msg = ground_truth_action_to_msg(PRIMITIVE_LABELS[0], 1)
    for name, value in change.items():
        setattr(msg, name, value)
    with pytest.raises(ValueError, match=match):
        check_action_estimate(msg)
