"""A track's 3D position for the dynamic rule, steadied against changes of what is visible of it.

`point_sets.position_m` is the median of the visible surface: when a hand covers part of a still
container, or uncovers it, the median moves by centimetres while the container does not (a still
object then reads as moving: MT / FMT in place of S or GC). The silhouette tells the two apart:
when one of two consecutive masks lies (almost) wholly inside the other (`containment`: their common
pixels over the smaller mask's), nothing moved across the image, only the visible part changed; the
frame's shift is then that of the pixels visible in both frames, each pixel's back-projected point
now minus then, per-axis median: exactly 0 for a still object whatever the occlusion, the motion for
one moving along the viewing ray. Otherwise (the mask moved, or too few common samples) the shift is
that of the median position, as before. The steady position accumulates these shifts.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import cv2
import numpy as np

from predrel_ros.predicates.geometry import EntityGeometry
from predrel_ros.predicates.order_statistics import median
from predrel_ros.predicates.point_sets import MIN_SAMPLES, back_projected, pixel_stride

if TYPE_CHECKING:
    from predrel_ros.core.frame import CameraIntrinsics

__all__ = ["SteadyPosition"]

#: the common pixels' shift is the median over every STRIDE-th row and column of them, or more
#: sparsely where that leaves more than about `point_sets.SAMPLE_PIXELS` of them (a median needs no
#: more, and a frame's masks may hold a hundred thousand pixels)
STRIDE = 2


class SteadyPosition:
    """The steadied position (m) of one track, fed its frames in order."""

    __slots__ = ("_raw", "_geometry", "_depth", "_steady")

    def __init__(self) -> None:
        self._raw: tuple[float, ...] | None = None
        self._geometry: EntityGeometry | None = None
        self._depth: np.ndarray | None = None
        self._steady: tuple[float, ...] = ()

    def update(self, raw: tuple[float, ...], geometry: EntityGeometry, depth_m: np.ndarray, camera: CameraIntrinsics,
               containment: float | None) -> tuple[float, ...]:
        """This frame's steady position from its raw (`position_m`) one, mask and depth; containment
        None: the raw position."""
        previous, previous_geometry, previous_depth = self._raw, self._geometry, self._depth
        self._raw, self._geometry, self._depth = raw, geometry, depth_m
        if containment is None or previous is None:
            self._steady = raw
            return raw
        shift = _common_shift(previous_geometry, previous_depth, geometry, depth_m, camera, containment)
        if shift is None:
            shift = tuple(r - p for r, p in zip(raw, previous))
        self._steady = tuple(s + d for s, d in zip(self._steady, shift))
        return self._steady


def _common_shift(before: EntityGeometry, depth_before: np.ndarray, now: EntityGeometry, depth_now: np.ndarray,
                  camera: CameraIntrinsics, containment: float) -> tuple[float, float, float] | None:
    """The per-axis median shift of the pixels visible in both frames when one mask lies within the
    other (common pixels >= containment x the smaller mask), else None."""
    if before.mask is None or now.mask is None or before.mask.shape != now.mask.shape:
        return None
    height, width = now.mask.shape
    x1, y1 = max(math.floor(min(before.x1, now.x1)), 0), max(math.floor(min(before.y1, now.y1)), 0)
    x2 = min(math.ceil(max(before.x2, now.x2)) + 1, width)
    y2 = min(math.ceil(max(before.y2, now.y2)) + 1, height)
    common = cv2.bitwise_and(before.mask[y1:y2, x1:x2], now.mask[y1:y2, x1:x2])
    shared = cv2.countNonZero(common)
    if shared < containment * min(before.area, now.area):
        return None
    stride = pixel_stride(shared, STRIDE)
    z_before, z_now = depth_before[y1:y2:stride, x1:x2:stride], depth_now[y1:y2:stride, x1:x2:stride]
    with np.errstate(invalid="ignore"):
        dz = z_now.astype(np.float64) - z_before          # NaN where either has no depth
        valid = (common[::stride, ::stride] != 0) & (z_before > 0) & (z_now > 0) & np.isfinite(dz)
    if np.count_nonzero(valid) < MIN_SAMPLES:
        return None
    dx, dy, dz = back_projected(valid, dz[valid], np.arange(x1, x2, stride), np.arange(y1, y2, stride), camera)
    return median(dx), median(dy), median(dz)               # dx, dy, dz: this function's own arrays
