"""Low resolution: downsample by a factor per side, then resize back to the original resolution.

Downsampling averages pixel areas (cv2.INTER_AREA), as a lower-resolution sensor integrates light
over larger pixels; upsampling is bilinear, as a pipeline that resizes its input to the model size
would do. The result keeps the frame's size, so boxes and masks stay in the original pixel frame.
"""
from __future__ import annotations

import cv2
import numpy as np


def reduced_size(image_shape: tuple[int, ...], scale: float) -> tuple[int, int]:
    """(width, height) of the low-resolution intermediate frame, at least 1 x 1."""
    height, width = image_shape[:2]
    return max(1, int(round(width * scale))), max(1, int(round(height * scale)))


def low_resolution(image: np.ndarray, scale: float) -> np.ndarray:
    """Downsample by `scale` (0 < scale <= 1) and resize back; a copy of the image when scale is 1."""
    height, width = image.shape[:2]
    size = reduced_size(image.shape, scale)
    if size == (width, height):
        return image.copy()
    small = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
    return cv2.resize(small, (width, height), interpolation=cv2.INTER_LINEAR)
