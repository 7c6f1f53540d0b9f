"""The predicate-state encoding: hand-checked frame vectors, pair kinds, masking, temporal window."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from predrel_ros.action.encoding import (
    FRAME_SLOTS,
    HAND,
    HAND_OBJECT,
    OBJECT_CONTAINER,
    OBJECT_OBJECT,
    OBJECT_SURFACE,
    TemporalSpec,
    TemporalWindow,
    encode_frame,
    encode_sequence,
    expand_masked,
    feature_names,
    feature_predicates,
    pair_kinds,
)
from predrel_ros.core.entities import CONTAINER, MANIPULATED_OBJECT, RIGHT_HAND, SURFACE, Entity
from predrel_ros.predicates import PredicateExtractor
from predrel_ros.predicates.estimate import NO_OBJECT, PredicateEstimate

SLOT = {slot: i for i, slot in enumerate(FRAME_SLOTS)}


def est(name, subject, obj, value, confidence=1.0):
    return PredicateEstimate(name, subject, obj, value, confidence)


def hand_object(hand, obj, contact="N", static="Ar", dynamic="S", grasp="N", release="N", c=1.0):
    return [est("contact", hand, obj, contact, c), est("static", hand, obj, static, c),
            est("dynamic", hand, obj, dynamic, c), est("grasp", hand, obj, grasp, c),
            est("release", hand, obj, release, c)]


def test_frame_has_70_slots_in_a_fixed_order():
    assert len(FRAME_SLOTS) == 70
    assert FRAME_SLOTS[0] == (HAND, "active_hand", "N") and FRAME_SLOTS[1] == (HAND, "active_hand", "T")
    assert FRAME_SLOTS[2] == (HAND_OBJECT, "contact", "N")
    assert len(set(FRAME_SLOTS)) == 70


def test_hand_checked_vector_max_over_pairs_of_confidence_times_indicator():
    # hand 1 touches object 2 (c 0.8) and approaches object 3 (c 0.6); object 3 is UNK contact
    estimates = (hand_object(1, 2, contact="T", dynamic="MT", grasp="T", c=0.8)
                 + hand_object(1, 3, contact="UNK", dynamic="GC", c=0.6)
                 + [est("active_hand", 1, NO_OBJECT, "T", 0.9)])
    vector = encode_frame(estimates)
    expected = np.zeros(70)
    expected[SLOT[(HAND, "active_hand", "T")]] = 0.9
    expected[SLOT[(HAND_OBJECT, "contact", "T")]] = 0.8       # the UNK contact of (1, 3) adds nothing
    expected[SLOT[(HAND_OBJECT, "static", "Ar")]] = 0.8       # max(0.8, 0.6)
    expected[SLOT[(HAND_OBJECT, "dynamic", "MT")]] = 0.8
    expected[SLOT[(HAND_OBJECT, "dynamic", "GC")]] = 0.6
    expected[SLOT[(HAND_OBJECT, "grasp", "T")]] = 0.8
    expected[SLOT[(HAND_OBJECT, "grasp", "N")]] = 0.6
    expected[SLOT[(HAND_OBJECT, "release", "N")]] = 0.8
    np.testing.assert_allclose(vector, expected)


def test_no_confidence_variant_uses_indicators():
    estimates = hand_object(1, 2, contact="T", c=0.3) + [est("active_hand", 1, NO_OBJECT, "UNK", 0.0)]
    vector = encode_frame(estimates, confidence_weighted=False)
    assert vector[SLOT[(HAND_OBJECT, "contact", "T")]] == 1.0
    assert vector[SLOT[(HAND, "active_hand", "T")]] == 0.0 and vector[SLOT[(HAND, "active_hand", "N")]] == 0.0
    assert vector.sum() == 5.0   # contact T, static Ar, dynamic S, grasp N, release N


def test_all_unknown_frame_and_empty_frame_both_encode_as_zeros():
    unknown = hand_object(1, 2, "UNK", "UNK", "UNK", "UNK", "UNK", c=0.1)
    assert not encode_frame(unknown).any()
    assert not encode_frame([]).any()


def test_masking_a_group_or_a_predicate_sets_its_slots_to_unknown_and_keeps_the_pair_kinds():
    estimates = hand_object(1, 2, contact="T", dynamic="MT", grasp="T", c=0.8)
    full = encode_frame(estimates)
    no_contact = encode_frame(estimates, masked=expand_masked(["contact"]))
    no_derived = encode_frame(estimates, masked=expand_masked(["derived"]))
    contact_slots = [i for i, slot in enumerate(FRAME_SLOTS) if slot[1] == "contact"]
    assert not no_contact[contact_slots].any()
    others = [i for i in range(70) if i not in contact_slots]
    np.testing.assert_array_equal(no_contact[others], full[others])
    # grasp and release masked: the pair is still recognised as hand-object from their presence
    assert no_derived[SLOT[(HAND_OBJECT, "dynamic", "MT")]] == 0.8
    assert no_derived[SLOT[(HAND_OBJECT, "grasp", "T")]] == 0.0


def test_expand_masked_accepts_groups_and_predicates_and_refuses_unknown_names():
    assert expand_masked(["derived"]) == {"grasp", "release", "active_hand", "containment_event", "support_event"}
    assert expand_masked(["contact", "grasp"]) == {"contact", "grasp"}
    with pytest.raises(ValueError, match="cannot mask 'touch'"):
        expand_masked(["touch"])


def test_pair_kinds_from_the_structure_of_hand_built_estimates():
    estimates = (hand_object(1, 2)
                 + [est("contact", 2, 5, "N"), est("static", 2, 5, "Ar"), est("dynamic", 2, 5, "S"),
                    est("containment_event", 2, 5, "N"), est("support_event", 2, 5, "N")]
                 + [est("contact", 2, 4, "T"), est("static", 2, 4, "Sup"), est("dynamic", 2, 4, "S"),
                    est("support_event", 2, 4, "N")]
                 + [est("contact", 2, 3, "T"), est("static", 2, 3, "Sup"), est("static", 3, 2, "Be"),
                    est("dynamic", 2, 3, "S"), est("support_event", 2, 3, "T"), est("support_event", 3, 2, "N")]
                 + [est("active_hand", 1, NO_OBJECT, "T")])
    assert pair_kinds(estimates) == {(1, 2): HAND_OBJECT, (2, 5): OBJECT_CONTAINER, (2, 4): OBJECT_SURFACE,
                                     (2, 3): OBJECT_OBJECT, (1, NO_OBJECT): HAND}


def test_pair_kinds_of_real_extractor_output_match_the_entity_roles():
    height, width = 240, 320

    def box(track_id, role, x, y, w, h):
        mask = np.zeros((height, width), bool)
        mask[y:y + h, x:x + w] = True
        return Entity(id=track_id, label=role, role=role, box=[x, y, x + w - 1, y + h - 1], mask=mask)

    entities = [box(1, RIGHT_HAND, 100, 60, 30, 30), box(2, MANIPULATED_OBJECT, 100, 150, 20, 20),
                box(3, MANIPULATED_OBJECT, 200, 150, 20, 20), box(4, SURFACE, 0, 170, 320, 70),
                box(5, CONTAINER, 20, 120, 60, 50)]
    extractor = PredicateExtractor()
    for frame_index in range(3):
        estimates = extractor.update(frame_index, entities)
    kinds = pair_kinds(estimates)
    assert kinds[(1, 2)] == kinds[(1, 3)] == kinds[(1, 5)] == HAND_OBJECT
    assert kinds[(2, 5)] == kinds[(3, 5)] == OBJECT_CONTAINER
    assert kinds[(2, 4)] == kinds[(3, 4)] == kinds[(4, 5)] == OBJECT_SURFACE
    assert kinds[(2, 3)] == OBJECT_OBJECT
    assert kinds[(1, NO_OBJECT)] == HAND


def test_feature_names_and_predicates_follow_the_blocks():
    temporal = TemporalSpec(lags=(0, 3), recent_max=5, max_hold=1)
    names = feature_names(temporal)
    assert len(names) == 210 and temporal.blocks == ("lag0", "lag3", "max5")
    assert names[0] == "hand.active_hand=N@lag0" and names[70] == "hand.active_hand=N@lag3"
    assert names[-1].endswith("@max5")
    assert feature_predicates(temporal)[2] == "contact"


def test_temporal_spec_validation():
    with pytest.raises(ValueError, match="lags must start at 0"):
        TemporalSpec(lags=(1, 2))
    with pytest.raises(ValueError, match="lags must start at 0 and increase"):
        TemporalSpec(lags=(0, 3, 3))
    with pytest.raises(ValueError, match="recent_max"):
        TemporalSpec(recent_max=1)
    with pytest.raises(ValueError, match="max_hold"):
        TemporalSpec(max_hold=-1)


def unit(index: int) -> np.ndarray:
    vector = np.zeros(70)
    vector[index] = 1.0 + index
    return vector


def test_temporal_window_stacks_lags_and_the_trailing_max():
    window = TemporalWindow(TemporalSpec(lags=(0, 2), recent_max=3, max_hold=0))
    first = window.push(10, unit(0))
    np.testing.assert_array_equal(first[:70], unit(0))
    assert not first[70:140].any()                       # frame 8 was never received
    np.testing.assert_array_equal(first[140:], unit(0))
    window.push(11, unit(1))
    features = window.push(12, unit(2))
    np.testing.assert_array_equal(features[:70], unit(2))
    np.testing.assert_array_equal(features[70:140], unit(0))      # lag 2 -> frame 10
    np.testing.assert_array_equal(features[140:], unit(0) + unit(1) + unit(2))   # max of frames 10..12


def test_a_gap_is_held_for_max_hold_frames_then_reads_unknown():
    temporal = TemporalSpec(lags=(0, 2), recent_max=0, max_hold=1)
    window = TemporalWindow(temporal)
    window.push(0, unit(0))
    held = window.push(3, unit(3))         # frames 1, 2 dropped: lag 2 -> frame 1, held from frame 0
    np.testing.assert_array_equal(held[70:], unit(0))
    window = TemporalWindow(temporal)
    window.push(0, unit(0))
    gone = window.push(4, unit(4))         # lag 2 -> frame 2, frame 0 is 2 > max_hold older
    assert not gone[70:].any()


def test_trailing_max_uses_received_frames_only_and_old_frames_leave_the_window():
    window = TemporalWindow(TemporalSpec(lags=(0,), recent_max=3, max_hold=0))
    window.push(0, unit(0))
    features = window.push(5, unit(5))
    np.testing.assert_array_equal(features[70:], unit(5))
    assert window.push(6, unit(6)) is not None and len(window._frames) <= 1 + window.temporal.horizon


def test_window_refuses_an_older_frame():
    window = TemporalWindow(TemporalSpec())
    window.push(5, unit(0))
    with pytest.raises(ValueError, match="frame 5 arrived after frame 5"):
        window.push(5, unit(0))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=4), min_size=1, max_size=30),
       st.integers(min_value=0, max_value=2**31 - 1))
def test_sequence_encoding_equals_frame_by_frame_window_and_stays_in_unit_range(steps, seed):
    rng = np.random.default_rng(seed)
    frames, index = [], 0
    for step in steps:
        index += step
        contact = str(rng.choice(["T", "N", "UNK"]))
        frames.append((index, hand_object(1, 2, contact=contact, c=float(rng.uniform(0.2, 1.0)))))
    temporal = TemporalSpec(lags=(0, 2, 5), recent_max=4, max_hold=2)
    matrix = encode_sequence(frames, temporal)
    window = TemporalWindow(temporal)
    for row, (frame_index, estimates) in zip(matrix, frames):
        np.testing.assert_array_equal(row, window.push(frame_index, encode_frame(estimates)))
    assert matrix.shape == (len(frames), 70 * 4)
    assert matrix.min() >= 0.0 and matrix.max() <= 1.0
