import pytest

from predrel_ros.predicates.estimate import EVIDENCE_FACTORS, PredicateEstimate


def test_estimate_fills_group_and_code():
    estimate = PredicateEstimate("static", 4, 7, "Sup", confidence=0.5)
    assert estimate.group == "static"
    assert estimate.code == 2
    assert estimate.key == ("static", 4, 7)
    assert set(estimate.evidence) == set(EVIDENCE_FACTORS)
    assert PredicateEstimate("contact", 1, 2, "UNK").code == -1


@pytest.mark.parametrize("kwargs, message", [
    ({"value": "In"}, "has no value"),
    ({"confidence": 1.2}, "confidence must lie"),
    ({"group": "static"}, "belongs to group"),
    ({"evidence": {"det": 1.0}}, "evidence lacks"),
])
def test_invalid_estimates_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        PredicateEstimate(**({"name": "contact", "subject": 1, "object": 2, "value": "T"} | kwargs))
