"""A hand mask made to follow the hand's colour: what a landmark detector's mask covers of another colour
leaves it, the hand's colour just beside it joins it.

A mask drawn from hand landmarks is a smooth hull a frame late and a few pixels off: it closes the gaps
between fingers over what they hold and misses a finger's edge. Depth cannot tell a held object from the
fingers around it (they are at the same depth); colour mostly can. Per part of the mask (each hand has
its own colour), the hand's colour is the median chromaticity (each channel over their sum: shading
changes the brightness, hardly the chromaticity) of the mask's inner pixels, the ones at least `reach`
pixels inside it, which an error of the mask's outline does not reach. A pixel is of the hand's colour
when its L1 chromaticity distance to that median is within `tolerance`, or `spread` times the 75th
percentile of the inner pixels' distances where the hand's own colour varies more. Then
  - pixels of the mask of another colour leave it, where they make a connected part of at least
    `min_pixels` (a highlight, a blended edge pixel or a small mark on the hand stays);
  - pixels of the hand's colour beside it join it, a pixel a step, up to `reach` steps (a finger's
    edge the mask missed; the depth refinement gives such a strip back where it continues into a surface
    at the hand's depth, which may be the held object or the hand itself).
Only pixels with depth (`depth_m` finite: what stands on the support) and bright enough for a
chromaticity (`MIN_BRIGHTNESS`) change side; a hand the colour of what it holds keeps its mask.
"""
from __future__ import annotations

import cv2
import numpy as np

from predrel_ros.perception.mask_parts import SQUARE, mask_box, parts_of_at_least

#: channel sum (0-765 for 8-bit images) under which a pixel's chromaticity is noise: it keeps its side
MIN_BRIGHTNESS = 60.0
#: fewest inner pixels a part's colour is measured on; a smaller part keeps its mask
MIN_COLOUR_PIXELS = 30
#: the inner pixels' distances whose percentile measures a hand's own colour variation
SPREAD_PERCENTILE = 75.0


def refine_hand_mask_by_colour(mask: np.ndarray, given: np.ndarray, image: np.ndarray, depth_m: np.ndarray,
                               reach: int, tolerance: float, spread: float, min_pixels: int) -> np.ndarray:
    """`mask`: the (H, W) bool hand mask so far (after the depth refinement); `given`: the mask as the
    detector gave it, whose inner pixels define each hand's colour; `image`: the registered (H, W, 3)
    colour image, any channel order; `depth_m`: metres, NaN where a pixel may not change side;
    `min_pixels`: the smallest connected part of another colour that leaves the mask (an object's
    sliver; a smaller one is a highlight or an edge of the hand)."""
    mask = np.asarray(mask, dtype=bool)
    given = np.asarray(given, dtype=bool)
    if not given.any() or reach < 1:
        return mask
    kernel = np.ones((2 * reach + 1,) * 2, np.uint8)
    out = mask.copy()
    height, width = given.shape
    x1, y1, x2, y2 = mask_box(given).astype(int)
    top, left = max(y1 - reach, 0), max(x1 - reach, 0)
    near = np.s_[top:min(y2 + reach, height), left:min(x2 + reach, width)]
    # each part of the given mask with what lies within `reach` of it: one hand, measured on its own
    count, parts, stats, _ = cv2.connectedComponentsWithStats(cv2.dilate(given[near].astype(np.uint8), kernel),
                                                              connectivity=8)
    for part in range(1, count):
        x, y, w, h = stats[part, :4]
        region = parts[y:y + h, x:x + w] == part
        window = np.s_[top + y:top + y + h, left + x:left + x + w]
        given_part = given[window] & region
        pixels = image[window]
        channels = [pixels[..., c].astype(np.float32) for c in range(3)]
        brightness = channels[0] + channels[1] + channels[2]  # written out: numpy's sum over the last axis is slower
        bright = brightness > MIN_BRIGHTNESS
        inner = cv2.erode(given_part.astype(np.uint8), kernel, borderType=cv2.BORDER_CONSTANT,
                          borderValue=0).astype(bool) & bright
        if inner.sum() < MIN_COLOUR_PIXELS:
            inner = given_part & bright
        if inner.sum() < MIN_COLOUR_PIXELS:
            continue
        scale = 1.0 / np.maximum(brightness, 1.0)
        chroma = [channel * scale for channel in channels]
        distance = sum(np.abs(c - np.median(c[inner])) for c in chroma)
        limit = max(tolerance, spread * float(np.percentile(distance[inner], SPREAD_PERCENTILE)))
        hand_coloured = distance <= limit
        may_change = region & bright & np.isfinite(depth_m[window])
        leaving = out[window] & may_change & ~hand_coloured
        refined = out[window] & ~parts_of_at_least(leaving, min_pixels)
        joinable = may_change & hand_coloured
        for _ in range(reach):
            joining = joinable & ~refined & cv2.dilate(refined.astype(np.uint8), SQUARE).astype(bool)
            if not joining.any():
                break
            refined |= joining
        out[window] = np.where(region, refined, out[window])
    return out

