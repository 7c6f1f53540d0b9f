"""The occlusion_flat kind (degradations/flat_occlusion.py): the look occlusion had before textured occluders."""
import hashlib

import numpy as np
import pytest

from predrel_ros.core.entities import Entity
from predrel_ros.degradations import DegradationOptions, Degrader

SHAPE = (120, 160, 3)


def _entity(entity_id, box):
    return Entity(entity_id, "cube", "manipulated_object", box)


@pytest.mark.parametrize("severity, ratio", [(1, 0.1), (3, 0.3), (5, 0.5)])
def test_each_target_box_is_covered_by_the_table_ratio(severity, ratio):
    box = [20, 30, 100, 90]  # 80 x 60 pixels
    mask = Degrader("occlusion_flat", severity, seed=2).occluder_mask(SHAPE, [_entity(1, box)])
    inside = np.zeros(SHAPE[:2], bool)
    inside[30:90, 20:100] = True
    assert not np.any(mask & ~inside)
    rounding = 2 * (80 + 60) + 4  # floor/ceil of the occluder's four sides
    assert abs(mask.sum() - ratio * 80 * 60) <= rounding


def test_occluder_moves_with_its_target_and_ignores_list_order():
    a, b = _entity(7, [10, 10, 60, 50]), _entity(9, [80, 40, 150, 110])
    degrader = Degrader("occlusion_flat", 4, seed=1)
    mask = degrader.occluder_mask(SHAPE, [a, b])
    np.testing.assert_array_equal(degrader.occluder_mask(SHAPE, [b, a]), mask)
    moved = _entity(7, [15, 13, 65, 53])
    mask_a = degrader.occluder_mask(SHAPE, [a])
    np.testing.assert_array_equal(degrader.occluder_mask(SHAPE, [moved]), np.roll(mask_a, (3, 5), axis=(0, 1)))


def test_without_targets_random_zones_are_fixed_per_seed():
    degrader = Degrader("occlusion_flat", 5, seed=4)
    image = np.random.default_rng(0).integers(0, 256, SHAPE, dtype=np.uint8)
    first = degrader.apply_image(image, 0)
    np.testing.assert_array_equal(degrader.apply_image(image, 500), first)
    mask = degrader.occluder_mask(SHAPE)
    zones = DegradationOptions().occlusion_zones
    # each of the zones (20-40 % of each side) is half covered: between one zone and all of them
    assert 0.5 * 0.2 * 0.2 * 120 * 160 <= mask.sum() <= zones * 0.5 * 0.4 * 0.4 * 120 * 160 + 400
    assert not np.array_equal(Degrader("occlusion_flat", 5, seed=5).occluder_mask(SHAPE), mask)


def test_occluders_are_solid_muted_colours_and_clipped_to_the_image():
    degrader = Degrader("occlusion_flat", 5, seed=3)
    image = np.zeros(SHAPE, np.uint8)
    out = degrader.apply_image(image, 0, np.array([[-50, -50, 40, 30]]))
    mask = degrader.occluder_mask(SHAPE, np.array([[-50, -50, 40, 30]]))
    assert mask.any() and not mask[30:, :].any() and not mask[:, 40:].any()
    colours = np.unique(out[mask].reshape(-1, 3), axis=0)
    assert len(colours) == 1 and np.all((colours >= 40) & (colours <= 210))


def test_flat_occlusion_is_bit_for_bit_the_former_occlusion_kind():
    # digest of the former "occlusion" kind's images and masks (commit 339e5f8), over seeds, severities,
    # targets partly outside the frame and random zones
    image = np.random.default_rng(17).integers(0, 256, SHAPE, dtype=np.uint8)
    targets = np.array([[10, 12, 70, 60], [50, 40, 150, 115], [-20, 90, 30, 130]])
    digest = hashlib.sha256()
    for seed in (0, 3, 2**32 - 1):
        for severity in range(6):
            degrader = Degrader("occlusion_flat", severity, seed)
            for boxes in (targets, None):
                digest.update(degrader.apply_image(image, 5, boxes).tobytes())
                digest.update(degrader.occluder_mask(image.shape, boxes).tobytes())
    assert digest.hexdigest() == "e46bc42858f39954f26f1854f53e0b457e40544f5ce6363f66049d43ddae7ada"
