"""What the occlusion kinds occlude: the caller's target boxes, or a few random zones of the frame.

Targets are e.g. hands, objects, containers and surfaces from ground truth or from the clean
pipeline. Each region has a draw key (an Entity's track id, else its list position) that keys the
occluder's random draws, not the frame: an occluder stays on the same part of its target while the
target moves, as a real occluder would, instead of flickering. Random zones are fixed in the frame
for a seed (e.g. an obstruction in front of the camera).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from predrel_ros.core.entities import Entity
from predrel_ros.degradations import draws
from predrel_ros.degradations.options import DegradationOptions


def target_regions(targets: Sequence[Entity] | np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Target boxes (N x 4, float) and their draw keys (N ints) from Entities or an N x 4 array."""
    if targets is None:
        return np.zeros((0, 4)), np.zeros(0, np.int64)
    if len(targets) and isinstance(targets[0], Entity):
        boxes = np.array([entity.box for entity in targets], dtype=np.float64).reshape(-1, 4)
        keys = np.array([entity.id for entity in targets], dtype=np.int64)
    else:
        boxes = np.asarray(targets, dtype=np.float64).reshape(-1, 4) if len(targets) else np.zeros((0, 4))
        keys = np.arange(len(boxes), dtype=np.int64)
    if not np.all(np.isfinite(boxes)):
        raise ValueError("targets: boxes must be finite (x1, y1, x2, y2)")
    return boxes, keys


def target_masks(targets: Sequence[Entity] | np.ndarray, image_shape: tuple[int, ...]) -> list[np.ndarray | None]:
    """Each target's mask when it is an Entity with a mask of the image's size, else None (its box stands
    for its pixels)."""
    shape = tuple(image_shape[:2])
    masks = [getattr(target, "mask", None) for target in targets]
    return [mask if mask is not None and mask.shape == shape else None for mask in masks]


def random_zones(image_shape: tuple[int, ...], seed: int, options: DegradationOptions) -> np.ndarray:
    """The seed's random zones (N x 4 boxes) of a frame, used when no targets are given."""
    height, width = image_shape[:2]
    count = options.occlusion_zones
    low, high = options.occlusion_zone_size
    zone = np.arange(count)
    zone_w = width * (low + (high - low) * draws.uniform(seed, "occlusion.zone.w", zone))
    zone_h = height * (low + (high - low) * draws.uniform(seed, "occlusion.zone.h", zone))
    x1 = (width - zone_w) * draws.uniform(seed, "occlusion.zone.x", zone)
    y1 = (height - zone_h) * draws.uniform(seed, "occlusion.zone.y", zone)
    return np.stack([x1, y1, x1 + zone_w, y1 + zone_h], axis=1)


def occluded_regions(targets: Sequence[Entity] | np.ndarray | None, image_shape: tuple[int, ...], seed: int,
                     options: DegradationOptions) -> tuple[np.ndarray, np.ndarray]:
    """The regions to occlude and their keys: the targets' boxes, or the random zones when targets is None
    (an empty list of targets occludes nothing)."""
    regions, keys = target_regions(targets)
    if len(regions) == 0 and targets is None:
        regions = random_zones(image_shape, seed, options)
        keys = np.arange(len(regions), dtype=np.int64)
    return regions, keys
