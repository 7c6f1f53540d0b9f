"""The generic dataclass <-> dict conversion of every settings object."""
from dataclasses import dataclass, field

import pytest

from predrel_ros.core.config_io import ConfigFile, config_from_dict, config_to_dict, read_data, write_data


@dataclass
class Inner:
    ratio: float = 0.5
    names: tuple[str, ...] = ("a",)


@dataclass
class Outer(ConfigFile):
    NAME = "outer"
    count: int = 1
    inner: Inner = field(default_factory=Inner)
    weights: dict[str, float] = field(default_factory=dict)
    label: str | None = None


def test_round_trip_keeps_values_and_turns_tuples_into_lists(tmp_path):
    config = Outer(count=3, inner=Inner(0.25, ("x", "y")), weights={"a": 1.0}, label="z")
    assert config_to_dict(config) == {"count": 3, "inner": {"ratio": 0.25, "names": ["x", "y"]},
                                      "weights": {"a": 1.0}, "label": "z"}
    for suffix in (".yaml", ".json"):
        assert Outer.load(config.save(tmp_path / f"c{suffix}")) == config


def test_missing_fields_keep_their_defaults_and_ints_become_floats():
    assert config_from_dict(Outer, {"inner": {"ratio": 1}}) == Outer(inner=Inner(ratio=1.0))


@pytest.mark.parametrize("data, message", [
    ({"cont": 1}, r"outer: unknown key\(s\) \['cont'\]"),
    ({"count": True}, r"outer.count: expected an integer"),
    ({"inner": {"ratio": "high"}}, r"outer.inner.ratio: expected a number"),
    ({"inner": {"names": "ab"}}, r"outer.inner.names: expected a list"),
    ({"weights": {"a": None}}, r"outer.weights.a: expected a number"),
])
def test_errors_name_the_dotted_field(data, message):
    with pytest.raises(ValueError, match=message):
        Outer.from_dict(data)


def test_read_data_names_the_file_it_cannot_parse(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [1,\n")
    with pytest.raises(ValueError, match="bad.yaml: not valid YAML"):
        read_data(bad)
    with pytest.raises(ValueError, match="cannot read"):
        read_data(tmp_path / "missing.json")
    assert read_data(write_data(tmp_path / "d.json", {"k": [1, 2]})) == {"k": [1, 2]}
