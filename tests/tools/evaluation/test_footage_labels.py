"""Real-footage labels as reference predicates, and the pipeline's agreement with them."""
from __future__ import annotations

import json

import numpy as np
import pytest

from predrel_ros.core.entities import LEFT_HAND, MANIPULATED_OBJECT, RIGHT_HAND, SURFACE, Entity
from predrel_ros.core.errors import UserError
from predrel_ros.predicates.estimate import NO_OBJECT, PredicateEstimate, stream_key
from predrel_ros.tools.evaluation.footage_labels import LabelScore, load_footage_labels


def _hand(name, box, touched, held, visible=True, side="unsure", side_confidence="unsure"):
    return {"id": name, "visible": visible, "box": box, "in_contact_with": touched, "holding": held, "side": side,
            "side_confidence": side_confidence}


def _object(name, box, lifted, on, visible=True, role=None):
    record = {"name": name, "visible": visible, "box": box, "lifted": lifted, "on": on}
    return {**record, "role": role} if role else record


def _row(frame_index, hands, objects):
    return {"clip": "tiny", "frame_index": frame_index, "hands": hands, "objects": objects}


TABLE = _object("table", [0, 60, 200, 150], None, None, role="surface")


@pytest.fixture
def label_files(tmp_path):
    rows = [
        _row(0, [_hand("hand_R", [10, 10, 50, 50], "cup", "cup", side="right", side_confidence="medium"),
                 _hand("hand_L", [150, 0, 190, 40], "unsure", "unsure", side="left")],      # side unsure
             [_object("cup", [40, 40, 80, 80], True, None), _object("pen", [100, 100, 140, 120], False, "table"),
              _object("ghost", [0, 0, 5, 5], False, "table", visible=False), TABLE]),
        _row(6, [_hand("hand_R", [10, 10, 50, 50], None, None)],
             [_object("cup", [40, 70, 80, 100], "unsure", "unsure"),
              _object("pen", [100, 100, 140, 120], False, "table"), TABLE]),
    ]
    labels = tmp_path / "tiny.jsonl"
    labels.write_text("".join(json.dumps(row) + "\n" for row in rows))
    events = tmp_path / "events.json"
    events.write_text(json.dumps({"events": [
        {"clip": "tiny", "event": "release", "hand": "hand_R", "object": "cup", "last_frame_before": 0,
         "first_frame_after": 6},
        {"clip": "other", "event": "release", "hand": "hand_R", "object": "pen", "last_frame_before": 0,
         "first_frame_after": 6}]}))
    return labels, events


def test_labels_become_the_reference_values_they_determine(label_files):
    labels = load_footage_labels(*label_files)
    assert labels.clip == "tiny" and sorted(labels.frames) == [0, 6]
    first = labels.frames[0]
    kinds = {tuple(entity.box.astype(int)): entity.label for entity in first.entities}
    assert kinds == {(10, 10, 50, 50): "hand", (150, 0, 190, 40): "hand", (0, 60, 200, 150): "surface",
                     (40, 40, 80, 80): "object", (100, 100, 140, 120): "object"}       # the invisible ghost is left out
    hand_r, hand_l, table, cup, pen = (entity.id for entity in first.entities)
    assert first.sides == {hand_r: RIGHT_HAND} and labels.frames[6].sides == {}
    assert dict(first.values) == {
        ("contact", hand_r, cup): 1, ("contact", hand_r, pen): 0,      # hand_L's contact is unsure: none
        ("grasp", hand_r, cup): 1, ("grasp", hand_r, pen): 0,
        ("release", hand_r, cup): 0, ("release", hand_r, pen): 0,      # frame 0 is before the release's span
        ("active_hand", hand_r, NO_OBJECT): 1,
        stream_key("contact", cup, table): 0,                          # lifted
        stream_key("contact", pen, table): 1, ("static", pen, table): 2}       # lies on it: Sup
    second = labels.frames[6]
    assert [entity.id for entity in second.entities] == [hand_r, table, cup, pen]      # ids stable over the clip
    assert dict(second.values) == {
        ("contact", hand_r, cup): 0, ("contact", hand_r, pen): 0, ("grasp", hand_r, cup): 0,
        ("grasp", hand_r, pen): 0, ("release", hand_r, pen): 0,        # the cup's release lies in (0, 6]
        stream_key("contact", pen, table): 1, ("static", pen, table): 2}       # touches nothing: active_hand unknown


