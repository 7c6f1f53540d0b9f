import pytest
from ros_testing import require_ros

require_ros()

from predrel_ros.msg import DegradationState  # noqa: E402
from predrel_ros.ros.messages.degradations import DegradationInfo, degradation_from_msg, degradation_to_msg  # noqa: E402

pytestmark = pytest.mark.ros


def test_unset_degradation_reads_as_none():
    assert degradation_from_msg(DegradationState()) == DegradationInfo("none", 0, 0, {})


@pytest.mark.parametrize("kwargs, message", [
    ({"kind": "", "severity": 0}, "DegradationState.kind must be a kind name"),
    ({"kind": "blur", "severity": 6}, "DegradationState.severity must lie in 0..5, got 6"),
    ({"kind": "blur", "severity": 1, "seed": -1}, "DegradationState.seed must fit in uint32"),
])
def test_invalid_degradations_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        degradation_to_msg(**kwargs)


def test_degradation_with_unpaired_parameters_is_refused():
    msg = DegradationState(kind="blur", severity=2, parameter_names=["sigma", "radius"], parameter_values=[1.0])
    with pytest.raises(ValueError, match="parameter_names has 2 entries but parameter_values has 1"):
        degradation_from_msg(msg)
