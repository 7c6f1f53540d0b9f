"""Model-free surfaces, objects and containers from depth (perception/depth_objects.py)."""
import cv2
import numpy as np
import pytest
from tabletop_depth import HEIGHT, TABLE_NORMAL, WIDTH, region, standing_block, tabletop_depth

from predrel_ros.degradations.depth_noise import noisy_depth
from predrel_ros.perception.depth_objects import (
    DEPTH_LABELS,
    DepthObjectConfig,
    DepthObjectSegmenter,
    _is_hollow,
    refine_hand_mask,
)


def labelled(detections):
    return [DEPTH_LABELS[c] for c in detections.class_ids]


def iou(a, b):
    return (a & b).sum() / (a | b).sum()


def scene():
    """A block, a taller block touching it, and an open container (a rim around a low inside)."""
    inside = region(200, 70, 240, 94)
    return {"block": (region(40, 150, 80, 190), 0.05), "tall": (region(80, 150, 110, 190), 0.12),
            "rim": (region(190, 62, 250, 102) & ~inside, 0.08), "inside": (inside, 0.01)}


def test_plane_blocks_and_container_from_exact_depth():
    raised = scene()
    depth, K = tabletop_depth(raised)
    found = DepthObjectSegmenter().detect(depth, K)
    labels = labelled(found)
    assert labels.count("surface") == 1 and labels.count("container") == 1 and labels.count("object") == 2
    table = found.masks[labels.index("surface")]
    assert iou(table, ~np.any([mask for mask, _ in raised.values()], axis=0)) > 0.97
    container = found.masks[labels.index("container")]
    assert iou(container, raised["rim"][0] | raised["inside"][0]) > 0.9  # its inside belongs to it
    objects = [found.masks[i] for i, label in enumerate(labels) if label == "object"]
    for name in ("block", "tall"):  # touching in the image, separated by the depth jump
        assert max(iou(mask, raised[name][0]) for mask in objects) > 0.9
    assert np.all(found.scores > 0.6) and np.all(found.mask_quality == 1.0)


def test_the_support_plane_normal_faces_the_camera():
    depth, K = tabletop_depth()
    segmenter = DepthObjectSegmenter()
    points = segmenter._rays_for(K, *depth.shape) * depth[..., None]
    planes = segmenter._planes(points, np.isfinite(depth), np.full(depth.shape, 0.006, np.float32))
    assert len(planes) == 1
    np.testing.assert_allclose(planes[0].normal, TABLE_NORMAL, atol=1e-3)
    assert planes[0].offset == pytest.approx(0.9, abs=1e-3)


def test_found_under_sensor_noise_and_deterministic_per_seed():
    raised = scene()
    depth, K = tabletop_depth(raised)
    noisy = noisy_depth(depth, np.random.default_rng(3))
    first = DepthObjectSegmenter(DepthObjectConfig(seed=1)).detect(noisy, K)
    again = DepthObjectSegmenter(DepthObjectConfig(seed=1)).detect(noisy, K)
    np.testing.assert_array_equal(first.masks, again.masks)
    labels = labelled(first)
    assert labels.count("surface") == 1 and labels.count("container") == 1
    for name in ("block", "tall"):
        assert max(iou(first.masks[i], raised[name][0]) for i, label in enumerate(labels)
                   if label == "object") > 0.8


def test_excluded_pixels_are_no_object_and_specks_are_none():
    raised = {"block": (region(40, 150, 80, 190), 0.05), "speck": (region(150, 100, 153, 103), 0.05)}
    depth, K = tabletop_depth(raised)
    found = DepthObjectSegmenter().detect(depth, K, exclude=raised["block"][0])
    assert labelled(found) == ["surface"]


def test_no_plane_no_detections():
    depth = np.full((240, 320), np.nan, np.float32)
    found = DepthObjectSegmenter().detect(depth, tabletop_depth()[1])
    assert len(found) == 0 and found.masks.shape == (0, 240, 320)


@pytest.mark.parametrize("field, value", [("ransac_iterations", 0), ("edge_jump", 0), ("min_plane_share", 1),
                                          ("hidden_gap_m", 0), ("min_hidden_pixels", 0), ("hand_reach_px", -1),
                                          ("hand_depth_m", 0), ("hand_behind_m", 0), ("hand_colour_tolerance", -0.1),
                                          ("hand_colour_spread", -1)])
