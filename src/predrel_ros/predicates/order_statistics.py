"""np.median and np.quantile (linear) of the few hundred to few thousand depth samples a predicate
test reads, with numpy's values but without their per-call overhead (about 50 us a call, more than
the sort of such an array): the depth tests of every pair whose masks meet, the 3D positions and
shifts of every entity, call them a few dozen times a frame."""
from __future__ import annotations

import math

import numpy as np


def median(values: np.ndarray) -> float:
    """np.median of finite values (1-D, not empty) taken in float64, by one partition in place (values
    is a scratch array of the caller's): the middle value, or the mean of the two middle values in
    float64 (so of float32 depths, np.median of the values in float64)."""
    half = values.size // 2
    if values.size % 2:
        values.partition(half)
        return float(values[half])
    values.partition((half - 1, half))
    return float((np.float64(values[half - 1]) + np.float64(values[half])) / 2.0)


def quantile(values: np.ndarray, q: float) -> float:
    """np.quantile(values, q) (its default linear method) of finite values (1-D, not empty), from the
    sorted values, with numpy's interpolation between the two order statistics around q (n - 1)."""
    ordered = np.sort(values)
    position = q * (ordered.size - 1)
    base = math.floor(position)
    below, above = ordered[base], ordered[min(base + 1, ordered.size - 1)]
    fraction = position - base
    if fraction < 0.5:
        return float(below + (above - below) * fraction)
    return float(above - (above - below) * (1 - fraction))
