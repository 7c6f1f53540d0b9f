"""Scenario tests: short hand-built entity sequences and the predicate values the paper's rules give.

Frames are 320 x 240 (reference factor 800 / 400 = 2: one frame pixel is two reference pixels).
Masks are rectangles; a container's mask has a hole where an object inside hides part of it, as a
visible-pixel (modal) segmentation would.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from predrel_ros.core.entities import CONTAINER, LEFT_HAND, MANIPULATED_OBJECT, RIGHT_HAND, SURFACE, Entity
from predrel_ros.core.frame import CameraIntrinsics
from predrel_ros.predicates import FrameOrderError, PredicateConfig, PredicateExtractor
from predrel_ros.predicates.estimate import EVIDENCE_FACTORS, NO_OBJECT

HEIGHT, WIDTH = 240, 320
HAND, OBJ, CUBE, TABLE, BOWL, OTHER_HAND = 1, 2, 3, 4, 5, 6


def rect(track_id: int, role: str, x: int, y: int, w: int, h: int, *, holes=(), shape=(HEIGHT, WIDTH),
         **fields) -> Entity:
    """Entity whose mask is [x, x+w) x [y, y+h) minus the `holes` rectangles (x, y, w, h)."""
    mask = np.zeros(shape, bool)
    mask[y:y + h, x:x + w] = True
    for hx, hy, hw, hh in holes:
        mask[hy:hy + hh, hx:hx + hw] = False
    return Entity(id=track_id, label=role, role=role, box=[x, y, x + w - 1, y + h - 1], mask=mask, **fields)


def table() -> Entity:
    return rect(TABLE, SURFACE, 0, 200, 320, 40)


def run(frames, config=None, image_size=None):
    """Feed (frame_index, entities); returns ({frame: {key: value}}, {frame: {key: estimate}})."""
    extractor = PredicateExtractor(config)
    values, estimates = {}, {}
    for frame_index, entities in frames:
        out = extractor.update(frame_index, entities, image_size)
        values[frame_index] = {e.key: e.value for e in out}
        estimates[frame_index] = {e.key: e for e in out}
    return values, estimates


# --------------------------------------------------------------------------------------- contact

def test_touching_hand_and_object_are_in_contact():
    # hand's right edge at x = 119, object's left edge at x = 120: 4-adjacent pixels, Delta = 0
    values, estimates = run([(0, [rect(HAND, RIGHT_HAND, 100, 50, 20, 20),
                                  rect(OBJ, MANIPULATED_OBJECT, 120, 50, 20, 20)])])
    assert values[0][("contact", HAND, OBJ)] == "T"
    contact = estimates[0][("contact", HAND, OBJ)]
    assert contact.group == "contact"
    assert list(contact.evidence) == list(EVIDENCE_FACTORS)
    assert contact.evidence["sp"] == 1.0          # |0 - 3| / 3
    assert contact.evidence["det"] == 1.0 and contact.evidence["tmp"] == 1.0


@pytest.mark.parametrize("gap, expected, sp", [
    (1, "T", 1 / 3),     # 1 free pixel = 2 reference px: |2 - 3| / 3
    (2, "N", 1 / 3),     # 4 reference px
    (4, "N", 1.0),       # 8 reference px: >= theta + eta, decided by the rectangles alone
])
def test_contact_threshold_and_spatial_margin(gap, expected, sp):
    hand = rect(HAND, RIGHT_HAND, 100, 50, 20, 20)
    obj = rect(OBJ, MANIPULATED_OBJECT, 120 + gap, 50, 20, 20)
    _, estimates = run([(0, [hand, obj])])
    contact = estimates[0][("contact", HAND, OBJ)]
    assert contact.value == expected
    assert contact.evidence["sp"] == pytest.approx(sp, abs=0.02)


def test_apart_entities_have_no_contact_and_no_static_relation():
    values, _ = run([(0, [rect(HAND, RIGHT_HAND, 10, 10, 20, 20), rect(OBJ, MANIPULATED_OBJECT, 250, 150, 20, 20)])])
    assert values[0][("contact", HAND, OBJ)] == "N"
    assert values[0][("static", HAND, OBJ)] == "none"


def test_depth_gap_vetoes_image_contact():
    hand = rect(HAND, RIGHT_HAND, 100, 50, 20, 20, point3d=[0.0, 0.0, 0.50])
    near = rect(OBJ, MANIPULATED_OBJECT, 120, 50, 20, 20, point3d=[0.0, 0.0, 0.53])
    far = rect(OBJ, MANIPULATED_OBJECT, 120, 50, 20, 20, point3d=[0.0, 0.0, 0.90])
    assert run([(0, [hand, near])])[0][0][("contact", HAND, OBJ)] == "T"
    assert run([(0, [hand, far])])[0][0][("contact", HAND, OBJ)] == "N"


# ---------------------------------------------------------------------------------------- static

def test_object_on_the_table_is_supported_and_above():
    obj = rect(OBJ, MANIPULATED_OBJECT, 100, 180, 20, 20)       # bottom row 199, table from row 200
    values, _ = run([(0, [obj, table()])])
    assert values[0][("contact", OBJ, TABLE)] == "T"
    assert values[0][("static", OBJ, TABLE)] == "Sup"          # Sup outranks Ab


def test_cube_on_top_of_cube_both_orientations():
    top = rect(OBJ, MANIPULATED_OBJECT, 100, 140, 20, 20)
    bottom = rect(CUBE, MANIPULATED_OBJECT, 98, 160, 24, 40)
    values, _ = run([(0, [top, bottom, table()])])
    assert values[0][("contact", OBJ, CUBE)] == "T"
    assert values[0][("static", OBJ, CUBE)] == "Sup"
    assert values[0][("static", CUBE, OBJ)] == "Be"
    assert values[0][("static", CUBE, TABLE)] == "Sup"
    assert values[0][("static", OBJ, TABLE)] == "Ab"            # lifted above the table by the cube
    assert values[0][("contact", OBJ, TABLE)] == "N"


def test_side_by_side_objects_are_around_each_other():
    a = rect(OBJ, MANIPULATED_OBJECT, 100, 180, 20, 20)
    b = rect(CUBE, MANIPULATED_OBJECT, 125, 180, 20, 20)
    values, _ = run([(0, [a, b])])
    assert values[0][("static", OBJ, CUBE)] == "Ar"
    assert values[0][("static", CUBE, OBJ)] == "Ar"


def test_static_relations_in_3d_follow_the_height_above_the_fitted_table():
    """With depth and intrinsics, a block whose visible surface floats 5 cm over the table is above
    it, one at 3 mm rests on it, though the image rule sees the same masks; support_gap_m None keeps
    the image rule."""
    from tabletop_depth import K, region, tabletop_depth

    from predrel_ros.core.frame import CameraIntrinsics
    camera = CameraIntrinsics(WIDTH, HEIGHT, fx=K[0, 0], fy=K[1, 1], cx=K[0, 2], cy=K[1, 2])
    block = region(140, 100, 180, 140)
    entities = [rect(OBJ, MANIPULATED_OBJECT, 140, 100, 40, 40),
                Entity(id=TABLE, label=SURFACE, role=SURFACE, box=[0, 0, WIDTH - 1, HEIGHT - 1], mask=~block)]
    values = {}
    for height in (0.05, 0.003):
        depth, _ = tabletop_depth({"block": (block, height)})
        out = PredicateExtractor().update(0, entities, depth_m=depth, camera=camera)
        values[height] = {e.key: e.value for e in out}[("static", OBJ, TABLE)]
    assert values == {0.05: "Ab", 0.003: "Sup"}
    image_rule = PredicateConfig().replace("static.support_gap_m", None)
    depth, _ = tabletop_depth({"block": (block, 0.05)})
    with_depth = PredicateExtractor(image_rule).update(0, entities, depth_m=depth, camera=camera)
    # the image rule: the masks meet but the 5 cm depth gap breaks the contact (no Sup); the block's
    # centre is not above the table's in the image (no Ab); their centroids are near (Ar)
    assert [e.value for e in with_depth if e.name == "static"] == ["Ar"]


def test_object_inside_the_bowl_and_the_containment_event():
    bowl_box = (200, 150, 60, 50)

    def bowl(hole=None):
        return rect(BOWL, CONTAINER, *bowl_box, holes=[hole] if hole else ())

    def obj(y):
        return rect(OBJ, MANIPULATED_OBJECT, 220, y, 20, 20)

    frames = [
        (0, [obj(100), bowl()]),                          # above the bowl (rows 100-119, bowl from 150)
        (1, [obj(130), bowl()]),                          # rows 130-149: touching the rim from above
        (2, [obj(165), bowl((220, 165, 20, 20))]),        # inside: the bowl's pixels around it
        (3, [obj(165), bowl((220, 165, 20, 20))]),
    ]
    values, _ = run(frames)
    assert values[0][("static", OBJ, BOWL)] == "Ab"
    assert values[1][("static", OBJ, BOWL)] == "Sup"
    assert values[2][("static", OBJ, BOWL)] == "In"
    assert [values[t][("containment_event", OBJ, BOWL)] for t in range(4)] == ["N", "N", "T", "N"]
    assert [values[t][("support_event", OBJ, BOWL)] for t in range(4)] == ["N", "T", "N", "N"]


# --------------------------------------------------------------------------------------- dynamic

def test_approaching_then_moving_apart():
    obj = rect(OBJ, MANIPULATED_OBJECT, 200, 100, 20, 20)
    approach = [(t, [rect(HAND, RIGHT_HAND, 100 + 5 * t, 100, 20, 20), obj]) for t in range(5)]
    values, _ = run(approach)
    assert values[0][("dynamic", HAND, OBJ)] == "UNK"          # one sample: too few for motion
    assert values[1][("dynamic", HAND, OBJ)] == "UNK"
    assert [values[t][("dynamic", HAND, OBJ)] for t in (2, 3, 4)] == ["GC"] * 3
    assert values[4][("active_hand", HAND, NO_OBJECT)] == "T"   # approaching an object
    retreat = [(t, [rect(HAND, RIGHT_HAND, 100 - 5 * t, 100, 20, 20), obj]) for t in range(5)]
    assert run(retreat)[0][4][("dynamic", HAND, OBJ)] == "MA"


def test_moving_together_is_a_grasp_and_halting_together():
    def frame(t, dx):
        return [rect(HAND, RIGHT_HAND, 100 + dx, 80, 20, 20), rect(OBJ, MANIPULATED_OBJECT, 100 + dx, 100, 20, 20)]
    moving = [(t, frame(t, 4 * t)) for t in range(6)]
    halted = [(t, frame(t, 4 * 5)) for t in range(6, 12)]
    values, _ = run(moving + halted)
    assert values[5][("contact", HAND, OBJ)] == "T"
    assert values[5][("dynamic", HAND, OBJ)] == "MT"
    # a hold begins once contact has stayed T for 4 frames from its first motion (MT from frame 2, the
    # third sample): frames 2, 3, 4, 5
    assert [values[t][("grasp", HAND, OBJ)] for t in range(6)] == ["N", "N", "N", "N", "N", "T"]
    # frames 4, 5 moving; 6.. still: at frame 7 the window starts moving and ends still
    assert values[7][("dynamic", HAND, OBJ)] == "HT"
    assert values[11][("dynamic", HAND, OBJ)] == "S"
    assert values[11][("grasp", HAND, OBJ)] == "T"              # a hand holding still keeps its grasp
    assert values[11][("active_hand", HAND, NO_OBJECT)] == "T"  # still touching


def test_hand_sliding_along_a_fixed_object_is_fixed_moving_together():
    box = rect(CUBE, MANIPULATED_OBJECT, 60, 120, 200, 40)
    frames = [(t, [rect(HAND, RIGHT_HAND, 80 + 3 * t, 100, 20, 20), box]) for t in range(6)]
    values, _ = run(frames)
    assert values[5][("contact", HAND, CUBE)] == "T"
    assert values[5][("dynamic", HAND, CUBE)] == "FMT"
    assert values[5][("grasp", HAND, CUBE)] == "T"           # a hold: 4 frames of contact, FMT seen


def test_lifted_in_a_hand_then_placed_and_released():
    frames = []
    for t in range(6):       # lifting: hand on top of the object, both rising 4 px per frame
        y = 150 - 4 * t
        frames.append((t, [rect(HAND, RIGHT_HAND, 100, y - 20, 20, 20), rect(OBJ, MANIPULATED_OBJECT, 100, y, 20, 20),
                           table()]))
    for t in range(6, 12):   # the object stays where it is; the hand rises away from it
        y_obj = 150 - 4 * 5
        y_hand = y_obj - 20 - 4 * (t - 5)
        frames.append((t, [rect(HAND, RIGHT_HAND, 100, y_hand, 20, 20),
                           rect(OBJ, MANIPULATED_OBJECT, 100, y_obj, 20, 20),
                           table()]))
    values, _ = run(frames)
    lifted = values[5]
    assert lifted[("grasp", HAND, OBJ)] == "T"
    assert lifted[("contact", OBJ, TABLE)] == "N"
    assert lifted[("static", OBJ, TABLE)] == "Ab"
    assert lifted[("dynamic", OBJ, TABLE)] == "MA"
    # frame 6: the hand is 4 px (8 reference px) above the object: contact breaks, motion decouples
    assert values[6][("contact", HAND, OBJ)] == "N"
    assert values[6][("release", HAND, OBJ)] == "T"
    assert [values[t][("release", HAND, OBJ)] for t in range(12) if t != 6] == ["N"] * 11
    assert values[6][("grasp", HAND, OBJ)] == "N"


# ---------------------------------------------------------------------------------- UNK evidence

def test_invisible_and_missing_entities_give_unk():
    hand = rect(HAND, RIGHT_HAND, 100, 50, 20, 20)
    obj = rect(OBJ, MANIPULATED_OBJECT, 120, 50, 20, 20)
    hidden = rect(OBJ, MANIPULATED_OBJECT, 120, 50, 20, 20, visibility=0.0)
    config = PredicateConfig(track_memory=2)
    values, estimates = run([(0, [hand, obj]), (1, [hand, hidden]), (2, [hand]), (3, [hand]), (4, [hand])], config)
    for t in (1, 2, 3):
        for key in (("contact", HAND, OBJ), ("static", HAND, OBJ), ("dynamic", HAND, OBJ), ("grasp", HAND, OBJ),
                    ("release", HAND, OBJ)):
            assert values[t][key] == "UNK", (t, key)
    assert estimates[1][("contact", HAND, OBJ)].confidence == 0.0
    assert estimates[1][("contact", HAND, OBJ)].evidence["vis"] == 0.0
    assert values[1][("active_hand", HAND, NO_OBJECT)] == "UNK"   # its only object: unknown contact
    # last seen at frame 1: track_memory 2 keeps its pairs through frame 3; forgotten at frame 4
    assert ("contact", HAND, OBJ) not in values[4]
    assert values[4][("active_hand", HAND, NO_OBJECT)] == "N"


def test_confidence_floor_turns_weak_evidence_into_unk():
    hand = rect(HAND, RIGHT_HAND, 100, 50, 20, 20, score=0.05, mask_quality=0.05, visibility=0.06)
    obj = rect(OBJ, MANIPULATED_OBJECT, 120, 50, 20, 20)
    _, estimates = run([(0, [hand, obj])])
    contact = estimates[0][("contact", HAND, OBJ)]
    assert contact.evidence["det"] == 0.05
    # contact weights det 1, seg 2, vis 1.5 of 8: c = exp((3 ln 0.05 + 1.5 ln 0.06) / 8) = 0.192
    assert contact.confidence == pytest.approx(0.192, abs=1e-3)
    assert contact.value == "UNK"
    _, estimates = run([(0, [hand, obj])], PredicateConfig.from_dict({"confidence": {"floor": 0.0}}))
    assert estimates[0][("contact", HAND, OBJ)].value == "T"


def test_empty_mask_is_missing_evidence():
    hand = rect(HAND, RIGHT_HAND, 100, 50, 20, 20)
    empty = Entity(id=OBJ, label="cube", role=MANIPULATED_OBJECT, box=[120, 50, 139, 69],
                   mask=np.zeros((HEIGHT, WIDTH), bool))
    values, _ = run([(0, [hand, empty])])
    assert values[0][("contact", HAND, OBJ)] == "UNK"


# -------------------------------------------------------------------------------- state and time

def test_frame_gaps_are_missing_evidence_not_motion():
    obj = rect(OBJ, MANIPULATED_OBJECT, 200, 100, 20, 20)
    # the hand moves 5 px per frame index; frames 2 and 3 were dropped
    frames = [(t, [rect(HAND, RIGHT_HAND, 100 + 5 * t, 100, 20, 20), obj]) for t in (0, 1, 4)]
    values, estimates = run(frames)
    assert values[4][("dynamic", HAND, OBJ)] == "GC"        # 3 samples in the window 0..4
    dynamic = estimates[4][("dynamic", HAND, OBJ)]
    assert dynamic.evidence["trk"] == pytest.approx(3 / 5)  # seen on 3 of the window's 5 frames
    assert dynamic.evidence["tmp"] == pytest.approx(1 / 3)  # UNK, UNK, GC over the frames received


def test_frames_out_of_order_are_refused_without_changing_state():
    extractor = PredicateExtractor()
    entities = [rect(HAND, RIGHT_HAND, 100, 50, 20, 20), rect(OBJ, MANIPULATED_OBJECT, 120, 50, 20, 20)]
    extractor.update(3, entities)
    with pytest.raises(FrameOrderError, match="frame 2 arrived after frame 3"):
        extractor.update(2, entities)
    with pytest.raises(FrameOrderError):
        extractor.update(3, entities)
    assert extractor.last_frame == 3 and extractor.frames_processed == 1
    assert extractor.update(4, entities)


def test_the_stream_order_policy_refuses_far_ahead_frames_and_restarts_after_old_ones():
    from predrel_ros.core.stream_order import RESTART_AFTER, StreamOrder

    entities = [rect(HAND, RIGHT_HAND, 100, 50, 20, 20), rect(OBJ, MANIPULATED_OBJECT, 120, 50, 20, 20)]
    extractor = PredicateExtractor()
    extractor.update(10, entities)
    with pytest.raises(FrameOrderError, match="ahead"):
        extractor.update(2**64 - 1, entities)                     # never becomes the last frame
    assert extractor.update(11, entities) and extractor.frames_processed == 2
    for frame in range(RESTART_AFTER - 1):
        with pytest.raises(FrameOrderError):
            extractor.update(frame, entities)
    assert extractor.update(RESTART_AFTER - 1, entities)          # the restart_after-th old frame: a new sequence
    assert extractor.last_frame == RESTART_AFTER - 1 and extractor.frames_processed == 1
    strict = PredicateExtractor(order=StreamOrder(restart_after=0))
    strict.update(10, entities)
    for frame in list(range(10)) * 2:
        with pytest.raises(FrameOrderError):
            strict.update(frame, entities)


def test_a_first_frame_indexed_beyond_int64_gives_the_predicates_of_frame_zero():
    """Frame indices are Python ints (a message's uint64 frame_index, and a far first frame is legal):
    the window's cells must not be computed in int64 or floats."""
    entities = [rect(HAND, RIGHT_HAND, 100, 50, 20, 20), rect(OBJ, MANIPULATED_OBJECT, 122, 50, 20, 20)]
    def seen(frame):
        estimates = PredicateExtractor().update(frame, entities)
        return [(e.name, e.subject, e.object, e.value, e.confidence) for e in estimates]
    assert seen(2**64 - 1) == seen(0)


# ------------------------------------------------------------------------------ hostile input

def test_pairs_exist_only_for_tracks_seen_together():
    hand, obj = rect(HAND, RIGHT_HAND, 100, 50, 20, 20), rect(OBJ, MANIPULATED_OBJECT, 120, 50, 20, 20)
    ghost = rect(CUBE, MANIPULATED_OBJECT, 200, 50, 20, 20)          # a false detection after OBJ vanished
    config = PredicateConfig(track_memory=3)
    values, _ = run([(0, [hand, obj]), (1, [hand, obj]), (2, [hand, ghost]), (3, [hand, ghost]), (4, [hand]),
                     (5, [hand])], config)
    assert values[2][("contact", HAND, OBJ)] == "UNK"                 # seen together at frame 1: remembered
    assert values[2][("contact", HAND, CUBE)] == "N"
    for t in (2, 3, 4, 5):
        assert not any({OBJ, CUBE} == set(key[1:]) for key in values[t])   # never in one frame: no pair
    assert ("contact", HAND, OBJ) in values[4]                        # last together at 1, memory 3
    assert ("contact", HAND, OBJ) not in values[5]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sets(st.integers(1, 5)), min_size=1, max_size=12), st.integers(1, 4))
