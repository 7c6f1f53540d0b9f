import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from predrel_ros.predicates import rules
from predrel_ros.predicates.config import ContactConfig, DynamicConfig, StaticConfig, Threshold
from predrel_ros.predicates.rules import (
    AB,
    AR,
    BE,
    FMT,
    GC,
    HT,
    IN,
    MA,
    MT,
    NONE,
    SUP,
    UNK,
    DynamicMeasurements,
    N,
    S,
    StaticMeasurements,
    T,
)


def test_margins_of_tests_and_chains():
    theta = Threshold(3.0, 2.0)
    assert rules.at_most(2.0, theta) == (True, 0.5)
    assert rules.above(4.0, theta) == (True, 0.5)
    assert rules.at_least(3.0, theta) == (True, 0.0)
    # a failing conjunction is as sure as its surest failing part; a passing one as its weakest part
    assert rules.conjunction((True, 0.2), (False, 0.9), (False, 0.4)) == (False, 0.9)
    assert rules.conjunction((True, 0.2), (True, 0.7)) == (True, 0.2)
    # a label after failed tests is only as sure as the least sure decision on the way
    assert rules.decide([(1, lambda: (False, 0.3)), (2, None), (3, lambda: (True, 0.8))], 0) == (3, 0.3)
    assert rules.decide([(1, lambda: (False, 0.6))], 0) == (0, 0.6)
    # tests after the first passing one are not evaluated
    assert rules.decide([(1, lambda: (True, 0.9)), (2, lambda: 1 / 0)], 0) == (1, 0.9)


def test_contact_rule_with_depth():
    config = ContactConfig()
    assert rules.contact_rule(1.5, [], config) == (T, pytest.approx(0.5))
    gap = config.depth_gap
    assert rules.contact_rule(1.5, [(0.14, gap)], config) == (N, pytest.approx(1.0))     # |0.14-0.06|/0.04 capped
    assert rules.contact_rule(1.5, [(0.05, gap)], config) == (T, pytest.approx(0.25))    # depth margin 0.01/0.04
    assert rules.contact_rule(9.0, [(0.0, gap)], config) == (N, 1.0)
    boundary = config.boundary_depth_gap_m                                              # 0.01 m, eta 0.01
    assert rules.contact_rule(1.5, [(0.02, boundary)], config) == (N, pytest.approx(1.0))


def test_contact_rule_needs_every_depth_test():
    config = ContactConfig()
    boundary, proximity = config.boundary_depth_gap_m, config.boundary_proximity_m   # 1 cm, eta 1 cm / 3 cm, eta 5 mm
    # the gap passes, the proximity fails: no contact (margin of the failing test, 0.0025 / 0.005)
    assert rules.contact_rule(1.5, [(0.0, boundary), (0.0325, proximity)], config) == (N, pytest.approx(0.5))
    # both pass: the weakest margin (the gap's 0.002 / 0.01)
    assert rules.contact_rule(1.5, [(0.008, boundary), (0.01, proximity)], config) == (T, pytest.approx(0.2))


def static(**fields):
    base = dict(inside_fraction=0.0, bottom_within=False, contact=(False, 1.0), support_fraction=0.0,
                vertical_offset=0.0, horizontal_overlap=0.0, centroid_distance=5.0)
    return StaticMeasurements(**(base | fields))


ALL = ("In", "Sup", "Ab", "Be", "Ar")


@pytest.mark.parametrize("fields, allowed, expected", [
    ({"inside_fraction": 0.9, "bottom_within": True}, ALL, (IN, 1.0)),
    ({"inside_fraction": 0.9, "bottom_within": True}, ("Sup", "Ab", "Be", "Ar"), (NONE, 1.0)),  # In not allowed
    ({"inside_fraction": 0.9, "bottom_within": False, "contact": (True, 1.0), "support_fraction": 0.6},
     ALL, (SUP, 1.0)),
    ({"contact": (True, 0.5), "support_fraction": 0.6}, ALL, (SUP, 0.5)),
    # Ab with offset 0.8 (margin 0.5) after In (margin 1) and Sup (margin 1 from the failing contact)
    ({"vertical_offset": 0.8, "horizontal_overlap": 1.0}, ALL, (AB, pytest.approx(0.5))),
    ({"vertical_offset": -1.5, "horizontal_overlap": 0.5}, ALL, (BE, 1.0)),
    ({"vertical_offset": 1.5, "horizontal_overlap": 0.0, "centroid_distance": 0.8}, ALL, (AR, 1.0)),
    ({"centroid_distance": 1.3}, ALL, (NONE, pytest.approx(1 / 3))),
])
def test_static_rule_priority(fields, allowed, expected):
    assert rules.static_rule(static(**fields), allowed, StaticConfig()) == expected


