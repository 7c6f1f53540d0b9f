"""The occlusion kind (degradations/occlusion.py): textured, shaped occluders covering the table's share."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from predrel_ros.core.entities import Entity
from predrel_ros.degradations import DEFAULT_TABLE, OCCLUSION_KINDS, SEVERITIES, DegradationOptions, Degrader, occlusion

SHAPE = (120, 160, 3)


def _entity(entity_id, box):
    return Entity(entity_id, "cube", "manipulated_object", box)


boxes = st.tuples(st.integers(0, 150), st.integers(0, 110), st.integers(4, 90), st.integers(4, 90)).map(
    lambda b: [b[0], b[1], min(b[0] + b[2], 160), min(b[1] + b[3], 120)]).filter(
    lambda b: b[2] - b[0] >= 2 and b[3] - b[1] >= 2)


@settings(max_examples=60, deadline=None)
@given(boxes, st.integers(0, 2**32 - 1), st.integers(0, 10**6))
def test_each_target_is_covered_by_the_table_share_nested_in_severity(box, seed, entity_id):
    x1, y1, x2, y2 = box
    area = (x2 - x1) * (y2 - y1)
    masks = [Degrader("occlusion", s, seed).occluder_mask(SHAPE, [_entity(entity_id, box)]) for s in SEVERITIES]
    inside = np.zeros(SHAPE[:2], bool)
    inside[y1:y2, x1:x2] = True
    for severity, mask in zip(SEVERITIES, masks):
        ratio = DEFAULT_TABLE.row("occlusion", severity)["area_ratio"]
        assert not np.any(mask & ~inside)
        assert mask.sum() == round(ratio * area)           # the share of the target, to the pixel
    for lower, higher in zip(masks, masks[1:]):
        assert np.all(higher[lower])                        # nested: coverage only grows with severity


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 5), st.integers(0, 60), st.integers(0, 40))
def test_an_occluder_never_covers_a_smaller_target_so_an_object_on_the_table_keeps_its_own_share(
        seed, severity, x, y):
    """The table's occluder hides part of the table, not the cube on it: the cube is covered by its
    own occluder alone, the table's share of its box to the pixel, and the table's occluder skips it."""
    cube_mask = np.zeros(SHAPE[:2], bool)
    cube_mask[30 + y:50 + y, 40 + x:60 + x] = True
    cube = Entity(4, "cube", "manipulated_object", [40 + x, 30 + y, 60 + x, 50 + y], mask=cube_mask)
    table_mask = np.zeros(SHAPE[:2], bool)
    table_mask[20:120, 0:160] = True
    table = Entity(1, "table", "surface", [0, 20, 160, 120], mask=table_mask & ~cube_mask)
    degrader = Degrader("occlusion", severity, seed)
    ratio = DEFAULT_TABLE.row("occlusion", severity)["area_ratio"]
    together = degrader.occluder_mask(SHAPE, [table, cube])
    cube_alone = degrader.occluder_mask(SHAPE, [cube])
    np.testing.assert_array_equal(together & cube_mask, cube_alone & cube_mask)
    assert (together & cube_mask).sum() == round(ratio * cube_mask.sum())
    table_alone = degrader.occluder_mask(SHAPE, [table])
    np.testing.assert_array_equal(together & ~cube_mask, table_alone & ~cube_mask)


def test_boxes_without_masks_keep_the_smaller_box_free_and_equal_boxes_both_cover():
    big, small = [0, 0, 160, 120], [50, 40, 90, 80]
    degrader = Degrader("occlusion", 5, seed=3)
    mask = degrader.occluder_mask(SHAPE, np.array([big, small], float))
    own = degrader.occluder_mask(SHAPE, [_entity(1, small)])      # the small box's own occluder: key 1
    inside = np.zeros(SHAPE[:2], bool)
    inside[40:80, 50:90] = True
    np.testing.assert_array_equal(mask & inside, own & inside)
    same = degrader.occluder_mask(SHAPE, np.array([small, small], float))
    assert same.sum() > own.sum()                                 # neither leaves the other out


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 5), st.integers(0, 10**6), st.integers(0, 10**6))
def test_same_seed_same_occluders_at_any_frame_other_seed_other_occluders(seed, severity, frame, other_frame):
    image = np.random.default_rng(seed % 1000).integers(0, 256, SHAPE, dtype=np.uint8)
    targets = [_entity(3, [10, 10, 70, 60]), _entity(8, [60, 40, 150, 115])]
    first = Degrader("occlusion", severity, seed).apply_image(image, frame, targets)
    np.testing.assert_array_equal(Degrader("occlusion", severity, seed).apply_image(image, other_frame, targets),
                                  first)
    other = Degrader("occlusion", severity, (seed + 1) % 2**32)
    assert not np.array_equal(other.apply_image(image, frame, targets), first)


def test_occluders_move_with_their_targets_and_ignore_list_order():
    a, b = _entity(7, [10, 10, 60, 50]), _entity(9, [80, 40, 150, 110])
    degrader = Degrader("occlusion", 4, seed=1)
    image = np.zeros(SHAPE, np.uint8)
    np.testing.assert_array_equal(degrader.apply_image(image, 0, [b, a]), degrader.apply_image(image, 0, [a, b]))
    mask_a = degrader.occluder_mask(SHAPE, [a])
    moved = degrader.occluder_mask(SHAPE, [_entity(7, [15, 13, 65, 53])])
    np.testing.assert_array_equal(moved, np.roll(mask_a, (3, 5), axis=(0, 1)))
    painted = degrader.apply_image(image, 0, [a])
    np.testing.assert_array_equal(degrader.apply_image(image, 0, [_entity(7, [15, 13, 65, 53])]),
                                  np.roll(painted, (3, 5), axis=(0, 1)))


def test_occluders_are_textured_and_shaped_never_flat_rectangles():
    image = np.zeros(SHAPE, np.uint8)
    fills, spreads, shapes = [], [], set()
    for seed in range(40):
        degrader = Degrader("occlusion", 5, seed)
        target = np.array([[20, 20, 120, 100]])
        out, mask = degrader.apply_image(image, 0, target), degrader.occluder_mask(SHAPE, target)
        rows, cols = np.flatnonzero(mask.any(1)), np.flatnonzero(mask.any(0))
        fills.append(mask.sum() / ((rows[-1] - rows[0] + 1) * (cols[-1] - cols[0] + 1)))
        spreads.append(out[mask].astype(float).std(axis=0).max())
        key = 0  # an array target's key is its position
        shapes.add(occlusion.SHAPES[int(occlusion._rng(seed, key, "shape").integers(len(occlusion.SHAPES)))])
    assert shapes == set(occlusion.SHAPES)
    assert max(fills) < 0.97 and np.median(fills) < 0.9      # not rectangles
    assert min(spreads) > 10                                   # never one flat colour


def test_without_targets_random_zones_are_fixed_per_seed_and_clipped_to_the_image():
    degrader = Degrader("occlusion", 5, seed=4)
    image = np.random.default_rng(0).integers(0, 256, SHAPE, dtype=np.uint8)
    np.testing.assert_array_equal(degrader.apply_image(image, 500), degrader.apply_image(image, 0))
    mask = degrader.occluder_mask(SHAPE)
    zones = DegradationOptions().occlusion_zones
    assert 0.5 * 0.2 * 0.2 * 120 * 160 - 1 <= mask.sum() <= zones * 0.5 * 0.4 * 0.4 * 120 * 160 + zones
    assert not np.array_equal(Degrader("occlusion", 5, seed=5).occluder_mask(SHAPE), mask)
    outside = degrader.occluder_mask(SHAPE, np.array([[-50, -50, 40, 30]]))
    assert outside.any() and not outside[30:, :].any() and not outside[:, 40:].any()
    assert outside.sum() == round(0.5 * 40 * 30)               # the share of the part inside the image


@pytest.mark.parametrize("kind", OCCLUSION_KINDS)
def test_empty_targets_occlude_nothing_and_boxes_work_like_entities(kind):
    degrader = Degrader(kind, 5, seed=0)
    image = np.random.default_rng(1).integers(0, 256, SHAPE, dtype=np.uint8)
    np.testing.assert_array_equal(degrader.apply_image(image, 0, []), image)
    targets = np.array([[10, 10, 60, 50], [80, 40, 150, 110]])
    as_entities = [_entity(0, targets[0]), _entity(1, targets[1])]
    np.testing.assert_array_equal(degrader.occluder_mask(SHAPE, targets), degrader.occluder_mask(SHAPE, as_entities))
    with pytest.raises(ValueError, match="finite"):
        degrader.occluder_mask(SHAPE, np.array([[0, 0, np.nan, 5]]))


@settings(max_examples=25, deadline=None)
@given(st.lists(boxes, min_size=1, max_size=4), st.integers(0, 2**32 - 1), st.integers(1, 5))
def test_the_memo_of_occluders_and_textures_changes_no_pixel_and_cannot_be_written_through(box_list, seed, severity):
    image = np.random.default_rng(seed % 1000).integers(0, 256, SHAPE, dtype=np.uint8)
    targets = [_entity(index + 1, box) for index, box in enumerate(box_list)]
    degrader = Degrader("occlusion", severity, seed)
    occlusion._occluder.cache_clear()
    occlusion._texture_of.cache_clear()
    fresh = degrader.apply_image(image, 0, targets), degrader.occluder_mask(SHAPE, targets)
    for _ in range(2):                                   # from the memo now
        np.testing.assert_array_equal(degrader.apply_image(image, 1, targets), fresh[0])
        np.testing.assert_array_equal(degrader.occluder_mask(SHAPE, targets), fresh[1])
    assert occlusion._occluder.cache_info().hits > 0
    for occluder in occlusion.occluders(np.array([t.box for t in targets]), np.array([t.id for t in targets]),
                                        DEFAULT_TABLE.row("occlusion", severity)["area_ratio"], seed, SHAPE):
        with pytest.raises(ValueError):
            occluder.mask[0, 0] = False