def test_every_pair_was_seen_together_within_the_track_memory(presence, memory):
    roles = {1: RIGHT_HAND, 2: MANIPULATED_OBJECT, 3: MANIPULATED_OBJECT, 4: SURFACE, 5: CONTAINER}
    frames = [(t, [rect(i, roles[i], 30 + 50 * i, 60, 20, 20) for i in sorted(ids)]) for t, ids in enumerate(presence)]
    values, _ = run(frames, PredicateConfig(track_memory=memory))
    for t, keys in values.items():
        for name, subject, obj in keys:
            if obj == NO_OBJECT:
                continue
            together = [u for u in range(max(0, t - memory), t + 1) if {subject, obj} <= presence[u]]
            assert together, (t, name, subject, obj)


def test_entities_beyond_the_bound_are_dropped_lowest_score_first_and_reported():
    objects = [rect(10 + i, MANIPULATED_OBJECT, 8 * i, 100, 6, 6, score=0.5 + 0.01 * i) for i in range(30)]
    weak = rect(HAND, RIGHT_HAND, 100, 50, 20, 20, score=0.4)
    extractor = PredicateExtractor(PredicateConfig(max_entities=28))
    out = extractor.update(0, [weak, *objects])
    assert extractor.dropped_entities == (HAND, 10, 11)               # the three lowest scores
    ids = {i for e in out for i in (e.subject, e.object)} - {NO_OBJECT}
    assert ids == {e.id for e in objects[2:]}
    assert len({(e.subject, e.object) for e in out if e.name == "contact"}) == 28 * 27 // 2
    extractor.update(1, objects[:3])
    assert extractor.dropped_entities == ()
    with pytest.raises(ValueError, match="max_entities"):
        PredicateConfig(max_entities=0)


