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

The gap alone is fooled where the other mask's depths around a pixel span a wide range with
nothing in between: a hand lowering an object into a box has the box's near rim in front of it and
its far wall behind, so its depth lies within the box's range and the gap is 0 while the hand is 3-4
cm from every wall (dev seed 1403 `ep0001_insert`: 12 frames of contact, then a grasp of the box and
a release). So the result also carries the proximity:

    proximity(p) = distance of depth(p) from the nearest depth of the other mask's pixels in p's neighbourhood

(`PROXIMITY_QUANTILE` over at most `PROXIMITY_PIXELS` of the same pixels per mask, evenly spread
along the boundary; only where the gap passes, as contact needs both): a surface that recedes
behind a cup has some depth next to the cup's, a box's rim and far wall do not. Unlike a 3D
distance it does not grow with the pixel footprint, so its threshold holds at any resolution.

`boundary_separation_m` measures, with the camera intrinsics, the 3D distance between the two
masks' depth samples near their common boundary: the contact test of an object inside a hand's
image box (`predicates.enclosed_contact`), where the gripping hand hides the contact itself.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, NamedTuple

import cv2
import numpy as np
from scipy.spatial import cKDTree

from predrel_ros.predicates.geometry import EntityGeometry
from predrel_ros.predicates.order_statistics import quantile

if TYPE_CHECKING:                     # core.frame imports predicates.estimate
    from predrel_ros.core.frame import CameraIntrinsics

#: share of the boundary samples that must lie within the returned gap
TOUCHING_QUANTILE = 0.1
#: share of the boundary samples that must lie within the returned proximity
PROXIMITY_QUANTILE = 0.05
#: the most boundary pixels of each mask the proximity looks at (each one gathers a whole neighbourhood)
PROXIMITY_PIXELS = 64
#: share of i's boundary samples that must lie within the returned 3D separation of j
SEPARATION_QUANTILE = 0.25


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