def test_agreement_associates_by_kind_and_counts_what_was_not_found(label_files):
    labels = load_footage_labels(*label_files)
    entities = [Entity(7, "right_hand", RIGHT_HAND, np.array([12.0, 8, 52, 49])),
                Entity(8, "cylinder", MANIPULATED_OBJECT, np.array([42.0, 38, 81, 78])),
                Entity(9, "table", SURFACE, np.array([0.0, 62, 200, 150])),
                Entity(10, "cube", MANIPULATED_OBJECT, np.array([300.0, 300, 320, 320]))]     # labelled nowhere
    estimates = [PredicateEstimate("contact", 8, 7, "T", 0.9),          # the other orientation: same stream
                 PredicateEstimate("grasp", 7, 8, "N", 0.9),
                 PredicateEstimate("release", 7, 8, "N", 0.9),
                 PredicateEstimate("active_hand", 7, NO_OBJECT, "T", 0.9),
                 PredicateEstimate("contact", 8, 9, "UNK", 0.0),
                 PredicateEstimate("contact", 7, 10, "N", 0.9)]         # no reference: left out
    # hand_L and the pen were not found: their streams disagree
    agreement = labels.agreement(0, entities, estimates)
    assert agreement.streams == {"contact": (4, 2, 1), "grasp": (2, 1, 0), "release": (2, 1, 1),
                                 "active_hand": (1, 1, 1), "static": (1, 0, 0)}
    assert agreement.by_group() == {"contact": (4, 2, 1), "derived": (5, 3, 2), "static": (1, 0, 0)}
    assert agreement.entities == {"hand": (2, 1, 0), "surface": (1, 1, 0), "object": (2, 1, 1)}   # the cube: unlabelled
    assert agreement.sides == (1, 1)                                    # hand_R found as a right hand
    left = [Entity(7, "left_hand", LEFT_HAND, np.array([12.0, 8, 52, 49]))]
    assert labels.agreement(0, left, []).sides == (1, 0)
    assert labels.agreement(3, entities, estimates) is None                        # not a labelled frame
    lost = [Entity(7, "right_hand", RIGHT_HAND, np.array([12.0, 8, 52, 49]), visibility=0.0)]
    assert labels.agreement(0, lost, estimates).by_group()["derived"] == (5, 0, 0)  # a lost track stands for nothing
    score = LabelScore()
    for frame_index in range(7):
        score.add(labels.agreement(frame_index, entities, estimates))
    counts = score.group_counts()
    assert len(counts) == 7 and counts[0] == agreement.by_group() and not any(counts[1:6])
    # frame 6: the cup moved away from the cylinder's box, so nothing but the hand is found
    assert counts[6] == {"contact": (3, 0, 0), "derived": (3, 0, 0), "static": (1, 0, 0)}
    pooled = score.pooled()
    assert pooled["labelled_frames"] == 2 and pooled["hand_sides"] == {"hands": 1, "agreement": 1.0}
    assert pooled["entities_found"]["hand"] == {"labelled": 3, "found_share": 2 / 3, "unmatched_per_frame": 0.0}
    # the cube on both labelled frames, the cylinder on frame 6 (away from the cup): 3 over 2 frames
    assert pooled["entities_found"]["object"]["unmatched_per_frame"] == 1.5
    assert pooled["predicates"]["grasp"] == {"reference_streams": 4, "found_share": 0.25, "agreement": 0.0}


def test_a_file_not_in_the_format_is_refused(tmp_path):
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"clip": "x", "frame_index": 0}\n')
    with pytest.raises(UserError, match="not a footage label file"):
        load_footage_labels(broken)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(UserError, match="no labelled frame"):
        load_footage_labels(empty)