def test_bad_entities_are_refused():
    extractor = PredicateExtractor()
    hand = rect(HAND, RIGHT_HAND, 100, 50, 20, 20)
    with pytest.raises(ValueError, match="two entities with track id 1"):
        extractor.update(0, [hand, hand])
    with pytest.raises(ValueError, match="mask shape"):
        extractor.update(0, [hand, rect(OBJ, MANIPULATED_OBJECT, 1, 1, 5, 5, shape=(100, 100))])
    with pytest.raises(TypeError, match="Entity"):
        extractor.update(0, [{"id": 1}])
    with pytest.raises(ValueError, match=r"image_size \(640, 480\) \(width, height\) does not match"):
        extractor.update(0, [hand], image_size=(640, 480))
    assert extractor.last_frame is None      # nothing was processed


def test_thresholds_scale_with_image_size():
    small = [(t, [rect(HAND, RIGHT_HAND, 100 + 2 * t, 50, 20, 20),
                  rect(OBJ, MANIPULATED_OBJECT, 121 + 2 * t, 50, 20, 20),
                  rect(CUBE, MANIPULATED_OBJECT, 200, 180, 20, 20), table()]) for t in range(6)]
    big_shape = (2 * HEIGHT, 2 * WIDTH)
    big = [(t, [rect(e.id, e.role, int(2 * e.box[0]), int(2 * e.box[1]), int(2 * (e.box[2] - e.box[0] + 1)),
                     int(2 * (e.box[3] - e.box[1] + 1)), shape=big_shape) for e in entities])
           for t, entities in small]
    values_small, estimates_small = run(small)
    values_big, _ = run(big)
    # 1 free pixel at 320x240 = 2 free pixels at 640x480 = 2 reference px (to within one pixel)
    assert values_small == values_big
    assert values_small[5][("contact", HAND, OBJ)] == "T"
    assert values_small[5][("dynamic", HAND, OBJ)] == "MT"


