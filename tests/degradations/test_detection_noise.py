import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from predrel_ros.core.entities import ROLES, Entity
from predrel_ros.degradations import DEFAULT_TABLE, SEVERITIES, DegradationOptions, Degrader
from predrel_ros.degradations.detection_noise import interruptions

SHAPE = (200, 240, 3)
BASE = DegradationOptions().synthetic_id_base


@st.composite
def frame_entities(draw, interior=False):
    """1..6 entities with boxes (interior: far enough from the border that jitter is never clipped)."""
    count = draw(st.integers(1, 6))
    entities = []
    for i in range(count):
        low, high = (60, 180) if interior else (0, 240)
        x1 = draw(st.floats(low, high - 10))
        y1 = draw(st.floats(low * 0.8, high * 0.8 - 10))
        w = draw(st.floats(4, min(60, high - x1)))
        h = draw(st.floats(4, min(48, high * 0.8 - y1)))
        mask = None
        if draw(st.booleans()):
            mask = np.zeros(SHAPE[:2], bool)
            mask[int(y1) + 1:int(y1 + h), int(x1) + 1:int(x1 + w)] = True
        entities.append(Entity(10 * i + 3, f"label{i}", draw(st.sampled_from(ROLES)), [x1, y1, x1 + w, y1 + h],
                               mask=mask))
    return entities


def _by_kind(output):
    kept = {e.attributes.get("original_id", e.id): e for e in output
            if e.attributes.get("detection_noise") != "false_detection"}
    false = {e.id: e for e in output if e.attributes.get("detection_noise") == "false_detection"}
    return kept, false


@settings(max_examples=40, deadline=None)
@given(frame_entities(), st.integers(0, 2**32 - 1), st.integers(0, 10**6))
def test_effects_are_nested_in_severity(entities, seed, frame_index):
    outputs = [Degrader("detection_noise", s, seed).apply_entities(entities, frame_index, SHAPE) for s in SEVERITIES]
    assert outputs[0] == entities
    ids = {e.id for e in entities}
    previous_missed, previous_false, previous_broken = set(), set(), set()
    for output in outputs[1:]:
        kept, false = _by_kind(output)
        missed = ids - set(kept)
        broken = {original for original, e in kept.items() if e.id != original}
        assert previous_missed <= missed and previous_false <= set(false)
        assert previous_broken - missed <= broken
        previous_missed, previous_false, previous_broken = missed, set(false), broken


@settings(max_examples=40, deadline=None)
@given(frame_entities(), st.integers(0, 2**32 - 1), st.integers(0, 10**6), st.integers(1, 5))
def test_boxes_stay_valid_inside_the_image_and_masks_follow_them(entities, seed, frame_index, severity):
    before = [(e.box.copy(), None if e.mask is None else e.mask.copy()) for e in entities]
    output = Degrader("detection_noise", severity, seed).apply_entities(entities, frame_index, SHAPE)
    height, width = SHAPE[:2]
    for e in output:
        x1, y1, x2, y2 = e.box
        assert 0 <= x1 < x2 <= width and 0 <= y1 < y2 <= height
        assert x2 - x1 >= 1 and y2 - y1 >= 1
        recomputed = Entity(e.id, e.label, e.role, e.box, mask=e.mask).centroid  # as Entity computes it
        np.testing.assert_allclose(e.centroid[:2], recomputed)
        if e.mask is not None:
            assert e.mask.shape == (height, width)
            ys, xs = np.nonzero(e.mask)
            if len(xs):
                assert xs.min() >= np.floor(x1) and xs.max() < np.ceil(x2)
                assert ys.min() >= np.floor(y1) and ys.max() < np.ceil(y2)
    for e, (box, mask) in zip(entities, before):  # the input is not modified
        np.testing.assert_array_equal(e.box, box)
        if mask is not None:
            np.testing.assert_array_equal(e.mask, mask)


@settings(max_examples=40, deadline=None)
@given(frame_entities(interior=True), st.integers(0, 2**32 - 1), st.integers(0, 10**6))
def test_box_displacement_grows_with_severity(entities, seed, frame_index):
    table = DEFAULT_TABLE.with_overrides({"detection_noise": {"miss_rate": [0] * 6, "false_per_frame": [0] * 6,
                                                              "track_break_rate": [0] * 6}})
    shifts = []
    for severity in SEVERITIES:
        output = Degrader("detection_noise", severity, seed, table).apply_entities(entities, frame_index, SHAPE)
        shifts.append(np.array([np.abs(o.box - e.box) for o, e in zip(output, entities)]))
    for lower, higher in zip(shifts, shifts[1:]):
        assert np.all(higher >= lower - 1e-9)