def test_config_refuses_bad_values(field, value):
    with pytest.raises(ValueError, match=field):
        DepthObjectConfig(**{field: value})


def test_a_block_standing_on_another_is_cut_from_it_at_the_lower_ones_top():
    """No depth jump separates the upper block's front face from the lower block's top (it rises from
    it): the lower top is a shelf, a height many pixels share, with the upper block resting over it."""
    lower = standing_block(100, 170, 190, 20, 20, 0.0, 0.08)
    upper = standing_block(115, 155, 150, 30, 15, 0.08, 0.08)
    depth, K = tabletop_depth({"lower": lower, "upper": upper})
    noisy = noisy_depth(depth, np.random.default_rng(5))
    for image in (depth, noisy):
        found = DepthObjectSegmenter().detect(image, K)
        objects = [found.masks[i] for i, label in enumerate(labelled(found)) if label == "object"]
        assert len(objects) == 2
        assert max(iou(mask, lower[0] & ~upper[0]) for mask in objects) > 0.8
        assert max(iou(mask, upper[0]) for mask in objects) > 0.7
    unsplit = DepthObjectSegmenter(DepthObjectConfig(shelf_peak=1e9)).detect(depth, K)
    assert labelled(unsplit).count("object") == 1  # the stack is one cluster without the cut


def test_a_single_tall_block_and_a_box_are_not_cut():
    """A block's only shelf is its top, with nothing above it; a container is never cut."""
    tall = standing_block(60, 110, 190, 40, 15, 0.0, 0.16)
    box = {name: part for name, part in scene().items() if name in ("rim", "inside")}
    depth, K = tabletop_depth({"tall": tall, **box})
    found = DepthObjectSegmenter().detect(noisy_depth(depth, np.random.default_rng(2)), K)
    labels = labelled(found)
    assert labels.count("object") == 1 and labels.count("container") == 1
    assert iou(found.masks[labels.index("object")], tall[0]) > 0.8


def test_what_rests_on_a_shelf_stays_over_it_from_side_to_side():
    from predrel_ros.perception.depth_objects import _rests_on

    lower = np.arange(100, 171)
    assert _rests_on(np.arange(115, 156), lower)          # a smaller block on top
    assert _rests_on(np.arange(95, 176), lower)           # overhanging by a little
    assert not _rests_on(np.arange(150, 260), lower)      # an arm rising away from a palm


def test_a_block_covering_the_top_of_another_is_cut_where_the_colour_changes():
    """No shelf shows when the upper block covers the lower one's top: their colours tell them apart;
    brightness alone (shading) does not."""
    lower = standing_block(100, 150, 190, 30, 0, 0.0, 0.06)
    upper = standing_block(100, 150, 160, 30, 12, 0.06, 0.06)
    depth, K = tabletop_depth({"lower": lower, "upper": upper})
    noisy = noisy_depth(depth, np.random.default_rng(4))
    image = np.full((HEIGHT, WIDTH, 3), 90, np.uint8)
    image[lower[0]] = (170, 40, 30)
    image[upper[0]] = (30, 50, 160)
    found = DepthObjectSegmenter().detect(noisy, K, image=image)
    objects = [found.masks[i] for i, label in enumerate(labelled(found)) if label == "object"]
    assert len(objects) == 2
    for block in (lower, upper):
        assert max(iou(mask, block[0]) for mask in objects) > 0.8
    assert labelled(DepthObjectSegmenter().detect(noisy, K)).count("object") == 1  # depth alone: one
    shaded = np.full((HEIGHT, WIDTH, 3), 90, np.uint8)
    shaded[lower[0]] = (170, 40, 30)
    shaded[upper[0]] = (85, 20, 15)  # the same red in shadow
    assert labelled(DepthObjectSegmenter().detect(noisy, K, image=shaded)).count("object") == 1


