"""Contact from depth at the touching boundary (metres), where a depth image exists.

Two masks that touch in the image need not touch in space: an object standing in front of another
has its mask right next to the other's, and a cup lifted off the table still borders the table's
pixels. One depth value per entity (the centroid's) cannot tell these from a real contact, and says
nothing about a surface's extent. What can: the depth on both sides of the boundary where the masks
meet. `boundary_depth_gap_m` compares each mask's pixels within `radius_px` of the other mask with
the depths of the other mask's pixels around them:

    gap(p) = distance of depth(p) from [min, max] of the other mask's depths in p's neighbourhood

(0 when p's depth lies among its neighbours' on the other side, as where a cup stands on a table
that recedes behind it), and returns a low quantile of gap(p) over all such pixels of both masks:
the masks touch in space when some stretch of their common boundary does. Robust to depth holes
(NaN or <= 0: not sampled) and to mask edges (samples come from each mask eroded by one pixel, as
edge pixels of a perceived mask often carry the depth of what lies behind it).
"""
from __future__ import annotations

import math

import cv2
import numpy as np

from predrel_ros.predicates.geometry import EntityGeometry

#: share of the boundary samples that must lie within the returned gap
TOUCHING_QUANTILE = 0.1


def _crop_mask(geometry: EntityGeometry, x1: int, y1: int, x2: int, y2: int) -> np.ndarray:
    if geometry.mask is not None:
        return geometry.mask[y1:y2, x1:x2] != 0
    mask = np.zeros((y2 - y1, x2 - x1), bool)
    bx1, by1 = max(math.floor(geometry.x1) - x1, 0), max(math.floor(geometry.y1) - y1, 0)
    bx2, by2 = math.ceil(geometry.x2) + 1 - x1, math.ceil(geometry.y2) + 1 - y1
    mask[by1:max(by2, by1), bx1:max(bx2, bx1)] = True
    return mask


def _samples(mask: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Pixels of `mask` one pixel inside its edge with a valid depth (the whole mask when too thin)."""
    inner = cv2.erode(mask.view(np.uint8), np.ones((3, 3), np.uint8), borderType=cv2.BORDER_REPLICATE) != 0
    if not (inner & valid).any():
        inner = mask
    return inner & valid


def _gaps(depth: np.ndarray, own: np.ndarray, other: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    """gap(p) (see the module docstring) of every `own` pixel with `other` pixels in its neighbourhood."""
    low = cv2.erode(np.where(other, depth, np.inf).astype(np.float32), kernel, borderType=cv2.BORDER_CONSTANT,
                    borderValue=np.inf)
    high = cv2.dilate(np.where(other, depth, -np.inf).astype(np.float32), kernel, borderType=cv2.BORDER_CONSTANT,
                      borderValue=-np.inf)
    near = own & np.isfinite(low)
    values = depth[near]
    return np.maximum(0.0, np.maximum(low[near] - values, values - high[near]))


def boundary_depth_gap_m(geo_i: EntityGeometry, geo_j: EntityGeometry, depth_m: np.ndarray,
                         radius_px: float) -> float | None:
    """Depth gap in metres where masks i and j meet (see the module docstring), or None when no
    pixel with a valid depth lies within `radius_px` (image pixels) of the other mask."""
    reach = math.ceil(radius_px) + 1                      # + 1: samples start one pixel inside the edges
    height, width = depth_m.shape
    x1 = max(math.floor(max(geo_i.x1, geo_j.x1)) - reach, 0)
    y1 = max(math.floor(max(geo_i.y1, geo_j.y1)) - reach, 0)
    x2 = min(math.ceil(min(geo_i.x2, geo_j.x2)) + reach + 1, width)
    y2 = min(math.ceil(min(geo_i.y2, geo_j.y2)) + reach + 1, height)
    if x2 <= x1 or y2 <= y1:
        return None
    # neighbourhoods reach `reach` px beyond the zone: crop that much more
    cx1, cy1, cx2, cy2 = max(x1 - reach, 0), max(y1 - reach, 0), min(x2 + reach, width), min(y2 + reach, height)
    depth = depth_m[cy1:cy2, cx1:cx2].astype(np.float32)
    valid = np.isfinite(depth) & (depth > 0)
    samples_i = _samples(_crop_mask(geo_i, cx1, cy1, cx2, cy2), valid)
    samples_j = _samples(_crop_mask(geo_j, cx1, cy1, cx2, cy2), valid)
    kernel = np.ones((2 * reach + 1, 2 * reach + 1), np.uint8)
    gaps = np.concatenate((_gaps(depth, samples_i, samples_j, kernel), _gaps(depth, samples_j, samples_i, kernel)))
    if not gaps.size:
        return None
    return float(np.quantile(gaps, TOUCHING_QUANTILE))