def static_3d(i, j, inside_fraction=0.0, bottom_within=False):
    """StaticMeasurements3D of one row from the extents ((lateral, depth, height) low, high) of i and j."""
    corners = [np.array([corner], float) for corner in (*i, *j)]
    return rules.StaticMeasurements3D.of(np.array([inside_fraction]), np.array([bottom_within]), *corners)


CUBE_ON_TABLE = ((0.0, 0.0, 0.0), (0.05, 0.05, 0.05))
TABLE_TOP = ((-9.0, -9.0, 0.0), (9.0, 9.0, 0.0))


@pytest.mark.parametrize("i, j, fields, allowed, expected", [
    (CUBE_ON_TABLE, TABLE_TOP, {}, ALL, SUP),
    (((0.0, 0.0, 0.004), (0.05, 0.05, 0.05)), TABLE_TOP, {}, ALL, SUP),              # 4 mm: within support_gap_m
    (((0.0, 0.0, 0.04), (0.05, 0.05, 0.09)), TABLE_TOP, {}, ALL, AB),                # lifted 4 cm
    (((0.0, 0.0, 0.04), (0.05, 0.05, 0.09)), CUBE_ON_TABLE, {}, ALL, SUP),           # on the cube
    (((0.0, 0.0, 0.07), (0.05, 0.05, 0.12)), CUBE_ON_TABLE, {}, ALL, AB),
    (((0.0, 0.0, 0.07), (0.05, 0.05, 0.12)), CUBE_ON_TABLE, {}, ("Ab", "Be", "Ar"), AB),
    (CUBE_ON_TABLE, ((0.0, 0.0, 0.07), (0.05, 0.05, 0.12)), {}, ALL, BE),
    # under a cube stacked on it, whose lowest visible point is 6 mm over its top: Be (below_clearance_m
    # 5 mm), where the cube over it is not Ab (above_clearance_m 1 cm: hidden fingers) but Sup
    (CUBE_ON_TABLE, ((0.0, 0.0, 0.056), (0.05, 0.05, 0.106)), {}, ("Ab", "Be", "Ar"), BE),
    (((0.0, 0.0, 0.056), (0.05, 0.05, 0.106)), CUBE_ON_TABLE, {}, ALL, SUP),
    (CUBE_ON_TABLE, ((0.0, 0.0, 0.053), (0.05, 0.05, 0.103)), {}, ("Ab", "Be", "Ar"), AR),   # 3 mm: not clear
    (((0.065, 0.0, 0.07), (0.1, 0.05, 0.12)), CUBE_ON_TABLE, {}, ALL, AR),           # 1.5 cm aside: not over it
    (((0.0, 0.065, 0.07), (0.05, 0.1, 0.12)), CUBE_ON_TABLE, {}, ALL, AB),           # 1.5 cm behind: hidden side
    (((0.14, 0.0, 0.0), (0.19, 0.05, 0.05)), CUBE_ON_TABLE, {}, ALL, AR),            # 9 cm apart
    (((0.16, 0.0, 0.0), (0.21, 0.05, 0.05)), CUBE_ON_TABLE, {}, ALL, NONE),          # 11 cm apart
    (CUBE_ON_TABLE, CUBE_ON_TABLE, {"inside_fraction": 0.9, "bottom_within": True}, ALL, IN),
])
def test_static_rule_in_3d(i, j, fields, allowed, expected):
    flags = {name: np.array([name in allowed]) for name in rules.STATIC_RELATIONS}
    codes, margins = rules.static_rules_3d(static_3d(i, j, **fields), flags, StaticConfig())
    assert codes[0] == expected
    assert 0.0 <= margins[0] <= 1.0


