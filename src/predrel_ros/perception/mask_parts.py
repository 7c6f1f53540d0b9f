"""Small pieces of binary masks shared by the depth objects and the hand masks: a mask's box, its
connected parts above a size, the 3x3 neighbourhood their morphology steps use.

The parts are labelled with `cv2.connectedComponents` and measured with `np.bincount`: OpenCV's
`connectedComponentsWithStats` computes boxes and centroids too and took 0.5 ms a 320x240 frame against
0.15 ms for the labels and their pixel counts; the parts kept are read through a lookup table over the
labels (`np.isin` over a frame of labels took three times as long)."""
from __future__ import annotations

import cv2
import numpy as np

#: the 8-neighbourhood (and the pixel itself) of one morphology step
SQUARE = np.ones((3, 3), np.uint8)


def mask_box(mask: np.ndarray) -> np.ndarray:
    """(x1, y1, x2, y2) of a non-empty (H, W) mask, the far edges exclusive."""
    rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
    return np.array([cols[0], rows[0], cols[-1] + 1, rows[-1] + 1], dtype=np.float64)


def parts_of_at_least(mask: np.ndarray, min_pixels: float, largest_if_none: bool = False) -> np.ndarray:
    """The 8-connected parts of `mask` with at least `min_pixels` pixels; `largest_if_none`: the largest
    part (the first of equal ones) when none is that big."""
    if not mask.any():
        return np.asarray(mask, dtype=bool)
    count, labels = cv2.connectedComponents(mask.astype(np.uint8), connectivity=8)
    areas = np.bincount(labels.reshape(-1), minlength=count)
    kept = areas >= min_pixels
    kept[0] = False
    if largest_if_none and not kept.any():
        kept[1 + int(np.argmax(areas[1:]))] = True
    return kept[labels]