def _gaps(depth: np.ndarray, own: np.ndarray, other: np.ndarray, kernel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(gap(p) of every `own` pixel with `other` pixels in its neighbourhood (the kernel, a square; see
    the module docstring), the mask of those pixels)."""
    low = cv2.erode(np.where(other, depth, np.inf).astype(np.float32), kernel, borderType=cv2.BORDER_CONSTANT,
                    borderValue=np.inf)
    high = cv2.dilate(np.where(other, depth, -np.inf).astype(np.float32), kernel, borderType=cv2.BORDER_CONSTANT,
                      borderValue=-np.inf)
    near = own & np.isfinite(low)
    values = depth[near]
    return np.maximum(0.0, np.maximum(low[near] - values, values - high[near])), near


def _proximities(depth: np.ndarray, pixels: np.ndarray, other: np.ndarray, reach: int) -> np.ndarray:
    """proximity(p) (see the module docstring): |depth(p) - depth(q)| minimised over the `other` pixels q
    within `reach` (a square) of each of at most PROXIMITY_PIXELS of `pixels`, evenly spread in the
    order of np.nonzero; gathered for these pixels only."""
    rows, columns = np.nonzero(pixels)
    if rows.size > PROXIMITY_PIXELS:
        keep = np.linspace(0, rows.size - 1, PROXIMITY_PIXELS).astype(np.intp)
        rows, columns = rows[keep], columns[keep]
    # the other mask's depths, inf elsewhere and in a border of `reach`, gathered as one flat index array
    others = np.pad(np.where(other, depth, np.inf), reach, constant_values=np.inf).ravel()
    width = depth.shape[1] + 2 * reach
    offsets = (np.arange(-reach, reach + 1)[:, None] * width + np.arange(-reach, reach + 1)[None, :]).ravel()
    centres = (rows + reach) * width + (columns + reach)
    around = others[centres[:, None] + offsets[None, :]]
    return np.abs(around - depth[rows, columns][:, None]).min(axis=1)


class _Zone:
    """The crop where masks i and j can meet within `reach` px, with `reach` px more around it for
    neighbourhoods: its depth, validity and each mask's depth samples; None when they cannot meet."""

    __slots__ = ("x0", "y0", "depth", "samples_i", "samples_j", "kernel")

    def __init__(self, geo_i: EntityGeometry, geo_j: EntityGeometry, depth_m: np.ndarray, reach: int) -> None:
        height, width = depth_m.shape
        x1 = max(math.floor(max(geo_i.x1, geo_j.x1)) - reach, 0)
        y1 = max(math.floor(max(geo_i.y1, geo_j.y1)) - reach, 0)
        x2 = min(math.ceil(min(geo_i.x2, geo_j.x2)) + reach + 1, width)
        y2 = min(math.ceil(min(geo_i.y2, geo_j.y2)) + reach + 1, height)
        self.depth = None
        if x2 <= x1 or y2 <= y1:
            return
        cx1, cy1, cx2, cy2 = max(x1 - reach, 0), max(y1 - reach, 0), min(x2 + reach, width), min(y2 + reach, height)
        self.x0, self.y0 = cx1, cy1
        self.depth = depth_m[cy1:cy2, cx1:cx2].astype(np.float32)
        valid = np.isfinite(self.depth) & (self.depth > 0)
        self.samples_i = _samples(_crop_mask(geo_i, cx1, cy1, cx2, cy2), valid)
        self.samples_j = _samples(_crop_mask(geo_j, cx1, cy1, cx2, cy2), valid)
        self.kernel = np.ones((2 * reach + 1, 2 * reach + 1), np.uint8)

    def near(self, own: np.ndarray, other: np.ndarray) -> np.ndarray:
        """`own` samples with an `other` sample within the kernel's reach."""
        return own & (cv2.dilate(other.view(np.uint8), self.kernel) != 0)


class BoundaryDepth(NamedTuple):
    """What the depth says where two masks meet (see the module docstring), metres; proximity None
    where it was not measured."""

    gap_m: float
    proximity_m: float | None


def boundary_depth_gap_m(geo_i: EntityGeometry, geo_j: EntityGeometry, depth_m: np.ndarray, radius_px: float,
                         proximity_within_m: float | None = None) -> BoundaryDepth | None:
    """Depth gap in metres where masks i and j meet (see the module docstring) and, when the gap is
    within `proximity_within_m`, the proximity; None when no pixel with a valid depth lies within
    `radius_px` (image pixels) of the other mask."""
    zone = _Zone(geo_i, geo_j, depth_m, math.ceil(radius_px) + 1)   # + 1: samples start one pixel inside the edges
    if zone.depth is None:
        return None
    gaps_i, near_i = _gaps(zone.depth, zone.samples_i, zone.samples_j, zone.kernel)
    gaps_j, near_j = _gaps(zone.depth, zone.samples_j, zone.samples_i, zone.kernel)
    if not (gaps_i.size or gaps_j.size):
        return None
    gap = quantile(np.concatenate((gaps_i, gaps_j)), TOUCHING_QUANTILE)
    if proximity_within_m is None or gap > proximity_within_m:
        return BoundaryDepth(gap, None)
    reach = zone.kernel.shape[0] // 2
    proximities = np.concatenate((_proximities(zone.depth, near_i, zone.samples_j, reach),
                                  _proximities(zone.depth, near_j, zone.samples_i, reach)))
    return BoundaryDepth(gap, quantile(proximities, PROXIMITY_QUANTILE))


def boundary_separation_m(geo_i: EntityGeometry, geo_j: EntityGeometry, depth_m: np.ndarray,
                          camera: CameraIntrinsics, radius_px: float) -> float | None:
    """3D separation in metres of i from j where their masks meet: the SEPARATION_QUANTILE of the
    distances from i's depth samples within `radius_px` of j's to the nearest of j's within
    `radius_px` of i's, back-projected with `camera`; None without valid samples on both sides.

    Unlike the depth gap it also sees a separation across the image plane (fingers opening beside
    an object they hide part of)."""
    zone = _Zone(geo_i, geo_j, depth_m, math.ceil(radius_px) + 1)
    if zone.depth is None:
        return None
    near_i = zone.near(zone.samples_i, zone.samples_j)
    near_j = zone.near(zone.samples_j, zone.samples_i)
    if not (near_i.any() and near_j.any()):
        return None
    distances, _ = cKDTree(_points(zone, near_j, camera)).query(_points(zone, near_i, camera))
    return quantile(distances, SEPARATION_QUANTILE)


def _points(zone: _Zone, samples: np.ndarray, camera: CameraIntrinsics) -> np.ndarray:
    """N x 3 camera-frame points (m) of the zone's sample pixels."""
    rows, columns = np.nonzero(samples)
    z = zone.depth[rows, columns].astype(np.float64)
    x = (columns + zone.x0 - camera.cx) * z / camera.fx
    y = (rows + zone.y0 - camera.cy) * z / camera.fy
    return np.stack((x, y, z), axis=1)