def test_a_cut_leaving_a_band_that_is_no_compact_blob_is_not_made():
    """The walls around a box's flat floor (a box merged with a hand is no container) lie above a
    shelf and over it, but the band they make is a thin U: no object."""
    lower, lower_heights = standing_block(100, 140, 140, 10, 30, 0.0, 0.02)  # its top: the shelf
    walls = region(95, 95, 145, 140) & ~lower
    heights = np.where(lower, lower_heights, np.nan)
    spread = 0.03 + 0.04 * (np.arange(int(walls.sum())) % 97) / 96  # over 3-7 cm
    heights[walls] = spread
    tolerance = np.full((HEIGHT, WIDTH), 0.002)
    segmenter = DepthObjectSegmenter()
    parts = segmenter._split_stack(lower | walls, heights, tolerance, 40, None)
    assert len(parts) == 1 and np.array_equal(parts[0], lower | walls)
    block = region(100, 60, 140, 100)  # a compact block standing on the same shelf is cut off
    heights[walls] = np.nan
    heights[block] = 0.03 + 0.04 * (np.arange(int(block.sum())) % 97) / 96
    parts = segmenter._split_stack(lower | block, heights, tolerance, 40, None)
    assert len(parts) == 2 and max(iou(part, block) for part in parts) > 0.9


def fingers(x1: int, y1: int, y2: int, width: int, gap: int, count: int) -> np.ndarray:
    """Vertical finger bars `width` pixels wide with `gap` pixels between them, from column x1."""
    starts = [x1 + k * (width + gap) for k in range(count)]
    return np.any([region(start, y1, start + width, y2) for start in starts], axis=0)


def objects_of(found):
    return [found.masks[i] for i, label in enumerate(labelled(found)) if label == "object"]


def test_the_strips_of_an_object_seen_between_the_fingers_in_front_of_it_are_one_instance():
    """A block held behind three fingers shows as two sides and two 2-pixel strips between the fingers,
    with holes where the fingers' edges are; the hand's pixels known, they are one object whose mask
    is the block's visible pixels."""
    block, hand = region(100, 100, 140, 140), fingers(110, 90, 150, 5, 2, 3)
    depth, K = tabletop_depth({"block": (block, 0.06), "hand": (hand, 0.15)})
    visible = block & ~hand
    holed = depth.copy()
    holed[cv2.dilate(hand.astype(np.uint8), np.ones((1, 3), np.uint8)).astype(bool) & visible
          & (np.arange(HEIGHT)[:, None] % 3 == 0)] = np.nan  # a third of the pixels along the fingers lost
    for image in (depth, holed, noisy_depth(depth, np.random.default_rng(6))):
        objects = objects_of(DepthObjectSegmenter().detect(image, K, exclude=hand))
        assert len(objects) == 1
        assert iou(objects[0], visible) > 0.9 and not (objects[0] & hand).any()
    apart = objects_of(DepthObjectSegmenter(DepthObjectConfig(hidden_gap_m=0.001)).detect(depth, K, exclude=hand))
    assert len(apart) == 4  # not joined: the two sides and the two strips


def test_objects_either_side_of_a_hand_stay_apart_unless_they_are_one_object_behind_a_finger():
    """Not joined: two blocks either side of a palm wider than a finger, two blocks at different depths
    (one farther along the table) either side of a finger, two blocks beside a hand lying behind them."""
    segmenter = DepthObjectSegmenter()
    left, right = region(100, 100, 120, 130), region(150, 100, 170, 130)
    palm = region(120, 90, 150, 140)
    depth, K = tabletop_depth({"left": (left, 0.06), "right": (right, 0.06), "palm": (palm, 0.15)})
    assert len(objects_of(segmenter.detect(depth, K, exclude=palm))) == 2
    near, far = region(100, 120, 120, 140), region(125, 60, 145, 80)  # 8 cm apart along the table
    finger = region(120, 60, 125, 140)
    depth, K = tabletop_depth({"near": (near, 0.06), "far": (far, 0.06), "finger": (finger, 0.15)})
    assert len(objects_of(segmenter.detect(depth, K, exclude=finger))) == 2
    behind = region(120, 100, 125, 130)  # a finger lying on the table between two blocks
    depth, K = tabletop_depth({"left": (left, 0.06), "right": (region(125, 100, 145, 130), 0.06),
                               "behind": (behind, 0.005)})
    assert len(objects_of(segmenter.detect(depth, K, exclude=behind))) == 2