def test_the_3d_margin_is_the_distance_to_the_nearest_decision():
    # 4 cm over the table: Sup failed by 2.8 cm (margin 1), Ab passed by 3 cm (eta 5 mm: margin 1)
    flags = {name: np.array([True]) for name in rules.STATIC_RELATIONS}
    lifted = ((0.0, 0.0, 0.04), (0.05, 0.05, 0.09))
    assert rules.static_rules_3d(static_3d(lifted, TABLE_TOP), flags, StaticConfig())[1][0] == 1.0
    # 1.5 cm over the table: Sup fails by 3 mm of its 12 mm (eta 6 mm: 0.5), Ab passes by 5 mm (eta 5 mm: 1)
    low = ((0.0, 0.0, 0.015), (0.05, 0.05, 0.065))
    codes, margins = rules.static_rules_3d(static_3d(low, TABLE_TOP), flags, StaticConfig())
    assert codes[0] == AB and margins[0] == pytest.approx(0.5)


def dynamic(**fields):
    base = dict(samples=5, speed_i=0.0, speed_j=0.0, early_speed_i=0.0, early_speed_j=0.0, late_speed_i=0.0,
                late_speed_j=0.0, relative_speed=0.0, distance_rate=0.0, contact_fraction=0.0)
    return DynamicMeasurements(**(base | fields))


@pytest.mark.parametrize("fields, expected", [
    ({"samples": 2}, UNK),
    ({}, S),
    ({"early_speed_i": 3.0, "early_speed_j": 3.0, "speed_i": 1.0, "speed_j": 1.0}, HT),
    ({"speed_i": 3.0, "speed_j": 3.2, "relative_speed": 0.2}, MT),
    ({"speed_i": 3.0, "contact_fraction": 0.6, "distance_rate": -3.0}, FMT),
    ({"speed_i": 3.0, "contact_fraction": 0.2, "distance_rate": -3.0}, GC),
    ({"speed_i": 3.0, "distance_rate": 2.0}, MA),
    ({"speed_i": 3.0, "speed_j": 3.0, "relative_speed": 5.0, "distance_rate": 0.1}, S),
])
def test_dynamic_rule_decisions(fields, expected):
    assert rules.dynamic_rule(dynamic(**fields), DynamicConfig())[0] == expected


def test_kleene_logic_and_derived_rules():
    assert rules.kleene_and((T, 0.4), (N, 0.7), (UNK, 0.0)) == (N, 0.7)
    assert rules.kleene_and((T, 0.4), (UNK, 0.0)) == (UNK, 0.0)
    assert rules.kleene_and((T, 0.4), (T, 0.9)) == (T, 0.4)
    assert rules.kleene_or((N, 0.4), (T, 0.2), (T, 0.6)) == (T, 0.6)
    assert rules.kleene_or() == (N, 1.0)
    assert rules.onset_rule(SUP, (IN, 0.7), IN) == (T, 0.7)
    assert rules.onset_rule(IN, (IN, 0.7), IN) == (N, 0.7)
    assert rules.onset_rule(None, (IN, 0.7), IN) == (N, 0.7)
    assert rules.onset_rule(SUP, (UNK, 0.0), IN)[0] == UNK
    codes, margins = rules.onset_rules(np.array([SUP, IN, rules.NOTHING_KNOWN, SUP]), np.array([IN, IN, IN, UNK]),
                                       np.array([0.7, 0.6, 0.5, 0.4]), IN)
    assert codes.tolist() == [T, N, N, UNK] and margins.tolist() == [0.7, 0.6, 0.5, 0.0]
    assert rules.active_hand_rule([(N, 1.0)], [(GC, 0.4)]) == (T, 0.4)
    assert rules.active_hand_rule([(N, 1.0)], [(S, 0.4)]) == (N, 0.4)


def _dynamic_reference(m: DynamicMeasurements, config: DynamicConfig) -> tuple[int, float]:
    """The dynamic rule as the priority chain of `rules.decide` (how it was written before the rows)."""
    if m.samples < config.min_frames:
        return UNK, 0.0
    speed, rate = config.moving_speed, config.distance_rate
    moving_i, moving_j = rules.above(m.speed_i, speed), rules.above(m.speed_j, speed)
    return rules.decide([
        (HT, lambda: rules.conjunction(rules.above(m.early_speed_i, speed), rules.above(m.early_speed_j, speed),
                                       rules.negation(rules.above(m.late_speed_i, speed)),
                                       rules.negation(rules.above(m.late_speed_j, speed)))),
        (S, lambda: rules.conjunction(rules.negation(moving_i), rules.negation(moving_j))),
        (MT, lambda: rules.conjunction(moving_i, moving_j, rules.at_most(m.relative_speed, config.relative_speed))),
        (FMT, lambda: rules.conjunction((moving_i[0] != moving_j[0], min(moving_i[1], moving_j[1])),
                                        (m.contact_fraction >= config.fmt_contact_fraction, 1.0))),
        (GC, lambda: (m.distance_rate < -rate.value, rate.margin(-m.distance_rate))),
        (MA, lambda: rules.above(m.distance_rate, rate)),
    ], S)


