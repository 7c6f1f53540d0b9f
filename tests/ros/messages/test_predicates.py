import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ros_testing import require_ros

require_ros()

from message_cases import estimates, received  # noqa: E402

from predrel_ros.predicates.estimate import PredicateEstimate  # noqa: E402
from predrel_ros.ros.messages.degradations import DegradationInfo, degradation_from_msg, degradation_to_msg  # noqa: E402
from predrel_ros.ros.messages.predicates import predicates_from_msg, predicates_to_msg  # noqa: E402

pytestmark = pytest.mark.ros


@settings(max_examples=150, deadline=None)
@given(st.lists(estimates(), max_size=12), st.integers(0, 2**40))
def test_predicate_array_round_trip(items, frame_index):
    degradation = degradation_to_msg("blur", 3, seed=7, parameters={"sigma": 2.5})
    msg = received(predicates_to_msg(items, frame_index=frame_index, source="perception",
                                                 degradation=degradation))
    for item in items:
        item.frame_index = frame_index
    assert predicates_from_msg(msg) == items
    assert [p.code for p in msg.predicates] == [item.code for item in items]
    assert degradation_from_msg(msg.degradation) == DegradationInfo(
        "blur", 3, 7, {"sigma": 2.5})


def test_predicate_whose_code_contradicts_its_value_is_refused():
    msg = predicates_to_msg([PredicateEstimate("contact", 1, 2, "T")], frame_index=0, source="x")
    msg.predicates[0].code = 0
    with pytest.raises(ValueError, match=r"predicates\[0\]: Predicate contact\(1, 2\): code 0 does not match "
                                         r"value 'T' \(code 1\)"):
        predicates_from_msg(msg)


def test_predicate_with_an_unknown_value_is_refused():
    msg = predicates_to_msg([PredicateEstimate("static", 1, 2, "In")], frame_index=0, source="x")
    msg.predicates[0].value = "Inside"
    with pytest.raises(ValueError, match="predicate 'static' has no value 'Inside'"):
        predicates_from_msg(msg)


@pytest.mark.parametrize("field, value", [("q_det", float("nan")), ("q_vis", -0.25), ("q_tmp", 1.5)])
def test_evidence_factors_outside_zero_one_are_refused(field, value):
    msg = predicates_to_msg([PredicateEstimate("contact", 1, 3, "T", confidence=0.8)], frame_index=1, source="x")
    setattr(msg.predicates[0], field, value)
    with pytest.raises(ValueError, match=f"evidence factors must lie in \\[0, 1\\], got {{'{field}'"):
        predicates_from_msg(msg)


def test_more_predicates_than_the_bound_are_refused_unread():
    from predrel_ros.ros.messages.fields import TooLarge

    msg = predicates_to_msg([PredicateEstimate("contact", 1, 3, "T")] * 5, frame_index=1, source="x")
    assert len(predicates_from_msg(msg, max_predicates=5)) == 5
    with pytest.raises(TooLarge, match="holds 5 items, more than 4"):
        predicates_from_msg(msg, max_predicates=4)