def test_pairs_orientation_and_distractors():
    entities = [rect(7, "distractor", 10, 10, 10, 10), rect(OBJ, MANIPULATED_OBJECT, 100, 180, 20, 20), table(),
                rect(OTHER_HAND, LEFT_HAND, 150, 50, 20, 20), rect(BOWL, CONTAINER, 250, 150, 40, 50)]
    values, _ = run([(t, entities) for t in range(3)])
    assert values[0][("active_hand", OTHER_HAND, NO_OBJECT)] == "UNK"   # motion not known yet
    keys = set(values[2])
    assert not any(7 in key[1:] for key in keys)               # distractors take part in nothing
    assert ("contact", OTHER_HAND, OBJ) in keys                # hand first although its id is higher
    assert ("contact", OBJ, TABLE) in keys and ("contact", OBJ, BOWL) in keys
    assert ("static", BOWL, TABLE) in keys                     # a container stands on the surface
    assert ("static", TABLE, OBJ) not in keys
    assert values[2][("active_hand", OTHER_HAND, NO_OBJECT)] == "N"


def test_output_is_deterministic_and_reset_forgets():
    frames = [(t, [rect(HAND, RIGHT_HAND, 100 + 3 * t, 80, 20, 20),
                   rect(OBJ, MANIPULATED_OBJECT, 100 + 3 * t, 100, 20, 20),
                   table()]) for t in range(4)]
    extractor = PredicateExtractor()
    first = [[(e.key, e.value, e.confidence) for e in extractor.update(t, ents)] for t, ents in frames]
    extractor.reset()
    second = [[(e.key, e.value, e.confidence) for e in extractor.update(t, ents)] for t, ents in frames]
    assert first == second


