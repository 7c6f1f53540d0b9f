"""Occluder looks that are not the look of the scene's objects: textures and shapes.

A flat patch in a muted colour looks like one of the simulator's objects, so a detector learns to find
it (or is tested on finding it) as an object. Real occluders are textured and shaped: cloth, paper,
foliage, a tool, an arm. Here:
  - `procedural_texture`: smooth value noise, oriented stripes, a checker or fine grain, each with
    random colours and contrast;
  - `cut_patch`: a patch cut from another image (another frame of the set, or elsewhere in this one),
    optionally from its unlabelled background only (never a piece of an object);
  - `shape_mask`: a filled shape inside a box: an ellipse, a convex blob, or an arm-like capsule
    ending in a hand-like blob.
"""
from __future__ import annotations

import cv2
import numpy as np

TEXTURES = ("noise", "stripes", "checker", "grain")
SHAPES = ("ellipse", "blob", "arm")
#: where a patch of a frame may be cut for an occluder: the frame's unlabelled background only, or
#: anywhere (a piece of one object may then land on another, under that one's label, in training)
PATCH_SOURCES = ("background", "anywhere")


def procedural_texture(rng: np.random.Generator, height: int, width: int, kind: str | None = None) -> np.ndarray:
    """H x W x 3 uint8 texture of `kind` (drawn from TEXTURES when None)."""
    kind = kind or TEXTURES[int(rng.integers(len(TEXTURES)))]
    if kind not in TEXTURES:
        raise ValueError(f"texture kind must be one of {TEXTURES}, got {kind!r}")
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    if kind == "noise":
        cells = (int(rng.integers(2, 8)), int(rng.integers(2, 8)))
        level = cv2.resize(rng.random(cells).astype(np.float32), (width, height), interpolation=cv2.INTER_CUBIC)
        fine = cv2.resize(rng.random((cells[0] * 4, cells[1] * 4)).astype(np.float32), (width, height),
                          interpolation=cv2.INTER_LINEAR)
        level = 0.7 * level + 0.3 * fine
    elif kind == "stripes":
        angle, period = rng.uniform(0, np.pi), rng.uniform(3, 12)
        level = 0.5 + 0.5 * np.sin(2 * np.pi * (xx * np.cos(angle) + yy * np.sin(angle)) / period)
    elif kind == "checker":
        cell = int(rng.integers(3, 10))
        level = (((xx // cell) + (yy // cell)) % 2).astype(np.float32)
    else:
        level = rng.random((height, width)).astype(np.float32)
    level = np.clip(level, 0, 1)[..., None]
    first, second = rng.integers(0, 256, 3), rng.integers(0, 256, 3)
    return (first * (1 - level) + second * level).astype(np.uint8)


def cut_patch(source: np.ndarray, rng: np.random.Generator, height: int, width: int,
              allowed: np.ndarray | None = None, min_allowed: float = 0.95, tries: int = 10) -> np.ndarray | None:
    """An H x W patch cut at a random place of `source` (resized when the source is smaller).

    allowed: H x W bool map of `source` where a patch may be cut (the unlabelled background). When
    given, at least `min_allowed` of the patch's pixels must be allowed: never a patch holding an
    object, which pasted over another object would show the look of one class under the other's
    label. None when none of `tries` random places qualifies."""
    src_h, src_w = source.shape[:2]
    if src_h < height or src_w < width:
        if allowed is not None:
            return None
        source = cv2.resize(source, (max(src_w, width), max(src_h, height)), interpolation=cv2.INTER_LINEAR)
        src_h, src_w = source.shape[:2]
    for _ in range(1 if allowed is None else tries):
        y, x = int(rng.integers(0, src_h - height + 1)), int(rng.integers(0, src_w - width + 1))
        if allowed is None or allowed[y:y + height, x:x + width].mean() >= min_allowed:
            return source[y:y + height, x:x + width].copy()
    return None


def shape_mask(rng: np.random.Generator, height: int, width: int, kind: str | None = None) -> np.ndarray:
    """H x W bool: a filled shape of `kind` (drawn from SHAPES when None) spanning most of the box."""
    kind = kind or SHAPES[int(rng.integers(len(SHAPES)))]
    if kind not in SHAPES:
        raise ValueError(f"shape kind must be one of {SHAPES}, got {kind!r}")
    mask = np.zeros((height, width), np.uint8)
    if kind == "ellipse":
        cv2.ellipse(mask, (((width - 1) / 2, (height - 1) / 2), (width, height), 0), 1, -1)  # inscribed in the box
    elif kind == "blob":
        angles = np.sort(rng.uniform(0, 2 * np.pi, int(rng.integers(6, 11))))
        radii = rng.uniform(0.6, 1.0, angles.size)
        points = np.stack([(width - 1) / 2 * (1 + radii * np.cos(angles)),
                           (height - 1) / 2 * (1 + radii * np.sin(angles))], axis=1)
        cv2.fillPoly(mask, [np.round(points).astype(np.int32)], 1)
    else:  # an arm entering from one side of the box, ending in a wider hand-like blob
        horizontal = width >= height
        length, thickness = (width, height) if horizontal else (height, width)
        arm = max(1, int(round(thickness * rng.uniform(0.35, 0.55))))
        offset = int(rng.integers(0, max(thickness - arm, 0) + 1))
        reach = int(round(length * rng.uniform(0.65, 0.8)))
        hand = (int(round(length * 0.2)), int(round(thickness * 0.45)))
        centre_along, centre_across = min(reach, length - 1 - hand[0]), offset + arm / 2
        if horizontal:
            mask[offset:offset + arm, :reach] = 1
            cv2.ellipse(mask, (int(centre_along), int(centre_across)), (max(hand[0], 1), max(hand[1], 1)), 0, 0, 360,
                        1, -1)
        else:
            mask[:reach, offset:offset + arm] = 1
            cv2.ellipse(mask, (int(centre_across), int(centre_along)), (max(hand[1], 1), max(hand[0], 1)), 0, 0, 360,
                        1, -1)
        if rng.random() < 0.5:  # from the other side
            mask = mask[:, ::-1] if horizontal else mask[::-1]
    return mask.astype(bool)
