"""Mask boxes and connected parts (perception/mask_parts.py)."""
import numpy as np

from predrel_ros.perception.mask_parts import mask_box, parts_of_at_least


def test_a_masks_box_has_exclusive_far_edges():
    mask = np.zeros((10, 12), bool)
    mask[2:5, 3:9] = True
    np.testing.assert_array_equal(mask_box(mask), [3, 2, 9, 5])


def test_only_the_parts_of_at_least_the_size_are_kept_diagonal_neighbours_joined():
    mask = np.zeros((20, 20), bool)
    mask[1:4, 1:4] = True  # 9 pixels
    mask[10, 10] = mask[11, 11] = True  # 2 pixels, 8-connected
    mask[15:17, 15:20] = True  # 10 pixels
    kept = parts_of_at_least(mask, 9)
    assert kept.sum() == 19 and not kept[10, 10]
    assert parts_of_at_least(mask, 2)[11, 11] and not parts_of_at_least(mask, 11).any()
    assert not parts_of_at_least(np.zeros((5, 5), bool), 1).any()


def test_the_largest_part_is_kept_when_none_is_big_enough_on_request():
    mask = np.zeros((20, 20), bool)
    mask[1:3, 1:3] = True  # 4 pixels
    mask[10:13, 10:12] = True  # 6 pixels
    assert not parts_of_at_least(mask, 7).any()
    kept = parts_of_at_least(mask, 7, largest_if_none=True)
    assert kept.sum() == 6 and kept[10, 10]
    assert parts_of_at_least(mask, 5, largest_if_none=True).sum() == 6
    assert not parts_of_at_least(np.zeros((5, 5), bool), 7, largest_if_none=True).any()