def test_a_track_id_reused_for_another_role_starts_fresh():
    hand = rect(HAND, RIGHT_HAND, 100, 50, 20, 20)
    frames = [(t, [hand, rect(OBJ, MANIPULATED_OBJECT, 121, 50, 20, 20)]) for t in range(4)]
    frames.append((4, [hand, rect(OBJ, CONTAINER, 121, 50, 20, 20)]))
    values, estimates = run(frames)
    assert values[3][("dynamic", HAND, OBJ)] == "S"
    assert values[4][("dynamic", HAND, OBJ)] == "UNK"                  # no history for the new entity
    assert estimates[4][("contact", HAND, OBJ)].evidence["tmp"] == 1.0  # its stream restarted


def test_a_held_object_half_out_of_the_hand_box_stays_in_contact():
    """Contact of an object in a hand's box is judged by its separation from the hand (1.5 cm here: the
    fingers in front); once in contact, it stays so judged while hold_exit_fraction of it (0.6 here)
    lies in the box, where the boundary gap (also 1.5 cm, over boundary_depth_gap_m) would end it."""
    camera = CameraIntrinsics(WIDTH, HEIGHT, fx=300.0, fy=300.0, cx=159.5, cy=119.5)
    hand = rect(HAND, RIGHT_HAND, 100, 100, 40, 40, holes=[(104, 104, 36, 32)])     # a U open to the right
    frames = []
    for t in range(9):
        x = 104 if t < 6 else 128
        obj = rect(OBJ, MANIPULATED_OBJECT, x, 104, 20, 20)                         # under the top finger
        depth = np.full((HEIGHT, WIDTH), 2.0, np.float32)
        depth[obj.mask] = 0.515
        depth[hand.mask] = 0.50
        frames.append((t, [hand, obj], depth))

    def contacts(exit_fraction):
        config = PredicateConfig()
        config.contact.hold_exit_fraction = exit_fraction
        config.contact.still_hand_speed_share = None        # the object jumps 24 px beside a still hand
        extractor = PredicateExtractor(config)
        out = [extractor.update(t, entities, depth_m=depth, camera=camera) for t, entities, depth in frames]
        return [next(e.value for e in estimates if e.key == ("contact", HAND, OBJ)) for estimates in out]

    assert contacts(0.5) == ["T"] * 9
    assert contacts(None) == ["T"] * 6 + ["N"] * 3


