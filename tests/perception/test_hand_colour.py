"""Hand masks refined by colour (perception/hand_colour.py), alone and in the depth objects' segmenter."""
import cv2
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from tabletop_depth import HEIGHT, WIDTH, region, tabletop_depth

from predrel_ros.perception.depth_objects import DEPTH_LABELS, DepthObjectConfig, DepthObjectSegmenter
from predrel_ros.perception.hand_colour import refine_hand_mask_by_colour

SKIN, RED, GREY, DARK_SKIN = (235, 190, 160), (200, 40, 30), (120, 120, 125), (140, 100, 75)
REACH, TOLERANCE, SPREAD, MIN_PIXELS = 5, 0.06, 3.0, 20


def fingers(x1: int, y1: int, y2: int, width: int, gap: int, count: int) -> np.ndarray:
    starts = [x1 + k * (width + gap) for k in range(count)]
    return np.any([region(start, y1, start + width, y2) for start in starts], axis=0)


def grown(mask: np.ndarray, pixels: int) -> np.ndarray:
    return cv2.dilate(mask.astype(np.uint8), np.ones((2 * pixels + 1,) * 2, np.uint8)).astype(bool)


def hull(mask: np.ndarray) -> np.ndarray:
    """A landmark detector's mask: the filled outline, the gaps between the fingers closed."""
    out = np.zeros(mask.shape, np.uint8)
    cv2.fillPoly(out, [cv2.convexHull(cv2.findNonZero(mask.astype(np.uint8)))], 1)
    return out.astype(bool)


def painted(*layers) -> np.ndarray:
    """An image of the table in grey with each (mask, colour) painted over it, in order."""
    image = np.empty((HEIGHT, WIDTH, 3), np.uint8)
    image[:] = GREY
    for mask, colour in layers:
        image[mask] = colour
    return image


def held_block():
    """A red block held between two skin-coloured fingers, 2.5 cm behind them (less than a hand mask's
    `hand_behind_m`: depth alone does not take it out of the mask); the depth of what stands on the table."""
    block, hand = region(106, 100, 134, 140), fingers(113, 90, 150, 5, 3, 2)
    hand |= region(108, 60, 132, 90)  # the palm
    depth, K = tabletop_depth({"block": (block, 0.125), "hand": (hand, 0.15)})
    return block, hand, np.where(block | hand, depth, np.nan).astype(np.float32), K


def test_what_a_hand_mask_closes_over_in_another_colour_leaves_it():
    block, hand, depth, _ = held_block()
    mask = grown(hull(hand), 2)
    refined = refine_hand_mask_by_colour(mask, mask, painted((block, RED), (hand, SKIN)), depth, REACH,
                                         TOLERANCE, SPREAD, MIN_PIXELS)
    assert not (refined & block & ~hand).any()  # the block's pixels between and beside the fingers
    assert (refined & hand).sum() == hand.sum()  # every hand pixel stays


def test_the_hands_colour_beside_a_shifted_mask_joins_it_within_reach_and_nothing_else_does():
    block, hand, depth, _ = held_block()
    shifted = np.roll(hand, 3, axis=1)
    refined = refine_hand_mask_by_colour(shifted, shifted, painted((block, RED), (hand, SKIN)), depth, REACH,
                                         TOLERANCE, SPREAD, MIN_PIXELS)
    assert np.array_equal(refined & (hand | block), hand)


def test_a_hand_the_colour_of_what_it_holds_keeps_its_mask():
    """Nothing leaves it; what grows is of its colour and within reach of it."""
    block, hand, depth, _ = held_block()
    mask = grown(hull(hand), 2)
    refined = refine_hand_mask_by_colour(mask, mask, painted((block, SKIN), (hand, SKIN)), depth, REACH,
                                         TOLERANCE, SPREAD, MIN_PIXELS)
    assert np.array_equal(refined & mask, mask)
    assert not (refined & ~grown(mask, REACH)).any()


