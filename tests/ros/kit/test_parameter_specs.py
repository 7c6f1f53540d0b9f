"""ParameterSpec validation and ROS params-file reading, without ROS."""
import pytest
from hypothesis import given
from hypothesis import strategies as st

from predrel_ros.core.errors import UserError
from predrel_ros.ros.kit.parameter_specs import (
    ParameterSpec,
    check_unique,
    node_matches,
    read_params_file,
    resolve_values,
)


def positive_even(value):
    if value % 2:
        raise ValueError("must be even")


SPECS = (
    ParameterSpec("rate", 1.0, "playback rate", minimum=0.0, runtime=True),
    ParameterSpec("depth", 5, "queue depth", minimum=1, maximum=100),
    ParameterSpec("mode", "a", "mode", choices=("a", "b")),
    ParameterSpec("loop", False, "loop"),
    ParameterSpec("names", ["x"], "names"),
    ParameterSpec("even", 2, "an even number", check=positive_even),
)


def test_types_are_inferred_from_defaults():
    assert [spec.type for spec in SPECS] == ["float", "int", "str", "bool", "str[]", "int"]
    assert ParameterSpec("values", [], "v", type="float[]").item_type == "float"


def test_integers_are_accepted_for_floats_but_bools_are_not_integers():
    rate, depth = SPECS[0], SPECS[1]
    assert rate.validate(2) == 2.0 and isinstance(rate.validate(2), float)
    with pytest.raises(ValueError, match="parameter depth: expected int, got bool True"):
        depth.validate(True)
    with pytest.raises(ValueError, match="parameter rate: expected float, got str"):
        rate.validate("fast")


@pytest.mark.parametrize("name, value, message", [
    ("rate", -0.5, "parameter rate: -0.5 is below the minimum 0"),
    ("rate", float("nan"), "parameter rate: must be a finite number"),
    ("depth", 101, "parameter depth: 101 is above the maximum 100"),
    ("mode", "c", "parameter mode: 'c' is not one of a, b"),
    ("names", "x", "parameter names: expected a list of str"),
    ("names", ["x", 3], r"parameter names\[1\]: expected str, got int 3"),
    ("even", 3, "parameter even: must be even"),
])
def test_invalid_values_are_refused_naming_the_parameter(name, value, message):
    spec = next(spec for spec in SPECS if spec.name == name)
    with pytest.raises(ValueError, match=message):
        spec.validate(value)


def test_invalid_specs_are_refused():
    with pytest.raises(ValueError, match="description"):
        ParameterSpec("x", 1, "")
    with pytest.raises(ValueError, match="choices apply to str"):
        ParameterSpec("x", 1, "d", choices=("1",))
    with pytest.raises(ValueError, match="below the minimum"):
        ParameterSpec("x", 0, "d", minimum=1)  # the default itself must be valid
    with pytest.raises(ValueError, match="cannot infer"):
        ParameterSpec("x", [], "d")
    with pytest.raises(ValueError, match="declared twice: \\['rate'\\]"):
        check_unique(SPECS + (SPECS[0],))


def test_resolve_values_reports_every_invalid_override_at_once():
    assert resolve_values(SPECS, {"rate": 2, "mode": "b"})["rate"] == 2.0
    with pytest.raises(UserError) as error:
        resolve_values(SPECS, {"rate": -1.0, "mode": "z"})
    assert "parameter rate" in str(error.value) and "parameter mode" in str(error.value)


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_float_range_is_inclusive_and_exact(value):
    spec = ParameterSpec("p", 0.5, "p", minimum=0.0, maximum=1.0)
    if 0.0 <= value <= 1.0:
        assert spec.validate(value) == value
    else:
        with pytest.raises(ValueError):
            spec.validate(value)


@pytest.mark.parametrize("key, node, namespace, expected", [
    ("replay", "replay", "", True),
    ("replay", "replay", "clean", False),  # a key without namespace is /replay
    ("/clean/perception", "perception", "clean", True),
    ("/**", "perception", "degraded", True),
    ("/**/perception", "perception", "a/b", True),
    ("/**/perception", "perception", "", True),
    ("/*/perception", "perception", "degraded", True),
    ("/*/perception", "perception", "", False),
    ("/clean/*", "perception", "degraded", False),
])
def test_params_file_keys_match_nodes_like_rcl(key, node, namespace, expected):
    assert node_matches(key, node, namespace) is expected


def test_read_params_file_merges_matching_sections_in_order(tmp_path):
    path = tmp_path / "params.yaml"
    path.write_text("/**:\n  ros__parameters:\n    image_qos: reliable\n    rate: 1.0\n"
                    "/degraded/perception:\n  ros__parameters:\n    rate: 2.0\n    nested: {a: 1}\n"
                    "/clean/perception:\n  ros__parameters:\n    rate: 3.0\n")
    assert read_params_file(path, "perception", "degraded") == {"image_qos": "reliable", "rate": 2.0, "nested.a": 1}
    path.write_text("replay:\n  rate: 1.0\n")
    with pytest.raises(UserError, match="no ros__parameters"):
        read_params_file(path, "replay")


def test_allowed_values_in_words():
    assert [spec.allowed() for spec in SPECS[:3]] == [">= 0", "1 .. 100", "a, b"]
    assert ParameterSpec("seed", 0, "s", minimum=0, maximum=2**32 - 1).allowed() == "0 .. 4294967295"
    assert ParameterSpec("x", 0.5, "x", maximum=0.75).allowed() == "<= 0.75"