def test_a_hand_in_contact_stays_so_up_to_the_exit_gap():
    """Hysteresis of the boundary depth gap for a hand: 1 cm to begin a contact, boundary_exit_gap_m
    (1.25 cm) to keep it; beyond, it ends, and 1.1 cm does not begin it again."""
    camera = CameraIntrinsics(WIDTH, HEIGHT, fx=300.0, fy=300.0, cx=159.5, cy=119.5)
    hand = rect(HAND, RIGHT_HAND, 100, 100, 20, 20)
    obj = rect(OBJ, MANIPULATED_OBJECT, 120, 100, 20, 20)
    gaps = [0.008, 0.008, 0.011, 0.02, 0.011]

    def contacts(exit_gap):
        config = PredicateConfig()
        config.contact.boundary_exit_gap_m = exit_gap
        extractor = PredicateExtractor(config)
        out = []
        for t, gap in enumerate(gaps):
            depth = np.full((HEIGHT, WIDTH), 2.0, np.float32)
            depth[hand.mask] = 0.5
            depth[obj.mask] = 0.5 + gap
            estimates = extractor.update(t, [hand, obj], depth_m=depth, camera=camera)
            out.append(next(e.value for e in estimates if e.key == ("contact", HAND, OBJ)))
        return out

    assert contacts(0.0125) == ["T", "T", "T", "N", "N"]
    assert contacts(None) == ["T", "T", "N", "N", "N"]


