import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from ros_testing import require_ros

require_ros()

from message_cases import assert_same_entity, entities, received  # noqa: E402

from predrel_ros.core.entities import Entity  # noqa: E402
from predrel_ros.msg import Entity as EntityMsg  # noqa: E402
from predrel_ros.msg import EntityArray  # noqa: E402
from predrel_ros.ros.messages.degradations import degradation_from_msg  # noqa: E402
from predrel_ros.ros.messages.entities import (  # noqa: E402
    entities_from_msg,
    entities_to_msg,
    entity_to_msg,
    mask_fields,
    mask_from_msg,
)
from predrel_ros.ros.messages.predicates import predicates_to_msg  # noqa: E402

pytestmark = pytest.mark.ros


@settings(max_examples=200, deadline=None)
@given(arrays(bool, st.tuples(st.integers(1, 40), st.integers(1, 40))))
def test_mask_round_trip(mask):
    msg = EntityMsg(**mask_fields(mask))
    decoded = mask_from_msg(received(msg), *mask.shape)
    if mask.any():
        np.testing.assert_array_equal(decoded, mask)
    else:
        assert decoded is None  # an all-false mask is sent as "no mask" (Entity.msg)


def test_mask_that_does_not_fit_the_image_is_refused():
    msg = EntityMsg(id=3, **mask_fields(np.ones((4, 4), bool)))
    with pytest.raises(ValueError, match="Entity 3: mask_rle: mask crop .* does not fit in the 3x4 image"):
        mask_from_msg(msg, 4, 3)
    msg.mask_rle = [1, 2]
    with pytest.raises(ValueError, match="Entity 3: mask_rle: mask_rle runs sum to 3, expected"):
        mask_from_msg(msg, 4, 4)


@settings(max_examples=150, deadline=None)
@given(st.lists(entities(), max_size=4), st.integers(0, 2**40))
def test_entity_array_round_trip(items, frame_index):
    msg = received(entities_to_msg(items, frame_index=frame_index, image_width=40, image_height=30,
                                               source="perception"))
    assert (msg.frame_index, msg.source, msg.image_width, msg.image_height) == (frame_index, "perception", 40, 30)
    assert degradation_from_msg(msg.degradation).kind == "none"
    back = entities_from_msg(msg)
    assert len(back) == len(items)
    for original, decoded in zip(items, back):
        assert_same_entity(original, decoded)
        assert decoded.frame_index == frame_index
        if decoded.mask is not None:            # the RLE's crop comes along: all the mask's pixels lie in it
            x, y, width, height = decoded.mask_crop
            assert np.count_nonzero(decoded.mask[y:y + height, x:x + width]) == np.count_nonzero(original.mask)


def test_entity_without_depth_sends_nan():
    msg = entity_to_msg(Entity(1, "cube", "manipulated_object", (0, 0, 2, 2)))
    assert math.isnan(msg.depth) and not msg.has_point3d and msg.mask_width == 0


def test_entity_label_with_a_nul_is_refused():
    with pytest.raises(ValueError, match="Entity 1: label 'a\\\\x00b' contains a NUL character"):
        entity_to_msg(Entity(1, "a\x00b", "manipulated_object", (0, 0, 2, 2)))


def test_entity_label_that_is_not_utf8_text_is_refused():
    with pytest.raises(ValueError, match="Entity 1: label '\\\\ud800' is not valid UTF-8 text"):
        entity_to_msg(Entity(1, "\ud800", "manipulated_object", (0, 0, 2, 2)))
    with pytest.raises(ValueError, match="PredicateArray.source 'a\\\\x00' contains a NUL character"):
        predicates_to_msg([], frame_index=0, source="a\x00")


def test_entity_mask_of_another_size_is_refused():
    entity = Entity(5, "cube", "manipulated_object", (0, 0, 2, 2), mask=np.ones((10, 10), bool))
    with pytest.raises(ValueError, match=r"entities\[0\] \(id 5\): mask shape \(10, 10\) differs from the "
                                         r"image size 30x40"):
        entities_to_msg([entity], frame_index=0, image_width=40, image_height=30, source="x")


def test_entity_message_with_an_unknown_role_is_refused():
    msg = EntityArray(image_width=4, image_height=4, entities=[EntityMsg(id=2, label="arm", role="robot")])
    with pytest.raises(ValueError, match=r"EntityArray.entities\[0\]: Entity 2: unknown role 'robot'"):
        entities_from_msg(msg)


def hostile_entity(**fields):
    entity = EntityMsg(id=4, label="cube", role="manipulated_object", **fields)
    return EntityArray(image_width=64, image_height=48, entities=[entity])


@pytest.mark.parametrize("fields, match", [
    ({"label": ""}, "the label is empty"),
    ({"box": np.float32([0, 0, 1e9, 10])}, "lies beyond 8 times the 64x48 image"),
    ({"box": np.float32([-1e9, -1e9, 10, 10])}, "lies beyond"),
    ({"depth": -math.inf}, "expected a finite depth >= 0, or NaN"),
    ({"depth": -0.5}, "expected a finite depth >= 0"),
])
def test_hostile_entity_fields_are_refused(fields, match):
    msg = hostile_entity(**{k: v for k, v in fields.items() if k != "label"})
    if "label" in fields:
        msg.entities[0].label = fields["label"]
    with pytest.raises(ValueError, match=match):
        entities_from_msg(msg)


def test_a_box_partly_outside_the_image_and_unknown_depth_are_fine():
    [entity] = entities_from_msg(hostile_entity(box=np.float32([-30, -20, 90, 70]), depth=math.nan))
    assert entity.box[0] == -30 and entity.centroid.size == 2


def test_image_sizes_and_entity_counts_beyond_the_bounds_are_refused_unread():
    from predrel_ros.ros.messages.fields import TooLarge

    msg = hostile_entity()
    msg.image_width = 2**32 - 1
    with pytest.raises(ValueError, match="expected sides in 1..16384"):
        entities_from_msg(msg)
    many = EntityArray(image_width=64, image_height=48, entities=[EntityMsg(id=k) for k in range(300)])
    with pytest.raises(TooLarge, match="holds 300 items, more than 256 \\(parameter max_entities_per_message\\)"):
        entities_from_msg(many)   # the unknown roles are never looked at
    with pytest.raises(TooLarge, match="more than 10"):
        entities_from_msg(many, max_entities=10)
