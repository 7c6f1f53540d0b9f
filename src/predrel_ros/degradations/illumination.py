"""Illumination: low light, overexposure or contrast reduction (one variant per degrader).

All three are one intensity transform, y = clip(c * clip(g * x) + (1 - c) * m), with exposure gain g
and contrast factor c (m: mean of clip(g * x) over the frame):
- low_light: g = low_light_gain < 1, c = 1 (an underexposed frame; darker and flatter);
- overexposure: g = overexposure_gain > 1, c = 1 (bright parts saturate at 255 and lose detail);
- contrast: g = 1, c = contrast_factor < 1 (haze or glare; intensities pulled to the mean).
Every pixel moves monotonically away from its clean value as severity grows. The variant comes from
`DegradationOptions.illumination_mode` ("by_seed": seed % 3 picks low_light, overexposure, contrast,
so a sweep over seeds covers all three). It is a per-value lookup table, so it costs well under a
millisecond per frame.
"""
from __future__ import annotations

import cv2
import numpy as np

from predrel_ros.degradations.options import ILLUMINATION_VARIANTS, DegradationOptions

_VALUES = np.arange(256, dtype=np.float64)
#: variant -> its column of the severity table
VARIANT_COLUMNS = {"low_light": "low_light_gain", "overexposure": "overexposure_gain",
                   "contrast": "contrast_factor"}


def variant(seed: int, options: DegradationOptions) -> str:
    """The illumination variant applied for this seed and options."""
    if options.illumination_mode == "by_seed":
        return ILLUMINATION_VARIANTS[seed % len(ILLUMINATION_VARIANTS)]
    return options.illumination_mode


def gain_and_contrast(row: dict[str, float], name: str) -> tuple[float, float]:
    """(exposure gain, contrast factor) of variant `name` from one severity row of the table."""
    value = row[VARIANT_COLUMNS[name]]
    return (1.0, value) if name == "contrast" else (value, 1.0)


def illuminate(image: np.ndarray, gain: float, contrast: float) -> np.ndarray:
    """Apply y = clip(c * clip(g * x) + (1 - c) * m) with lookup tables."""
    exposed = np.clip(np.rint(gain * _VALUES), 0, 255).astype(np.uint8)
    out = cv2.LUT(image, exposed)
    if contrast < 1.0:
        mean = float(np.mean(cv2.mean(out)[: 1 if image.ndim == 2 else 3]))
        squeezed = np.clip(np.rint(contrast * _VALUES + (1.0 - contrast) * mean), 0, 255).astype(np.uint8)
        out = cv2.LUT(out, squeezed)
    return out
