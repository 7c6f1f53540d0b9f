"""Per-entity and per-pair image geometry for predicate extraction, computed on small crops.

Full-frame work is done once per entity and frame (the mask's bounding rectangle and pixel count);
every pairwise measurement works on the crop where the answer can lie:

- `boundary_distance` (the paper's Delta(m_i, m_j)) runs a distance transform only over the region
  where the two rectangles, each grown by the distance limit, overlap; pairs whose rectangles are
  farther apart than the limit are answered by the rectangle gap alone (a lower bound of the mask
  distance), which is all the contact rule and its margin q_sp need.
- `inside_fraction` and `support_fraction` count pixels inside one rectangle or one thin band.
- `FrameGeometry` holds the rectangles of all entities of a frame as arrays and answers the pairwise
  measurements of many pairs at once: from the rectangles alone where they decide (pairs too far
  apart to touch, a rectangle inside the other or apart from it), per pair on the crops otherwise.

Pixel coordinates: mask rectangles hold inclusive pixel indices [x1, x2] x [y1, y2]; distances are
between pixel centres (two 4-adjacent pixels are 1 apart, overlapping masks 0). Entities without a
mask use their box as a filled rectangle.
"""
from __future__ import annotations

import math
from typing import Sequence

import cv2
import numpy as np

from predrel_ros.core.entities import Entity

#: px by which the first search window for a mask exceeds the entity box (then the full frame)
_BOX_SLACK = 4


class EntityGeometry:
    """Geometry of one entity in one frame, computed once and shared by all pairs it is part of.

    empty: the entity has a mask with no pixel (no segmentation evidence this frame).
    """

    __slots__ = ("entity", "mask", "x1", "y1", "x2", "y2", "area", "cx", "cy", "empty", "width", "height",
                 "half_diagonal", "_bottom")

    def __init__(self, entity: Entity) -> None:
        self.entity = entity
        self._bottom: tuple[np.ndarray, np.ndarray] | None = None
        self.cx = float(entity.centroid[0])
        self.cy = float(entity.centroid[1])
        mask = entity.mask
        if mask is None:
            self.mask = None
            self.x1, self.y1, self.x2, self.y2 = (float(v) for v in entity.box)
            self.area = max(self.x2 - self.x1, 0.0) * max(self.y2 - self.y1, 0.0)
            self.empty = False
            self._extent(0.0)
            return
        self.mask = mask.view(np.uint8)
        if entity.mask_crop is not None:        # every pixel lies in it: the rest of the frame is not read
            x, y, w, h = _crop_rectangle(self.mask, entity.mask_crop)
            self.area = float(cv2.countNonZero(self.mask[y:y + h, x:x + w])) if w else 0.0
        else:
            self.area = float(cv2.countNonZero(self.mask))
            x, y, w, h = _mask_rectangle(self.mask, entity.box, self.area) if self.area else (0, 0, 1, 1)
        self.empty = self.area == 0
        if self.empty:
            x, y, w, h = 0, 0, 1, 1
        self.x1, self.y1, self.x2, self.y2 = float(x), float(y), float(x + w - 1), float(y + h - 1)
        self._extent(1.0)

    def _extent(self, pixel: float) -> None:
        """width, height and half_diagonal (once per entity and frame, read by every pair); pixel: 1 for
        a mask's inclusive pixel indices, 0 for a box."""
        self.width = self.x2 - self.x1 + pixel
        self.height = self.y2 - self.y1 + pixel
        self.half_diagonal = 0.5 * math.hypot(self.width, self.height)

    def bottom_profile(self) -> tuple[np.ndarray, np.ndarray]:
        """(columns, lowest row) of every mask column; for a box, its bottom edge sampled per pixel."""
        if self._bottom is None:
            if self.mask is None:
                cols = np.arange(math.floor(self.x1), math.ceil(self.x2) + 1)
                rows = np.full(cols.shape, round(self.y2))
            else:
                x1, y1, x2, y2 = int(self.x1), int(self.y1), int(self.x2), int(self.y2)
                crop = self.mask[y1:y2 + 1, x1:x2 + 1]
                flipped = crop[::-1] != 0
                present = flipped.any(axis=0)
                lowest = (crop.shape[0] - 1) - flipped.argmax(axis=0)
                cols = np.flatnonzero(present) + x1
                rows = lowest[present] + y1
            self._bottom = (cols, rows)
        return self._bottom


def _mask_rectangle(mask: np.ndarray, box: np.ndarray, area: float) -> tuple[int, int, int, int]:
    """Bounding rectangle (x, y, w, h) of the mask's `area` pixels (area > 0).

    Looks inside the entity box grown by a few pixels first (the usual case, and cheap); when that
    window does not hold all the pixels, the whole frame is searched.
    """
    height, width = mask.shape
    x1 = max(int(math.floor(box[0])) - _BOX_SLACK, 0)
    y1 = max(int(math.floor(box[1])) - _BOX_SLACK, 0)
    x2 = min(int(math.ceil(box[2])) + _BOX_SLACK + 1, width)
    y2 = min(int(math.ceil(box[3])) + _BOX_SLACK + 1, height)
    if x2 > x1 and y2 > y1:
        window = mask[y1:y2, x1:x2]
        if cv2.countNonZero(window) == area:
            x, y, w, h = cv2.boundingRect(window)
            return x + x1, y + y1, w, h
    return cv2.boundingRect(mask)


