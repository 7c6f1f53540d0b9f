"""Small pieces of binary masks shared by the depth objects and the hand masks: a mask's box, its
connected parts above a size, the 3x3 neighbourhood their morphology steps use."""
from __future__ import annotations

import cv2
import numpy as np

#: the 8-neighbourhood (and the pixel itself) of one morphology step
SQUARE = np.ones((3, 3), np.uint8)


def mask_box(mask: np.ndarray) -> np.ndarray:
    """(x1, y1, x2, y2) of a non-empty (H, W) mask, the far edges exclusive."""
    rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
    return np.array([cols[0], rows[0], cols[-1] + 1, rows[-1] + 1], dtype=np.float64)


def parts_of_at_least(mask: np.ndarray, min_pixels: float) -> np.ndarray:
    """The 8-connected parts of `mask` with at least `min_pixels` pixels."""
    if not mask.any():
        return np.asarray(mask, dtype=bool)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
    big = np.flatnonzero(stats[:, cv2.CC_STAT_AREA] >= min_pixels)
    return np.isin(labels, big[big > 0])
