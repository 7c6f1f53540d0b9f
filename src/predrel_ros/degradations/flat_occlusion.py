"""The occlusion_flat kind: one solid, axis-aligned rectangle in a muted colour per occluded region.

This was the look of `occlusion` before textured occluders (degradations/occlusion.py); it is kept,
unchanged bit for bit, to compare against. Flat muted rectangles look like the simulator's own
objects, so a detector trained on that scene finds them as objects.

In each region (occlusion_regions) the rectangle covers `area_ratio` of the region's area: its sides
are w * r**a and h * r**(1 - a) for a drawn exponent a, and it sits at a drawn relative position
(u, v) inside the region. Both sides grow with r around that fixed relative position, so the
occluder at a higher severity contains the one at a lower severity (nested), and it never leaves
its region.
"""
from __future__ import annotations

import numpy as np

from predrel_ros.degradations import draws

#: range of the aspect exponent a: the occluder's aspect varies, its area share does not
_ASPECT_EXPONENT = (0.25, 0.75)


def occluder_rects(regions: np.ndarray, keys: np.ndarray, area_ratio: float, seed: int,
                   image_shape: tuple[int, ...]) -> np.ndarray:
    """Integer occluder rectangles (N x 4: x1, y1, x2, y2 exclusive), clipped to the image."""
    height, width = image_shape[:2]
    if area_ratio <= 0 or len(regions) == 0:
        return np.zeros((0, 4), np.int64)
    x1, y1, x2, y2 = (regions[:, i] for i in range(4))
    region_w, region_h = np.maximum(x2 - x1, 0.0), np.maximum(y2 - y1, 0.0)
    low, high = _ASPECT_EXPONENT
    exponent = low + (high - low) * draws.uniform(seed, "occlusion.aspect", keys)
    occluder_w = region_w * area_ratio ** exponent
    occluder_h = region_h * area_ratio ** (1.0 - exponent)
    left = x1 + draws.uniform(seed, "occlusion.u", keys) * (region_w - occluder_w)
    top = y1 + draws.uniform(seed, "occlusion.v", keys) * (region_h - occluder_h)
    # floor/ceil keep nesting exact: left/top only decrease and right/bottom only grow with the ratio
    rects = np.stack([np.floor(left), np.floor(top), np.ceil(left + occluder_w), np.ceil(top + occluder_h)],
                     axis=1)
    rects[:, [0, 2]] = np.clip(rects[:, [0, 2]], 0, width)
    rects[:, [1, 3]] = np.clip(rects[:, [1, 3]], 0, height)
    return rects.astype(np.int64)


def occluder_colours(keys: np.ndarray, seed: int) -> np.ndarray:
    """One muted solid colour per occluder (N x 3 uint8), fixed per seed and key."""
    channels = np.stack([draws.uniform(seed, f"occlusion.colour.{c}", keys) for c in range(3)], axis=1)
    return (40 + 170 * channels).astype(np.uint8)


def occluder_mask(rects: np.ndarray, image_shape: tuple[int, ...]) -> np.ndarray:
    """Boolean H x W mask of the pixels covered by `rects`."""
    mask = np.zeros(image_shape[:2], bool)
    for x1, y1, x2, y2 in rects:
        mask[y1:y2, x1:x2] = True
    return mask


def occlude(image: np.ndarray, rects: np.ndarray, colours: np.ndarray) -> np.ndarray:
    """A copy of `image` (H x W x 3, or H x W grey) with each rectangle filled with its colour."""
    out = image.copy()
    for (x1, y1, x2, y2), colour in zip(rects, colours):
        out[y1:y2, x1:x2] = colour if out.ndim == 3 else int(colour.mean())
    return out
