"""Exact depth images of a synthetic table top: a tilted plane seen by a pinhole camera, with flat-topped
blocks standing on it (a region of the image raised to a height above the table, or to an (H, W) array
of heights: a face rising from the table).

    depth, K = tabletop_depth({"block": (region, 0.05)})   # region: (H, W) bool, height in metres
"""
from __future__ import annotations

import numpy as np

WIDTH, HEIGHT = 320, 240
K = np.array([[260.0, 0, 159.5], [0, 260.0, 119.5], [0, 0, 1]])
#: the table's unit normal in the camera's optical frame (towards the camera) and the camera's height
TABLE_NORMAL = np.array([0.0, -0.8, -0.6])
CAMERA_HEIGHT = 0.9


def region(x1: int, y1: int, x2: int, y2: int) -> np.ndarray:
    mask = np.zeros((HEIGHT, WIDTH), bool)
    mask[y1:y2, x1:x2] = True
    return mask


def tabletop_depth(raised: dict[str, tuple[np.ndarray, float]] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """float32 depth (metres) of the table with each region raised to its height, and K."""
    v, u = np.mgrid[0:HEIGHT, 0:WIDTH].astype(np.float64)
    rays = np.stack([(u - K[0, 2]) / K[0, 0], (v - K[1, 2]) / K[1, 1], np.ones_like(u)], axis=-1)
    heights = np.zeros((HEIGHT, WIDTH))
    for mask, height in (raised or {}).values():
        heights[mask] = height if np.isscalar(height) else np.asarray(height)[mask]
    # a point z * ray lies at height n . (z * ray) + d = h  ->  z = (h - d) / (n . ray)
    depth = (heights - CAMERA_HEIGHT) / (rays @ TABLE_NORMAL)
    depth[depth <= 0] = np.nan
    return depth.astype(np.float32), K.copy()


def standing_block(x1, x2, bottom, front_rows, top_rows, base, height):
    """The visible faces of an upright block seen from above the front: its front face rising from
    `base` (row `bottom`) to base + height over `front_rows` rows, then its flat top, farther up the image."""
    rows = np.arange(HEIGHT)[:, None]
    heights = np.zeros((HEIGHT, WIDTH)) + base + height * np.clip((bottom - rows) / front_rows, 0, 1)
    return region(x1, bottom - front_rows - top_rows, x2, bottom), heights
