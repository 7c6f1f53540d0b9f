"""Blur: defocus (isotropic Gaussian) followed by linear motion blur along a random direction.

The motion kernel is a Gaussian-weighted line (as ImageNet-C's motion blur, which is parameterised
by a radius and a sigma along the line) rather than a box: Gaussians form a semigroup, so a larger
sigma equals the smaller one followed by a further blur, and the loss of detail grows strictly with
severity. The direction is drawn per (seed, frame_index): the camera or the hand moves differently
from frame to frame, and the direction does not depend on severity, so severities of one frame blur
along the same line.

The line filter runs as a shear, a 1-D Gaussian along one image axis, and the inverse shear (both
bilinear, so the line is centred to sub-pixel accuracy; they add at most a quarter pixel squared of
cross-line smoothing each). That costs a few milliseconds per 640x480 frame where a 2-D kernel of
the same reach would cost about 15 ms.
"""
from __future__ import annotations

import math

import cv2
import numpy as np

from predrel_ros.degradations import draws

_BORDER = cv2.BORDER_REFLECT_101


def motion_angle(seed: int, frame_index: int) -> float:
    """Motion direction in radians, in [0, pi), for one frame."""
    return float(draws.uniform(seed, "blur.angle", frame_index)[0]) * math.pi


def blur_image(image: np.ndarray, gaussian_sigma: float, motion_sigma: float, angle: float) -> np.ndarray:
    """Defocus with `gaussian_sigma`, then motion-blur with `motion_sigma` along `angle` (pixels, radians)."""
    out = image
    if gaussian_sigma > 0:
        out = cv2.GaussianBlur(out, (0, 0), gaussian_sigma, borderType=_BORDER)
    if motion_sigma > 0:
        out = _line_gaussian(out, motion_sigma, angle)
    return out if out is not image else image.copy()


def _gaussian_taps(sigma: float) -> np.ndarray:
    radius = max(1, int(math.ceil(3.0 * sigma)))
    return cv2.getGaussianKernel(2 * radius + 1, sigma, cv2.CV_32F)


def _line_gaussian(image: np.ndarray, sigma: float, angle: float) -> np.ndarray:
    """1-D Gaussian with standard deviation `sigma` along direction (cos angle, sin angle)."""
    cos, sin = math.cos(angle), math.sin(angle)
    along_rows = abs(cos) >= abs(sin)  # walk along rows (x) or along columns (y)
    slope = sin / cos if along_rows else cos / sin  # cross-axis pixels per step, |slope| <= 1
    sigma_axis = sigma * (abs(cos) if along_rows else abs(sin))
    if sigma_axis < 1e-3:
        return image.copy()
    taps = _gaussian_taps(sigma_axis)
    identity = np.ones((1, 1), np.float32)
    kx, ky = (taps, identity) if along_rows else (identity, taps)
    if abs(slope) < 1e-6:
        return cv2.sepFilter2D(image, -1, kx, ky, borderType=_BORDER)
    # Pad by the kernel radius along the walk (reflected, like GaussianBlur's border) and by the
    # line's largest cross-axis excursion, shear cyclically, filter, shear back and crop. A tap never
    # reaches further than `margin` across, so no output pixel reads across the wrap.
    radius = len(taps) // 2
    margin = int(math.ceil(abs(slope) * radius)) + 2
    height, width = image.shape[:2]
    if along_rows:  # across = rows: sheared[a, j] = padded[a + slope * j (cyclic), j]
        padded = cv2.copyMakeBorder(image, margin, margin, radius, radius, _BORDER)
        shear = np.float32([[1, 0, 0], [slope, 1, 0]])
        # out[y, x] = filtered[y + margin - slope * (x + radius) (cyclic), x + radius]
        unshear = np.float32([[1, 0, radius], [-slope, 1, margin - slope * radius]])
    else:  # across = columns: sheared[i, a] = padded[i, a + slope * i (cyclic)]
        padded = cv2.copyMakeBorder(image, radius, radius, margin, margin, _BORDER)
        shear = np.float32([[1, slope, 0], [0, 1, 0]])
        unshear = np.float32([[1, -slope, margin - slope * radius], [0, 1, radius]])
    flags = cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP
    sheared = cv2.warpAffine(padded, shear, (padded.shape[1], padded.shape[0]), flags=flags,
                             borderMode=cv2.BORDER_WRAP)
    filtered = cv2.sepFilter2D(sheared, -1, kx, ky, borderType=_BORDER)
    return cv2.warpAffine(filtered, unshear, (width, height), flags=flags, borderMode=cv2.BORDER_WRAP)