def test_a_sliver_of_an_object_beside_a_hand_in_front_of_it_is_found_a_speck_or_hand_residue_is_not():
    """Behind a palm, a block shows as a 3 x 8 sliver: smaller than `min_pixels`, but partly hidden, so
    `min_hidden_pixels` is enough. A speck of that size elsewhere is none, and so are the palm's own
    pixels that the hand mask missed (at the hand's depth, not behind it)."""
    palm, block, speck = region(120, 90, 160, 140), region(117, 110, 140, 118), region(200, 100, 203, 108)
    depth, K = tabletop_depth({"block": (block, 0.06), "palm": (palm, 0.15), "speck": (speck, 0.05)})
    segmenter = DepthObjectSegmenter()
    objects = objects_of(segmenter.detect(depth, K, exclude=palm))
    assert len(objects) == 1 and iou(objects[0], block & ~palm) > 0.8
    assert not objects_of(DepthObjectSegmenter(DepthObjectConfig(min_hidden_pixels=40)).detect(depth, K, exclude=palm))
    missed_edge = palm & ~region(120, 120, 123, 128)  # 3 x 8 of the palm left out of its mask
    depth, K = tabletop_depth({"palm": (palm, 0.15), "speck": (speck, 0.05)})
    assert not objects_of(segmenter.detect(depth, K, exclude=missed_edge))


def widened(mask: np.ndarray, pixels: int) -> np.ndarray:
    """`mask` grown (pixels > 0) or shrunk (< 0) by `pixels` on every side."""
    kernel = np.ones((2 * abs(pixels) + 1,) * 2, np.uint8)
    return (cv2.dilate if pixels > 0 else cv2.erode)(mask.astype(np.uint8), kernel).astype(bool)


@pytest.mark.parametrize("name", ["2 px too wide", "2 px too narrow", "shifted 2 px", "shifted 3 px and 2 px"])
def test_a_hand_mask_a_few_pixels_off_is_refined_by_depth_so_the_block_behind_two_fingers_is_one(name):
    """A block behind two fingers (5 pixels wide, 3 apart), their mask as coarse as a landmark
    detector's: taken as it is, the block falls apart or the fingers' uncovered edges join it; refined
    by depth (mask pixels behind the fingers leave it, the fingers' edges at their depth join it), the
    block is one object, its mask the visible pixels, in exact and in noisy depth."""
    block, hand = region(100, 100, 140, 140), fingers(113, 90, 150, 5, 3, 2)
    depth, K = tabletop_depth({"block": (block, 0.06), "hand": (hand, 0.15)})
    visible = block & ~hand
    mask = {"2 px too wide": widened(hand, 2),
            "2 px too narrow": cv2.erode(hand.astype(np.uint8), np.ones((1, 5), np.uint8)).astype(bool),  # 1 of 5
            "shifted 2 px": np.roll(hand, 2, axis=1),
            "shifted 3 px and 2 px": np.roll(np.roll(hand, 3, axis=1), 2, axis=0)}[name]
    taken_as_is = objects_of(DepthObjectSegmenter(DepthObjectConfig(hand_reach_px=0)).detect(depth, K, exclude=mask))
    assert not (len(taken_as_is) == 1 and iou(taken_as_is[0], visible) > 0.8)
    for image in (depth, noisy_depth(depth, np.random.default_rng(6))):
        objects = objects_of(DepthObjectSegmenter().detect(image, K, exclude=mask))
        # a finger's edge pixels the sensor lost (no depth) cannot be told apart: they stay where the mask had them
        assert len(objects) == 1 and iou(objects[0], visible) > 0.8
        assert not (objects[0] & hand & np.isfinite(image)).any()


def test_the_refined_hand_mask_follows_the_fingers_and_an_exact_one_is_kept():
    block, hand = region(100, 100, 140, 140), fingers(113, 90, 150, 5, 3, 2)
    depth, K = tabletop_depth({"block": (block, 0.06), "hand": (hand, 0.15)})
    above = np.where(block | hand, depth, np.nan)  # the table takes no part
    assert np.array_equal(refine_hand_mask(hand, above, 5, 0.03, 0.05, K[0, 0]), hand)
    for off in (widened(hand, 2), np.roll(hand, 2, axis=1), np.roll(hand, -3, axis=1)):
        refined = refine_hand_mask(off, above, 5, 0.03, 0.05, K[0, 0])
        assert np.array_equal(refined & (block | hand), hand)  # over the table it may stay: no object there