def test_two_hands_of_different_colours_are_each_measured_on_their_own():
    left, right = region(40, 60, 80, 140), region(200, 60, 240, 140)
    depth, _ = tabletop_depth({"left": (left, 0.15), "right": (right, 0.15)})
    mask = left | right
    image = painted((left, SKIN), (right, DARK_SKIN))
    refined = refine_hand_mask_by_colour(mask, mask, image, depth, REACH, TOLERANCE, SPREAD, MIN_PIXELS)
    assert np.array_equal(refined, mask)


def test_a_mark_of_another_colour_smaller_than_an_object_stays_with_the_hand():
    palm = region(100, 60, 160, 140)
    depth, _ = tabletop_depth({"palm": (palm, 0.15)})
    mark, patch = region(110, 70, 114, 74), region(130, 100, 137, 107)  # 16 and 49 pixels
    image = painted((palm, SKIN), (mark, RED), (patch, RED))
    refined = refine_hand_mask_by_colour(palm, palm, image, depth, REACH, TOLERANCE, SPREAD, MIN_PIXELS)
    assert np.array_equal(refined, palm & ~patch)


def test_dark_pixels_and_pixels_without_depth_keep_their_side():
    block, hand, depth, _ = held_block()
    mask = grown(hull(hand), 2)
    image = painted((block, RED), (hand, SKIN))
    dark = block & (np.arange(WIDTH)[None, :] < 110)
    image[dark] = (10, 5, 5)
    no_depth = block & (np.arange(WIDTH)[None, :] >= 128)
    holed = np.where(no_depth, np.nan, depth)
    refined = refine_hand_mask_by_colour(mask, mask, image, holed, REACH, TOLERANCE, SPREAD, MIN_PIXELS)
    kept = (dark | no_depth) & mask
    assert kept.any() and np.array_equal(refined & kept, kept)
    assert not (refined & block & ~hand & ~kept).any()


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), reach=st.integers(1, 6))
def test_nothing_changes_side_beyond_reach_of_the_given_mask_nor_without_depth(seed, reach):
    rng = np.random.default_rng(seed)
    image = rng.integers(0, 256, (HEIGHT, WIDTH, 3), dtype=np.uint8)
    x, y = int(rng.integers(0, WIDTH - 60)), int(rng.integers(0, HEIGHT - 60))
    given_mask = region(x, y, x + int(rng.integers(5, 60)), y + int(rng.integers(5, 60)))
    mask = given_mask ^ (rng.random((HEIGHT, WIDTH)) < 0.02)
    depth = np.where(rng.random((HEIGHT, WIDTH)) < 0.2, np.nan, 1.0).astype(np.float32)
    refined = refine_hand_mask_by_colour(mask, given_mask, image, depth, reach, TOLERANCE, SPREAD, MIN_PIXELS)
    changed = refined ^ mask
    assert not (changed & ~grown(given_mask, reach)).any()
    assert not (changed & np.isnan(depth)).any()


def test_the_segmenter_finds_a_held_block_under_a_coarse_mask_only_with_the_colour_image():
    block, hand, _, K = held_block()
    depth, _ = tabletop_depth({"block": (block, 0.125), "hand": (hand, 0.15)})
    visible = block & ~hand
    mask = grown(hull(hand), 3)
    image = painted((block, RED), (hand, SKIN))

    def objects(config, colour):
        found = DepthObjectSegmenter(config).detect(depth, K, exclude=mask, image=colour)
        return [found.masks[i] for i, c in enumerate(found.class_ids) if DEPTH_LABELS[c] == "object"]

    def iou(a, b):
        return (a & b).sum() / (a | b).sum()

    with_colour = objects(DepthObjectConfig(), image)
    assert len(with_colour) == 1 and iou(with_colour[0], visible) > 0.8
    for config, colour in ((DepthObjectConfig(hand_colour_tolerance=0), image), (DepthObjectConfig(), None)):
        assert not any(iou(found, visible) > 0.5 for found in objects(config, colour))