_speeds = st.floats(0.0, 4.0) | st.sampled_from([0.5, 0.2, 0.8])         # on and around the thresholds
_rates = st.floats(-3.0, 3.0) | st.sampled_from([0.7, -0.7, 0.0])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.fixed_dictionaries({
    "samples": st.integers(0, 5), "speed_i": _speeds, "speed_j": _speeds, "early_speed_i": _speeds,
    "early_speed_j": _speeds, "late_speed_i": _speeds, "late_speed_j": _speeds, "relative_speed": _speeds,
    "distance_rate": _rates, "contact_fraction": st.sampled_from([0.0, 0.2, 0.5, 0.6, 1.0])}), min_size=1, max_size=12))
def test_dynamic_rules_of_rows_are_the_priority_chain_of_each_row(rows):
    config = DynamicConfig()
    arrays = DynamicMeasurements(**{name: np.array([row[name] for row in rows]) for name in rows[0]})
    codes, margins = rules.dynamic_rules(arrays, config)
    for row, code, margin in zip(rows, codes.tolist(), margins.tolist()):
        assert (code, margin) == _dynamic_reference(dynamic(**row), config)
        assert rules.dynamic_rule(dynamic(**row), config) == (code, margin)


def _static_reference(m: StaticMeasurements, allowed: tuple[str, ...], config: StaticConfig) -> tuple[int, float]:
    """The static rule as the priority chain of `rules.decide` over scalar tests (before the rows)."""
    def at_least(x, threshold):
        return x >= threshold.value, threshold.margin(x)
    overlap = at_least(m.horizontal_overlap, config.horizontal_overlap)
    chain = [
        (IN, lambda: rules.conjunction(at_least(m.inside_fraction, config.inside_fraction), (m.bottom_within, 1.0))),
        (SUP, lambda: rules.conjunction(m.contact, at_least(m.support_fraction, config.support_fraction))),
        (AB, lambda: rules.conjunction(at_least(m.vertical_offset, config.above_offset), overlap)),
        (BE, lambda: rules.conjunction(at_least(-m.vertical_offset, config.above_offset), overlap)),
        (AR, lambda: rules.at_most(m.centroid_distance, config.around_distance)),
    ]
    return rules.decide([(code, test if name in allowed else None)
                         for (code, test), name in zip(chain, rules.STATIC_RELATIONS)], NONE)


_fractions = st.floats(0.0, 1.0) | st.sampled_from([0.0, 0.5, 0.6, 0.8, 1.0])   # on and around the thresholds
_offsets = st.floats(-3.0, 3.0) | st.sampled_from([0.0, 0.3, -0.3, 0.5, -0.5])


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.fixed_dictionaries({
    "inside_fraction": _fractions, "bottom_within": st.booleans(),
    "contact": st.tuples(st.booleans(), st.floats(0.0, 1.0)), "support_fraction": _fractions,
    "vertical_offset": _offsets, "horizontal_overlap": _fractions, "centroid_distance": st.floats(0.0, 3.0)}),
    st.lists(st.sampled_from(ALL), unique=True)), min_size=1, max_size=12))
def test_static_rules_of_rows_are_the_priority_chain_of_each_row(rows):
    config = StaticConfig()
    fields = [fields for fields, _ in rows]
    arrays = StaticMeasurements(**{name: np.array([row[name] for row in fields]) for name in fields[0]
                                   if name != "contact"},
                                contact=(np.array([row["contact"][0] for row in fields]),
                                         np.array([row["contact"][1] for row in fields])))
    flags = {name: np.array([name in allowed for _, allowed in rows]) for name in ALL}
    codes, margins = rules.static_rules(arrays, flags, config)
    for (row, allowed), code, margin in zip(rows, codes.tolist(), margins.tolist()):
        assert (code, margin) == _static_reference(StaticMeasurements(**row), tuple(allowed), config)
