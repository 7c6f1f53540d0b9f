import dataclasses

import numpy as np
import pytest

from predrel_ros.core.entities import CONTAINER, MANIPULATED_OBJECT, Entity, RoleMap


def test_centroid_comes_from_mask_when_present():
    mask = np.zeros((10, 10), bool)
    mask[2:4, 6:8] = True
    entity = Entity(id=3, label="cube", role=MANIPULATED_OBJECT, box=[0, 0, 9, 9], mask=mask)
    np.testing.assert_allclose(entity.centroid, [6.5, 2.5])


def test_centroid_falls_back_to_box_center():
    entity = Entity(id=3, label="cube", role=MANIPULATED_OBJECT, box=[0, 2, 4, 6])
    np.testing.assert_allclose(entity.centroid, [2.0, 4.0])
    assert entity.depth is None


def test_depth_from_point3d_or_three_element_centroid():
    a = Entity(id=1, label="cube", role=MANIPULATED_OBJECT, box=[0, 0, 1, 1], point3d=[0.1, 0.2, 0.9])
    b = Entity(id=2, label="cube", role=MANIPULATED_OBJECT, box=[0, 0, 1, 1], centroid=[3, 4, 0.7])
    assert a.depth == pytest.approx(0.9)
    assert b.depth == pytest.approx(0.7)


@pytest.mark.parametrize("kwargs, message", [
    ({"role": "chair"}, "unknown role"),
    ({"box": [5, 0, 1, 1]}, "x2>=x1"),
    ({"box": [0, 0, np.nan, 1]}, "non-finite"),
    ({"score": 1.5}, "score must lie in"),
    ({"mask": np.zeros(4, bool)}, "mask must be 2-D"),
    ({"centroid": [1, 2, 3, 4]}, "centroid must be"),
    ({"centroid": [1, np.nan]}, "centroid has non-finite"),
    ({"point3d": [0, 0, np.inf]}, "point3d has non-finite"),
    ({"mask": np.zeros((4, 5), bool), "crop": (1, 0, 5, 4)}, "mask crop x=1 y=0 5x4 does not lie in"),
    ({"mask": np.zeros((4, 5), bool), "crop": (0, -1, 2, 2)}, "does not lie in"),
    ({"crop": (0, 0, 1, 1)}, "a mask crop needs a mask"),
])
def test_invalid_entities_are_refused_with_the_field_named(kwargs, message):
    args = {"id": 1, "label": "cube", "role": MANIPULATED_OBJECT, "box": [0, 0, 1, 1]} | kwargs
    with pytest.raises(ValueError, match=message):
        Entity(**args)


def test_a_mask_crop_is_kept_and_not_carried_to_a_replaced_mask():
    mask = np.zeros((6, 8), bool)
    mask[2:4, 3:6] = True
    entity = Entity(id=1, label="cube", role=MANIPULATED_OBJECT, box=[3, 2, 5, 3], mask=mask, crop=(3, 2, 3, 2))
    assert entity.mask_crop == (3, 2, 3, 2)
    np.testing.assert_array_equal(entity.centroid, [4.0, 2.5])
    moved = dataclasses.replace(entity, mask=np.roll(mask, 2, axis=1))     # the crop would miss its pixels
    assert moved.mask_crop is None


def test_role_map_defaults_unknown_labels():
    roles = RoleMap({"bowl": CONTAINER})
    assert roles.role_of("bowl") == CONTAINER
    assert roles.role_of("mug") == MANIPULATED_OBJECT
    with pytest.raises(ValueError, match="unknown role"):
        RoleMap({"bowl": "pot"})
