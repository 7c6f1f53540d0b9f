from pathlib import Path

import pytest

from predrel_ros.predicates.config import PredicateConfig, Threshold

REPO = Path(__file__).resolve().parents[2]


def test_round_trip_through_dict_yaml_and_json(tmp_path):
    config = PredicateConfig().replace("contact.distance.value", 5.0).replace("window", 7)
    assert PredicateConfig.from_dict(config.to_dict()) == config
    for suffix in (".yaml", ".json"):
        assert PredicateConfig.load(config.save(tmp_path / f"predicates{suffix}")) == config


def test_shipped_config_file_is_the_default():
    assert PredicateConfig.load(REPO / "config" / "predicates.yaml", section="predicates") == PredicateConfig()


def test_partial_dicts_keep_defaults():
    config = PredicateConfig.from_dict({"contact": {"distance": {"value": 2.0, "eta": 1.0}}, "window": 9})
    assert config.contact.distance == Threshold(2.0, 1.0)
    assert config.static == PredicateConfig().static
    assert config.window == 9


@pytest.mark.parametrize("data, message", [
    ({"windw": 5}, r"predicates: unknown key\(s\) \['windw'\]"),
    ({"window": 1}, "window must be >= 2"),
    ({"window": "5"}, r"predicates.window: expected an integer"),
    ({"contact": {"distance": {"value": 3.0, "eta": 0.0}}}, r"predicates.contact.distance: eta must be a positive"),
    ({"static": {"inside_fraction": {"value": 1.5, "eta": 0.1}}}, r"predicates.static: inside_fraction.value"),
    ({"dynamic": {"min_frames": 6}}, r"min_frames \(6\) exceeds window"),
    ({"dynamic": {"fmt_contact_fraction": 0.0}}, r"predicates.dynamic: fmt_contact_fraction must lie in \(0, 1\]"),
    ({"contact": {"boundary_exit_gap_m": 0.0}}, r"predicates.contact: boundary_exit_gap_m must be > 0 m or None"),
    ({"contact": {"hold_separation_begin_m": 0.0}}, r"predicates.contact: hold_separation_begin_m must be > 0 m"),
    ({"contact": {"carried_relative_speed": -0.1}}, r"predicates.contact: carried_relative_speed must be > 0 or None"),
    ({"contact": {"carried_gap_m": 0.0}}, r"predicates.contact: carried_gap_m must be > 0 m"),
    ({"contact": {"paused_carry_speed_share": 0.0}},
     r"predicates.contact: paused_carry_speed_share must lie in \(0, 1\]"),
    ({"contact": {"creep_min_steps": 0}}, r"predicates.contact: creep_min_steps must be >= 1 frame"),
    ({"contact": {"still_hand_speed_share": 1.5}},
     r"predicates.contact: still_hand_speed_share must lie in \(0, 1\] or be None"),
    ({"contact": {"boundary_proximity_creep_m": -0.01}},
     r"predicates.contact: boundary_proximity_creep_m must be > 0 m or None"),
    ({"contact": {"hold_separation_put_down_creep_m": 0.0}},
     r"predicates.contact: hold_separation_put_down_creep_m must be > 0 m or None"),
    ({"grasp": {"still_hold_frames": 0}}, r"predicates.grasp: still_hold_frames must be >= 1 frame or None"),
    ({"contact": {"hold_exit_fraction": 0.0}}, r"predicates.contact: hold_exit_fraction must lie in \(0, 1\]"),
    ({"dynamic": {"containment": 1.5}}, r"predicates.dynamic: containment must lie in \(0, 1\] or be None"),
    ({"confidence": {"floor": 2.0}}, r"predicates.confidence: floor must lie in \[0, 1\]"),
    ({"confidence": {"weights": {"contact": {"det": 1.0}}}}, "no weights for predicate"),
    ({"pair_rules": [{"kind": "x", "subject_roles": ["hand"], "object_roles": ["surface"]}]},
     r"pair_rules\[0\]: subject_roles: unknown role"),
    ({"pair_rules": [{"kind": "x", "subject_roles": ["left_hand"], "object_roles": ["surface"],
                      "static_relations": ["On"]}]}, "unknown static relation 'On'"),
    ({"contact": {"depth_gap": None, "depth_ignored_roles": "surface"}}, "expected a list"),
    ({"static": {"support_gap_m": {"value": 0.0, "eta": 0.01}}}, "support_gap_m.value must be > 0"),
    ({"static": {"around_distance_m": {"value": -0.1, "eta": 0.01}}}, "around_distance_m.value must be > 0"),
])
def test_invalid_configs_name_the_field(data, message):
    with pytest.raises(ValueError, match=message):
        PredicateConfig.from_dict(data)


def test_depth_gap_may_be_disabled_and_fields_are_addressable():
    config = PredicateConfig.from_dict({"contact": {"depth_gap": None}})
    assert config.contact.depth_gap is None
    assert config.get("static.above_offset.value") == 0.7
    with pytest.raises(ValueError, match="no config field"):
        config.replace("contact.radius", 1.0)
    with pytest.raises(ValueError, match="no config field"):
        config.get("contact.radius")


def test_load_errors_name_the_file(tmp_path):
    with pytest.raises(ValueError, match="cannot read"):
        PredicateConfig.load(tmp_path / "missing.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("window: [1,\n")
    with pytest.raises(ValueError, match="broken.yaml: not valid YAML"):
        PredicateConfig.load(broken)
    other = tmp_path / "other.yaml"
    other.write_text("trust: {}\n")
    with pytest.raises(ValueError, match="no top-level section 'predicates'"):
        PredicateConfig.load(other, section="predicates")


def test_a_threshold_lowered_to_a_limit_keeps_its_eta_and_the_put_down_creep_falls_back_to_the_creep():
    from predrel_ros.predicates.config import ContactConfig, Threshold
    threshold = Threshold(0.03, 0.005)
    assert threshold.at_most(0.04) is threshold
    assert threshold.at_most(0.02) == Threshold(0.02, 0.005)
    assert ContactConfig().put_down_creep_m == 0.0015
    assert ContactConfig(hold_separation_put_down_creep_m=None).put_down_creep_m == 0.0025
    assert ContactConfig(hold_separation_creep_m=None).put_down_creep_m is None