def held_object_contacts(config, hand_x, creep_from=None, drop_px=None):
    """contact(hand, object) frame by frame for an object in a hand's U (its left edge at hand_x[t]),
    0.5 m from the camera, the fingers 1.5 cm in front; from frame creep_from on the object recedes
    0.8 mm a frame (the fingers opening); drop_px[t]: how far it has dropped in the U on frame t."""
    camera = CameraIntrinsics(WIDTH, HEIGHT, fx=300.0, fy=300.0, cx=159.5, cy=119.5)
    extractor = PredicateExtractor(config)
    out = []
    for t, x in enumerate(hand_x):
        hand = rect(HAND, RIGHT_HAND, x, 100, 40, 40, holes=[(x + 4, 104, 36, 32)])
        obj = rect(OBJ, MANIPULATED_OBJECT, x + 4, 104 + (drop_px[t] if drop_px else 0), 20, 20)
        depth = np.full((HEIGHT, WIDTH), 2.0, np.float32)
        depth[obj.mask] = 0.515 + (0.0008 * max(0, t - creep_from) if creep_from is not None else 0.0)
        depth[hand.mask] = 0.50
        estimates = extractor.update(t, [hand, obj], depth_m=depth, camera=camera)
        out.append(next(e.value for e in estimates if e.key == ("contact", HAND, OBJ)))
    return out


def test_a_held_object_whose_separation_creeps_up_ends_its_contact_only_while_the_pair_stands_still():
    """A hand opening slowly around what it holds (seed 1313 ep0000_unstack): the separation rises by
    0.8 mm a frame and the median level follows it; standing still, contact ends once the rise since
    it began exceeds hold_separation_creep_m (2.5 mm: on the 4th rising frame); carried at 15 cm/s,
    the same rise is the level's to judge (and it follows)."""
    def contacts(step_px, creep_m):
        config = PredicateConfig()
        config.contact.hold_separation_creep_m = creep_m
        return held_object_contacts(config, [100 + step_px * t for t in range(12)], creep_from=5)

    assert contacts(0, 0.0025) == ["T"] * 9 + ["N"] * 3           # rises 0.8, 1.6, 2.4, then 3.2 mm at 9
    assert contacts(0, None) == ["T"] * 12
    assert contacts(3, 0.0025) == ["T"] * 12


def test_a_hand_standing_beside_what_it_touched_ends_the_contact_once_the_boundary_proximity_creeps_up():
    """Fingers opening beside an object with neither moving (seed 1503 ep0004_pick_and_place: the
    proximity rose 8, 11, 13, 16, 20 mm while the gap stayed within the exit gap): contact ends once the
    rise since it began exceeds boundary_proximity_creep_m (1 cm: on the 5th rising frame, 12 mm), not
    while the pair moves, and not without the bound."""
    camera = CameraIntrinsics(WIDTH, HEIGHT, fx=300.0, fy=300.0, cx=159.5, cy=119.5)

    def contacts(step_px, creep_m):
        config = PredicateConfig()
        config.contact.boundary_proximity_creep_m = creep_m
        extractor = PredicateExtractor(config)
        out = []
        for t in range(10):
            dx = step_px * t
            hand = rect(HAND, RIGHT_HAND, 100 + dx, 100, 20, 20)
            obj = rect(OBJ, MANIPULATED_OBJECT, 120 + dx, 100, 20, 20)
            depth = np.full((HEIGHT, WIDTH), 2.0, np.float32)
            depth[hand.mask] = depth[obj.mask] = 0.5
            # the object's 5 columns next to the hand recede 0, 3, 6, 9, 12 mm from frame 5 (the object
            # itself stands still: its position is the median of its depths)
            depth[100:120, 120 + dx:125 + dx] = 0.5 + 0.003 * max(0, t - 5)
            estimates = extractor.update(t, [hand, obj], depth_m=depth, camera=camera)
            out.append(next(e.value for e in estimates if e.key == ("contact", HAND, OBJ)))
        return out

    assert contacts(0, 0.01) == ["T"] * 9 + ["N"]               # 12 mm > 10: the 12.5 mm exit gap alone keeps it
    assert contacts(0, None) == ["T"] * 10
    assert contacts(3, 0.01) == ["T"] * 10                      # moving together at ~3 px a frame