@settings(max_examples=30, deadline=None)
@given(frame_entities(), st.integers(0, 2**32 - 1), st.integers(0, 10**6))
def test_same_seed_and_frame_give_the_same_noise(entities, seed, frame_index):
    a = Degrader("detection_noise", 5, seed).apply_entities(entities, frame_index, SHAPE)
    b = Degrader("detection_noise", 5, seed).apply_entities(entities, frame_index, SHAPE)
    assert ([(e.id, e.label, e.box.tolist(), e.score) for e in a]
            == [(e.id, e.label, e.box.tolist(), e.score) for e in b])


def test_false_detections_imitate_an_entity_of_the_frame():
    entities = [Entity(1, "bowl", "container", [20, 20, 80, 70]),
                Entity(2, "left hand", "left_hand", [100, 50, 140, 90])]
    table = DEFAULT_TABLE.with_overrides({"detection_noise": {"false_per_frame": [0, 0.5, 1, 1.5, 2, 3]}})
    degrader = Degrader("detection_noise", 5, seed=8, table=table)
    false = [e for f in range(50) for e in degrader.apply_entities(entities, f, SHAPE)
             if e.attributes.get("detection_noise") == "false_detection"]
    assert len(false) == 150  # 3 per frame at the maximum rate
    by_label = {"bowl": "container", "left hand": "left_hand"}
    for e in false:
        assert by_label[e.label] == e.role and e.attributes["imitates_id"] in (1, 2)
        assert BASE <= e.id < 2 * BASE and 0.3 <= e.score <= 0.8 and e.track_quality == 0.3
    assert len({e.id for e in false}) == 150
    assert Degrader("detection_noise", 5, seed=8, table=table).apply_entities([], 3, SHAPE) == []


def test_an_interrupted_track_carries_a_new_id_then_is_re_identified():
    table = DEFAULT_TABLE.with_overrides({"detection_noise": {"miss_rate": [0] * 6, "false_per_frame": [0] * 6}})
    degrader = Degrader("detection_noise", 5, seed=2, table=table)
    entity = Entity(4, "cube", "manipulated_object", [50, 50, 90, 90], track_quality=0.9)
    span = degrader.options.track_interruption_frames
    ids, qualities = [], []
    for f in range(400):
        (out,) = degrader.apply_entities([entity], f, SHAPE)
        ids.append(out.id)
        qualities.append(out.track_quality)
        (broken_at,) = interruptions(np.array([4]), f, 0.05, 2, degrader.options)
        if broken_at is None:
            assert out.id == 4 and out.track_quality == 0.9
        else:
            assert BASE <= out.id < 2 * BASE and out.attributes["original_id"] == 4
            assert out.track_quality == pytest.approx(0.9 * (f - broken_at + 1) / span)
    breaks = [f for f in range(1, 400) if ids[f] != ids[f - 1] and ids[f] != 4]
    assert 8 <= len(breaks) <= 30  # about 400 * 0.05, minus breaks inside a running interruption
    assert ids.count(4) > 50


def test_mask_shape_must_match_the_image():
    entity = Entity(1, "cube", "manipulated_object", [0, 0, 5, 5], mask=np.ones((10, 10), bool))
    with pytest.raises(ValueError, match="does not match image_shape"):
        Degrader("detection_noise", 2).apply_entities([entity], 0, SHAPE)


def test_a_depth_in_the_centroid_is_kept_but_not_copied_to_false_detections():
    entity = Entity(1, "cube", "manipulated_object", [10, 10, 50, 50], centroid=[30, 30, 0.8])
    table = DEFAULT_TABLE.with_overrides({"detection_noise": {"miss_rate": [0] * 6,
                                                              "false_per_frame": [0, 3, 3, 3, 3, 3]}})
    kept, *false = Degrader("detection_noise", 1, seed=0, table=table).apply_entities([entity], 1, SHAPE)
    assert kept.centroid.size == 3 and kept.centroid[2] == 0.8
    assert len(false) == 3 and all(e.centroid.size == 2 and e.depth is None for e in false)
