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


def test_encode_all_is_encode_of_each_pair_and_names_the_unknown_one():
    pairs = [(name, label) for name in v.PREDICATES for label in v.values_of(name) + ("UNK",)]
    names, labels = zip(*pairs)
    assert v.encode_all(names, labels) == [v.encode(name, label) for name, label in pairs]
    with pytest.raises(ValueError, match="has no value 'sideways'"):
        v.encode_all(["contact", "contact"], ["T", "sideways"])
