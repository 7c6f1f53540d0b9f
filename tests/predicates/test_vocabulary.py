import pytest

from predrel_ros.predicates import vocabulary as v


@pytest.mark.parametrize("name", list(v.PREDICATES))
def test_every_value_round_trips_through_its_code(name):
    for code, label in enumerate(v.values_of(name)):
        assert v.encode(name, label) == code
        assert v.decode(name, code) == label
    assert v.encode(name, "UNK") == v.UNK == -1
    assert v.decode(name, -1) == "UNK"


def test_groups_and_errors():
    assert v.group_of("grasp") == v.DERIVED
    assert v.group_of("static") == v.STATIC
    with pytest.raises(ValueError, match="unknown predicate"):
        v.group_of("touching")
    with pytest.raises(ValueError, match="has no value"):
        v.encode("contact", "In")
    with pytest.raises(ValueError, match="no value code"):
        v.decode("dynamic", 6)
    assert set(v.STATIC_PRIORITY) == set(v.STATIC_VALUES)