def test_a_refined_hand_mask_does_not_grow_over_an_object_it_touches_at_its_depth():
    """A palm touching a block of its height (no depth step between them), its mask 2 pixels short all
    round: the palm's edges grow back where only the table lies beyond them; where the surface goes on
    (the block), nothing is taken."""
    palm, block = region(100, 90, 130, 140), region(130, 100, 160, 130)
    depth, K = tabletop_depth({"palm": (palm, 0.15), "block": (block, 0.15)})
    above = np.where(palm | block, depth, np.nan)
    refined = refine_hand_mask(widened(palm, -2), above, 5, 0.03, 0.05, K[0, 0])
    assert not (refined & block).any() and (refined & palm)[:, :118].sum() == palm[:, :118].sum()


def test_a_shelf_is_found_wherever_its_height_falls_among_the_histogram_bins():
    """The lower block's top (80 pixels within the noise of one height) over a face rising evenly
    (30 pixels per noise-wide bin, so a shelf needs 75): found where the top's height lies on a bin's
    centre and on the edge between two bins, which would halve its count in each (40 + 30)."""
    noise, rng = 0.004, np.random.default_rng(7)
    rising = np.linspace(0.0, 0.092, 690)
    segmenter = DepthObjectSegmenter()
    for shelf in (0.046, 0.048):  # 11.5 and 12 bins above the lowest height
        top = shelf + rng.uniform(-noise / 2.5, noise / 2.5, 80)
        values = np.concatenate([rising, top])
        columns = rng.integers(100, 140, values.size)
        cuts = segmenter._shelf_cuts(values, columns, noise, 40)
        assert len(cuts) == 1 and shelf < cuts[0] < shelf + 2 * noise


def box_with_block(height=0.07):
    """The scene's open box with a block standing on its floor (0.01), apart from its walls, reaching the
    rim's height (0.08)."""
    box = {name: part for name, part in scene().items() if name in ("rim", "inside")}
    return {**box, "block": standing_block(212, 228, 93, 12, 6, 0.01, height)}


def test_an_object_standing_in_a_container_as_high_as_its_rim_is_cut_out_of_it():
    """One cluster holds a box and the block in it (no depth jump parts them: the block's front face rises
    from the floor): the block's top is a part of the rim apart from the ring, and takes its faces."""
    raised = box_with_block()
    heights = np.full((HEIGHT, WIDTH), np.nan)
    for mask, height in raised.values():
        heights[mask] = height if np.isscalar(height) else height[mask]
    cluster = np.isfinite(heights)
    segmenter = DepthObjectSegmenter()
    box, rim, outline = segmenter._rim(cluster, heights)
    assert _is_hollow(rim, outline, segmenter.config.container_hollow)
    contents = segmenter._contents(cluster, heights, np.full(heights.shape, 0.001), box, rim, outline, 40)
    assert len(contents) == 1 and iou(contents[0], raised["block"][0]) > 0.9
    low = box_with_block(height=0.03)  # below the rim's height: no top of its own, part of the container
    heights[low["block"][0]] = low["block"][1][low["block"][0]]
    assert segmenter._contents(cluster, heights, np.full(heights.shape, 0.001),
                               *segmenter._rim(cluster, heights), 40) == []


def test_a_container_keeps_none_of_what_another_cluster_in_it_holds():
    raised = box_with_block()
    depth, K = tabletop_depth(raised)
    found = DepthObjectSegmenter().detect(depth, K)
    labels = labelled(found)
    assert labels.count("container") == 1 and labels.count("object") == 1
    block, container = found.masks[labels.index("object")], found.masks[labels.index("container")]
    assert iou(block, raised["block"][0]) > 0.8 and not (container & block).any()


def test_a_finger_across_a_containers_wall_does_not_open_its_ring():
    raised = box_with_block()
    finger = region(228, 50, 234, 74)  # from above the box across its back wall into the inside
    depth, K = tabletop_depth({**raised, "finger": (finger, 0.14)})
    found = DepthObjectSegmenter().detect(depth, K, exclude=finger)
    labels = labelled(found)
    assert labels.count("container") == 1 and labels.count("object") == 1
    assert iou(found.masks[labels.index("object")], raised["block"][0]) > 0.8