def _crop_rectangle(mask: np.ndarray, crop: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
    """Bounding rectangle (x, y, w, h) of the mask's pixels, all of which lie in `crop` (x, y, width,
    height); w = 0 when there are none."""
    x, y, width, height = crop
    if not width or not height:
        return 0, 0, 0, 0
    bx, by, w, h = cv2.boundingRect(mask[y:y + height, x:x + width])
    return bx + x, by + y, w, h


def rectangle_gap(a: EntityGeometry, b: EntityGeometry) -> float:
    """Euclidean gap between the two rectangles; for masks, between the centres of their outermost
    pixels, a lower bound of the distance between the centres of their nearest pixels."""
    gap_x = max(0.0, a.x1 - b.x2, b.x1 - a.x2)
    gap_y = max(0.0, a.y1 - b.y2, b.y1 - a.y2)
    return math.hypot(gap_x, gap_y)


def boundary_distance(a: EntityGeometry, b: EntityGeometry, limit: float) -> float:
    """The paper's Delta(m_i, m_j): free space between the two masks, in frame px.

    For masks: the distance between the centres of the nearest pixels minus one, so masks that touch
    (4-adjacent pixels) or overlap are 0 apart and two masks with one free pixel between are 1 apart.
    Exact (up to OpenCV's 5x5 distance-transform approximation) when it is below `limit`; otherwise
    a value >= `limit`. Either entity without a mask: the gap between the rectangles.
    """
    if a.mask is None or b.mask is None:
        return rectangle_gap(a, b)
    return max(0.0, _centre_distance(a, b, limit + 1.0) - 1.0)


def _centre_distance(a: EntityGeometry, b: EntityGeometry, limit: float) -> float:
    """Distance between the centres of the nearest pixels of two masks; >= `limit` when not below it."""
    gap = rectangle_gap(a, b)
    if gap >= limit:
        return gap
    reach = int(math.ceil(limit))
    # nearest pixels closer than `limit` lie in a's rectangle within reach of b's, and vice versa
    ax1, ay1 = max(a.x1, b.x1 - reach), max(a.y1, b.y1 - reach)
    ax2, ay2 = min(a.x2, b.x2 + reach), min(a.y2, b.y2 + reach)
    bx1, by1 = max(b.x1, a.x1 - reach), max(b.y1, a.y1 - reach)
    bx2, by2 = min(b.x2, a.x2 + reach), min(b.y2, a.y2 + reach)
    x1, y1 = int(min(ax1, bx1)), int(min(ay1, by1))
    x2, y2 = int(max(ax2, bx2)) + 1, int(max(ay2, by2)) + 1
    b_crop = b.mask[y1:y2, x1:x2]
    a_crop = a.mask[y1:y2, x1:x2]
    if not cv2.countNonZero(b_crop) or not cv2.countNonZero(a_crop):
        return max(gap, float(limit))
    not_a = np.equal(a_crop, 0).view(np.uint8)     # 1 away from a: the transform measures to a
    distance = cv2.distanceTransform(not_a, cv2.DIST_L2, cv2.DIST_MASK_5)
    nearest = cv2.minMaxLoc(distance, b_crop)[0]
    return max(gap, float(nearest)) if nearest < limit else max(gap, float(limit), float(nearest))


def inside_fraction(a: EntityGeometry, b: EntityGeometry) -> float:
    """Fraction of a's mask pixels (or box area) that lie inside b's rectangle."""
    if a.area <= 0:
        return 0.0
    x1, y1 = max(a.x1, b.x1), max(a.y1, b.y1)
    x2, y2 = min(a.x2, b.x2), min(a.y2, b.y2)
    if a.mask is None:
        if x2 <= x1 or y2 <= y1:
            return 0.0
        return (x2 - x1) * (y2 - y1) / a.area
    x1, y1 = math.ceil(x1), math.ceil(y1)
    x2, y2 = math.floor(x2), math.floor(y2)
    if x2 < x1 or y2 < y1:
        return 0.0
    return cv2.countNonZero(a.mask[y1:y2 + 1, x1:x2 + 1]) / a.area


def support_fraction(a: EntityGeometry, b: EntityGeometry, band: int) -> float:
    """Fraction of a's bottom-boundary columns with a pixel of b within `band` px of a's lowest pixel.

    b supports a when b's mask lies right under a's lower boundary (a cube on a table, a block on a
    block): the band spans `band` rows above and below the lowest pixel of a in each column.
    b without a mask counts as its filled box.
    """
    cols, rows = a.bottom_profile()
    if cols.size == 0:
        return 0.0
    if b.mask is not None:
        height, width = b.mask.shape
        lowest, highest = int(rows.min()), int(rows.max())
        if cols[0] >= 0 and cols[-1] < width and lowest >= 0 and highest < height:        # cols ascend
            # the usual case, a's boundary in the frame: b dilated by the band along the columns, on the
            # crop the bands reach (outside the frame: no pixel), read at a's lowest pixels
            top, bottom, left = max(lowest - band, 0), min(highest + band + 1, height), int(cols[0])
            crop = b.mask[top:bottom, left:int(cols[-1]) + 1]
            reach = cv2.dilate(crop, np.ones((2 * band + 1, 1), np.uint8), borderType=cv2.BORDER_CONSTANT,
                               borderValue=0)
            return float(np.count_nonzero(reach[rows - top, cols - left])) / cols.size
    offsets = np.arange(-band, band + 1)[:, None]
    band_rows = rows[None, :] + offsets
    if b.mask is None:
        inside_cols = (cols >= b.x1) & (cols <= b.x2)
        inside_rows = ((band_rows >= b.y1) & (band_rows <= b.y2)).any(axis=0)
        return float(np.count_nonzero(inside_cols & inside_rows)) / cols.size
    valid_cols = (cols >= 0) & (cols < width)
    if not valid_cols.any():
        return 0.0
    cols_in = cols[valid_cols]
    rows_in = band_rows[:, valid_cols]
    in_frame = (rows_in >= 0) & (rows_in < height)
    hits = b.mask[np.clip(rows_in, 0, height - 1), cols_in[None, :]] != 0
    return float(np.count_nonzero((hits & in_frame).any(axis=0))) / cols.size


class FrameGeometry:
    """The `EntityGeometry`s of one frame as arrays (one row per entity, in the given order), for the
    pairwise measurements of many pairs (rows i[k], j[k]) at once; each equals its one-pair function."""

    def __init__(self, geometries: Sequence[EntityGeometry]) -> None:
        self.geometries = list(geometries)
        self.table = np.array([(g.x1, g.y1, g.x2, g.y2, g.cx, g.cy, g.width, g.height, g.half_diagonal, g.area,
                                g.mask is not None) for g in self.geometries], np.float64).reshape(-1, 11)
        (self.x1, self.y1, self.x2, self.y2, self.cx, self.cy, self.width, self.height, self.half_diagonal,
         self.area) = self.table[:, :10].T
        self.has_mask = self.table[:, 10] > 0

    def rows(self, i: np.ndarray) -> np.ndarray:
        """The entities' fields at rows i, one gather: (x1, y1, x2, y2, cx, cy, width, height,
        half_diagonal, area, has mask) x len(i)."""
        return self.table[i].T

    def rectangle_gaps(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        """`rectangle_gap` of every pair."""
        (x1_i, y1_i, x2_i, y2_i), (x1_j, y1_j, x2_j, y2_j) = self.rows(i)[:4], self.rows(j)[:4]
        gap_x = np.maximum(np.maximum(x1_i - x2_j, x1_j - x2_i), 0.0)
        gap_y = np.maximum(np.maximum(y1_i - y2_j, y1_j - y2_i), 0.0)
        return np.hypot(gap_x, gap_y)

    def boundary_distances(self, i: np.ndarray, j: np.ndarray, limit: float) -> np.ndarray:
        """`boundary_distance` of every pair: the rectangle gap where either has no mask or the masks
        are at least `limit` + 1 apart by their rectangles, the crops' distance transform for the rest."""
        gaps = self.rectangle_gaps(i, j)
        masks = self.has_mask[i] & self.has_mask[j]
        distances = np.where(masks, np.maximum(gaps - 1.0, 0.0), gaps)
        geometries = self.geometries
        for k in np.flatnonzero(masks & (gaps < limit + 1.0)).tolist():
            distances[k] = boundary_distance(geometries[i[k]], geometries[j[k]], limit)
        return distances

    def inside_fractions(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        """`inside_fraction` of every pair: 0 for rectangles apart, 1 for a mask whose rectangle lies in
        the other's, the pixels counted on the crop for the rest."""
        a, b = self.rows(i), self.rows(j)
        x1, y1 = np.maximum(a[0], b[0]), np.maximum(a[1], b[1])
        x2, y2 = np.minimum(a[2], b[2]), np.minimum(a[3], b[3])
        area = a[9]
        masks = a[10] > 0
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            boxes = np.where((x2 <= x1) | (y2 <= y1), 0.0, (x2 - x1) * (y2 - y1) / area)
        apart = (np.floor(x2) < np.ceil(x1)) | (np.floor(y2) < np.ceil(y1))
        within = (x1 <= a[0]) & (y1 <= a[1]) & (x2 >= a[2]) & (y2 >= a[3])
        fractions = np.where(masks, np.where(apart, 0.0, 1.0), boxes)
        fractions[area <= 0] = 0.0
        geometries = self.geometries
        for k in np.flatnonzero(masks & (area > 0) & ~apart & ~within).tolist():
            fractions[k] = inside_fraction(geometries[i[k]], geometries[j[k]])
        return fractions