def test_a_hand_holding_what_it_carried_and_put_down_stays_in_contact_until_its_fingers_open():
    """Seed 1523 ep0026_pick_and_hold: a carry held at a 13-14 mm gap (over the 12.5 mm exit gap) ends
    on the table, the hand holding on for 10 frames. The contact keeps the level of the gap where the
    fingers held it (+ hold_separation_rise_m) until, standing still, the gap creeps by more than the
    put-down creep (1.5 mm: the fingers opening, 2 mm a frame from frame 20, judged on the second
    rising frame, creep_min_steps); without the level (hold_separation_rise_m null) it ended once the
    carry stopped."""
    camera = CameraIntrinsics(WIDTH, HEIGHT, fx=300.0, fy=300.0, cx=159.5, cy=119.5)

    def contacts(rise):
        config = PredicateConfig()
        config.contact.hold_separation_rise_m = rise
        extractor = PredicateExtractor(config)
        out = []
        for t in range(26):
            dy = 2 * min(max(0, t - 3), 8)                  # carried down 2 px a frame, on the table from 11
            hand = rect(HAND, RIGHT_HAND, 100, 100 + dy, 20, 20)
            obj = rect(OBJ, MANIPULATED_OBJECT, 120, 100 + dy, 20, 20)
            surface = rect(TABLE, SURFACE, 0, 136, 320, 104)
            depth = np.full((HEIGHT, WIDTH), 2.0, np.float32)
            depth[surface.mask] = depth[obj.mask] = 0.514
            depth[hand.mask] = 0.5 - 0.002 * max(0, t - 19)
            estimates = extractor.update(t, [hand, obj, surface], depth_m=depth, camera=camera)
            out.append(next(e.value for e in estimates if e.key == ("contact", HAND, OBJ)))
        return out

    carried = ["N"] * 5 + ["T"] * 9                         # a carry from frame 5 (the 2 cm carried gap)
    assert contacts(PredicateConfig().contact.hold_separation_rise_m) == carried + ["T"] * 7 + ["N"] * 5
    assert contacts(None) == carried + ["N"] * 12


def test_an_object_dropping_from_a_still_hand_is_let_go():
    """Seed 1543 ep0018_stack: the fingers opened with the hand still and the cube dropped onto the stack
    (3-4 mm a frame), the separation flat: moving faster than the moving speed beside a hand whose
    window speed and steps stay under still_hand_speed_share of it, the object is not held."""
    def contacts(share):
        config = PredicateConfig()
        config.contact.still_hand_speed_share = share
        drop = [2 * min(max(0, t - 9), 5) for t in range(16)]            # 2 px (3.3 mm) a frame from 10
        return held_object_contacts(config, [100] * 16, drop_px=drop)

    let_go = contacts(0.25)
    assert let_go[:10] == ["T"] * 10 and let_go[-1] == "N"
    assert let_go.index("N") <= 12                              # within 3 frames of the drop
    assert contacts(None) == ["T"] * 16


def test_a_hand_carrying_an_object_is_in_contact_up_to_the_carried_gap():
    """A hand gripping a long object from the side (seed 1353 ep0007_handover): the boundary gap stays
    at 1.5 cm, above the 1 cm to begin a contact; once hand and object move together (2 px a frame,
    about 10 cm/s here) it is contact up to carried_gap_m (2 cm), and not while the hand slides along
    the object standing still."""
    camera = CameraIntrinsics(WIDTH, HEIGHT, fx=300.0, fy=300.0, cx=159.5, cy=119.5)

    def contacts(object_moves, carried_share=0.5):
        config = PredicateConfig()
        config.contact.carried_relative_speed = carried_share
        extractor = PredicateExtractor(config)
        out = []
        for t in range(10):
            dy = 2 * max(0, t - 3)
            hand = rect(HAND, RIGHT_HAND, 100, 100 + dy, 20, 20)
            obj = rect(OBJ, MANIPULATED_OBJECT, 120, 100 + (dy if object_moves else 0), 20, 20)
            depth = np.full((HEIGHT, WIDTH), 2.0, np.float32)
            depth[hand.mask] = 0.5
            depth[obj.mask] = 0.515
            estimates = extractor.update(t, [hand, obj], depth_m=depth, camera=camera)
            out.append(next(e.value for e in estimates if e.key == ("contact", HAND, OBJ)))
        return out

    carried = contacts(True)
    assert carried[:4] == ["N"] * 4 and carried[-4:] == ["T"] * 4
    assert contacts(True, None) == ["N"] * 10
    assert "T" not in contacts(False)


def test_a_paused_carry_ends_its_contact_once_the_separation_creeps_but_a_slowed_carry_does_not():
    """Seed 1503 ep0032_stack: a carry paused (both still) while the fingers open, the separation rising
    0.8 mm a frame: the creep ends the contact on its 4th rising frame. A carry that only slows (2/3 px,
    1.1 mm a frame: under the moving speed, over paused_carry_speed_share of it; seed 1523
    ep0031_remove turned back so) keeps it, its separation judged against the cap alone."""
    def contacts(slow_steps, share):
        config = PredicateConfig()
        config.contact.paused_carry_speed_share = share
        steps = [3 if t < 8 else slow_steps[t % 3] for t in range(24)]
        return held_object_contacts(config, [60 + sum(steps[:t + 1]) for t in range(24)], creep_from=17)

    assert contacts((0, 0, 0), 0.5) == ["T"] * 21 + ["N"] * 3       # rises 0.8, 1.6, 2.4, then 3.2 mm at 21
    assert contacts((1, 1, 0), 0.5) == ["T"] * 24
    assert contacts((1, 1, 0), 1.0) == ["T"] * 21 + ["N"] * 3
