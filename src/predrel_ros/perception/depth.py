"""A 3D point per entity from an aligned depth image: the robust median of its masked depth.

Depth images come as ROS encodes them: 16UC1 in millimetres (integers, times `scale` = 0.001) or
32FC1 in metres (floats). Zero, NaN and values outside [min_depth_m, max_depth_m] are unknown.
The pixels of the entity's mask (without a mask: the central `box_core` part of its box, to keep
the background out) are back-projected with the pinhole intrinsics K, and the point is the
per-axis median of those 3D points, so mask pixels that bleed onto the background or a stray
depth hole do not pull it. The depth image must be registered to the colour image (same size).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class DepthConfig:
    scale: float = 0.001  # metres per unit of an integer depth image (16UC1 millimetres)
    min_depth_m: float = 0.05
    max_depth_m: float = 20.0
    min_pixels: int = 10  # fewer valid depth pixels: no 3D point
    box_core: float = 0.5  # without a mask, use this central fraction of the box (per side)

    def __post_init__(self) -> None:
        if self.scale <= 0:
            raise ValueError(f"depth.scale must be positive, got {self.scale}")
        if not 0 <= self.min_depth_m < self.max_depth_m:
            raise ValueError(f"depth needs 0 <= min_depth_m < max_depth_m, got {self.min_depth_m} "
                             f"and {self.max_depth_m}")
        if self.min_pixels < 1:
            raise ValueError(f"depth.min_pixels must be at least 1, got {self.min_pixels}")
        if not 0 < self.box_core <= 1:
            raise ValueError(f"depth.box_core must lie in (0, 1], got {self.box_core}")


def depth_in_metres(depth: np.ndarray, config: DepthConfig) -> np.ndarray:
    """float32 metres with NaN where the depth is unknown or out of range."""
    depth = np.asarray(depth)
    if depth.ndim == 3 and depth.shape[2] == 1:
        depth = depth[:, :, 0]
    if depth.ndim != 2:
        raise ValueError(f"a depth image must be H x W, got shape {depth.shape}")
    if np.issubdtype(depth.dtype, np.integer):
        metres = depth.astype(np.float32) * np.float32(config.scale)
    elif np.issubdtype(depth.dtype, np.floating):
        metres = depth.astype(np.float32, copy=True)
    else:
        raise ValueError(f"a depth image must hold integers (e.g. millimetres) or floats (metres), "
                         f"got {depth.dtype}")
    metres[~((metres >= config.min_depth_m) & (metres <= config.max_depth_m))] = np.nan
    return metres


def intrinsics_matrix(camera) -> np.ndarray:
    """3 x 3 K from a matrix, a flat 9-list (CameraInfo.k) or an object with a `K` attribute."""
    K = np.asarray(getattr(camera, "K", camera), dtype=np.float64).reshape(3, 3)
    if K[0, 0] <= 0 or K[1, 1] <= 0:
        raise ValueError(f"camera intrinsics need positive focal lengths, got fx={K[0, 0]} fy={K[1, 1]}")
    return K


def entity_point(depth_m: np.ndarray, K: np.ndarray, box: np.ndarray, mask: np.ndarray | None,
                 config: DepthConfig) -> np.ndarray | None:
    """(X, Y, Z) in the camera frame, metres, or None when too few pixels have a depth."""
    height, width = depth_m.shape
    if mask is not None and mask.any():
        if mask.shape != depth_m.shape:
            raise ValueError(f"the depth image ({width}x{height}) is not registered to the colour "
                             f"image ({mask.shape[1]}x{mask.shape[0]})")
        ys, xs = np.nonzero(mask)
    else:
        x1, y1, x2, y2 = np.asarray(box, dtype=np.float64)
        margin_x = (x2 - x1) * (1 - config.box_core) / 2
        margin_y = (y2 - y1) * (1 - config.box_core) / 2
        c0, c1 = int(np.floor(x1 + margin_x)), int(np.ceil(x2 - margin_x))
        r0, r1 = int(np.floor(y1 + margin_y)), int(np.ceil(y2 - margin_y))
        c0, r0 = max(c0, 0), max(r0, 0)
        c1, r1 = min(max(c1, c0 + 1), width), min(max(r1, r0 + 1), height)
        ys, xs = np.mgrid[r0:r1, c0:c1]
        ys, xs = ys.reshape(-1), xs.reshape(-1)
    z = depth_m[ys, xs]
    valid = np.isfinite(z)
    if int(valid.sum()) < config.min_pixels:
        return None
    z, xs, ys = z[valid].astype(np.float64), xs[valid], ys[valid]
    x = (xs - K[0, 2]) * z / K[0, 0]
    y = (ys - K[1, 2]) * z / K[1, 1]
    return np.array([np.median(x), np.median(y), np.median(z)])


def depth_edges(depth_m: np.ndarray, relative_jump: float, far_side_only: bool = False) -> np.ndarray:
    """(H, W) bool: pixels with a 4-neighbour whose depth differs by more than `relative_jump` of the
    nearer one, or that is unknown where they are known (or the other way round). `far_side_only`:
    of a jump between known depths only the farther pixel (the nearer surface keeps its outline), and
    unknown neighbours make no edge."""
    edges = np.zeros(depth_m.shape, dtype=bool)
    # each neighbour pair along an axis as two views of the image (no copies), and of the edges
    for first, second, first_edges, second_edges in ((depth_m[:-1], depth_m[1:], edges[:-1], edges[1:]),
                                                     (depth_m[:, :-1], depth_m[:, 1:], edges[:, :-1], edges[:, 1:])):
        with np.errstate(invalid="ignore"):
            step = np.abs(first - second) > relative_jump * np.fmin(first, second)
            if far_side_only:
                first_far = first > second
                first_edges |= step & first_far
                second_edges |= step & ~first_far
                continue
        step |= np.isfinite(first) != np.isfinite(second)
        first_edges |= step
        second_edges |= step
    return edges
