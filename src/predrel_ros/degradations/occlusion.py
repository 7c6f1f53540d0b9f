"""The occlusion kind: textured, shaped occluders over a growing share of each occluded region.

A flat rectangle in a muted colour looks like one of the simulator's objects (the occlusion_flat
kind, degradations/flat_occlusion.py), so a detector finds it as an object. Here an occluder has a
shape (an arm entering the region from one side and widening into a hand at its end, a lobed blob
or an ellipse, each with slightly ragged edges) and a procedural texture (value noise, stripes, a
checker or grain in two contrasting colours, degradations/textures.py). Patches cut from other frames
are not used: a degradation is a pure function of (seed, frame, inputs) and keeps no stream history.

Each shape is grown as the nested level sets of a field over its region: the region's N pixels in
the image are ranked by the field and the round(r * N) lowest are covered, r the table's
`area_ratio`. So the covered share of each region is the table's ratio to one pixel (the severity
table's meaning, as for the flat kind), what is covered at a ratio stays covered at every larger
one (nested), and the shape is fixed relative to its region box and drawn from (seed, region key):
it moves with its target.

An occluder never covers a target smaller than its own (by box area; the smaller target's mask, or
its box when it has none): the occluder of the table hides part of the table, not the cup standing
on it, and a hand's occluder does not swallow the cube in its fingers. Without that rule an occluder
over 30 % of the table's box hid whole objects on it (a cube 98-100 % covered at severity 3, so no
detector could find it), against the severity table's meaning: the covered share of each target.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from predrel_ros.core.boxes import box_area, pixel_span
from predrel_ros.degradations import draws, textures

#: occluder shapes, drawn per region
SHAPES = ("arm", "blob", "ellipse")
#: amplitude of the smooth noise that makes the level sets' edges ragged (relative change of the field)
_RAGGEDNESS = 0.15
#: side of the coarse grid of that noise
_NOISE_GRID = 6
#: the two colours of a texture differ by at least this much (sum over the channels)
_MIN_CONTRAST = 150
#: occluders and textures kept by the memo (the last few frames' regions of a few conditions)
_MEMO = 64


@dataclass(frozen=True)
class Occluder:
    """One region's occluder: `mask` covers the image rows top..top+h and columns left..left+w."""

    key: int
    top: int
    left: int
    mask: np.ndarray

    def without(self, excluded: np.ndarray) -> Occluder | None:
        """This occluder less the `excluded` pixels (a bool array of its own window, the shape of `mask`);
        None when nothing is left."""
        mask = self.mask & ~excluded
        return Occluder(self.key, self.top, self.left, mask) if mask.any() else None

    def covered(self, image_shape: tuple[int, ...]) -> np.ndarray:
        """Boolean H x W mask of the pixels this occluder covers."""
        full = np.zeros(image_shape[:2], bool)
        height, width = self.mask.shape
        full[self.top:self.top + height, self.left:self.left + width] = self.mask
        return full


def occluders(regions: np.ndarray, keys: np.ndarray, area_ratio: float, seed: int,
              image_shape: tuple[int, ...], masks: Sequence[np.ndarray | None] | None = None) -> list[Occluder]:
    """The occluders of `regions` (N x 4 boxes) at `area_ratio`, ordered by key (drawing order).

    masks: the targets' masks (H x W bool, None for a target known by its box alone), or None for
    random zones: each occluder then leaves the targets smaller than its own uncovered."""
    height, width = image_shape[:2]
    if area_ratio <= 0:
        return []
    areas = box_area(regions)
    out = []
    for index in sorted(range(len(regions)), key=lambda i: int(keys[i])):
        occluder = _occluder(int(seed), int(keys[index]), *(float(v) for v in regions[index]), float(area_ratio),
                             height, width)
        if occluder is not None and masks is not None:
            excluded = _smaller_targets_in(occluder, np.flatnonzero(areas < areas[index]), regions, masks)
            if excluded is not None:
                occluder = occluder.without(excluded)
        if occluder is not None:
            out.append(occluder)
    return out


def _smaller_targets_in(occluder: Occluder, smaller: np.ndarray, regions: np.ndarray,
                        masks: Sequence[np.ndarray | None]) -> np.ndarray | None:
    """The pixels of the `smaller` targets (their masks, else their boxes) in the occluder's window, or
    None when none of them reaches into it. Only the window is read: a frame's cost stays that of
    the occluders, not of N full-frame masks."""
    height, width = occluder.mask.shape
    top, left = occluder.top, occluder.left
    excluded = None
    for index in smaller:
        x1, y1, x2, y2 = pixel_span(regions[index], top + height, left + width)
        x1, y1 = max(x1, left), max(y1, top)
        if x2 <= x1 or y2 <= y1:
            continue
        if excluded is None:
            excluded = np.zeros((height, width), bool)
        window = excluded[y1 - top:y2 - top, x1 - left:x2 - left]
        if masks[index] is None:
            window[...] = True
        else:
            window |= masks[index][y1:y2, x1:x2]
    return excluded


@functools.lru_cache(maxsize=_MEMO)
def _occluder(seed: int, key: int, x1: float, y1: float, x2: float, y2: float, area_ratio: float,
              height: int, width: int) -> Occluder | None:
    """The occluder of one region (None: nothing of it in the image). Memoised, as `_texture_of`: a pure
    function of its arguments, and a target at rest has the same box frame after frame."""
    left, top, right, bottom = pixel_span((x1, y1, x2, y2), height, width)
    if right <= left or bottom <= top or x2 <= x1 or y2 <= y1:
        return None
    field = _shape_field(_rng(seed, key, "shape"), np.arange(left, right) + 0.5 - x1,
                         np.arange(top, bottom) + 0.5 - y1, x2 - x1, y2 - y1)
    mask = _lowest(field, int(round(area_ratio * field.size)))
    rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
    if not rows.size:
        return None
    mask = mask[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1]
    mask.flags.writeable = False              # shared by every caller of the memo
    return Occluder(key, top + int(rows[0]), left + int(cols[0]), mask)


def _lowest(field: np.ndarray, count: int) -> np.ndarray:
    """Mask of the `count` lowest values of `field`, ties broken in raster order: the first `count` of one
    fixed ranking, so a larger count only adds pixels."""
    flat = field.ravel()
    if count <= 0:
        return np.zeros(field.shape, bool)
    if count >= flat.size:
        return np.ones(field.shape, bool)
    threshold = np.partition(flat, count - 1)[count - 1]
    mask = flat < threshold
    ties = np.flatnonzero(flat == threshold)[:count - int(mask.sum())]
    mask[ties] = True
    return mask.reshape(field.shape)


def occluder_mask(occluders_: list[Occluder], image_shape: tuple[int, ...]) -> np.ndarray:
    """Boolean H x W mask of the pixels covered by any of the occluders."""
    mask = np.zeros(image_shape[:2], bool)
    for occluder in occluders_:
        mask |= occluder.covered(image_shape)
    return mask


def occlude(image: np.ndarray, occluders_: list[Occluder], seed: int) -> np.ndarray:
    """A copy of `image` (H x W x 3, or H x W grey) with each occluder painted in its texture."""
    out = image.copy()
    for occluder in occluders_:
        height, width = occluder.mask.shape
        texture = _texture_of(int(seed), occluder.key, height, width)
        if out.ndim == 2:
            texture = texture.mean(axis=2).astype(np.uint8)
        window = out[occluder.top:occluder.top + height, occluder.left:occluder.left + width]
        window[occluder.mask] = texture[occluder.mask]
    return out


def _rng(seed: int, key: int, part: str) -> np.random.Generator:
    return np.random.default_rng(int(draws.hashes(seed, f"occlusion.{part}", key)[0]))


@functools.lru_cache(maxsize=_MEMO)
def _texture_of(seed: int, key: int, height: int, width: int) -> np.ndarray:
    """The texture of the occluder of region `key` at this size (read-only; memoised, see `_occluder`)."""
    texture = _texture(_rng(seed, key, "texture"), height, width)
    texture.flags.writeable = False
    return texture


def _texture(rng: np.random.Generator, height: int, width: int) -> np.ndarray:
    """A procedural texture whose two colours contrast (never one flat colour)."""
    texture = textures.procedural_texture(rng, height, width)
    low, high = texture.reshape(-1, 3).min(axis=0).astype(int), texture.reshape(-1, 3).max(axis=0).astype(int)
    if int((high - low).sum()) >= _MIN_CONTRAST:
        return texture
    stretch = _MIN_CONTRAST / max(int((high - low).sum()), 1)
    centre = (low + high) / 2
    return np.clip(centre + (texture - centre) * stretch, 0, 255).astype(np.uint8)


def _shape_field(rng: np.random.Generator, xs: np.ndarray, ys: np.ndarray, region_w: float,
                 region_h: float) -> np.ndarray:
    """Field over the pixel centres (xs, ys relative to the region's top-left corner) whose lowest values
    form the occluder: distances in units of the region's geometric mean side, so shapes stay round."""
    scale = np.sqrt(region_w * region_h)
    x, y = np.meshgrid((xs / scale).astype(np.float32), (ys / scale).astype(np.float32))
    box_w, box_h = region_w / scale, region_h / scale
    shape = SHAPES[int(rng.integers(len(SHAPES)))]
    if shape == "arm":
        field = _arm(rng, x, y, box_w, box_h)
    else:
        # anywhere in the box, edges included: a real occluder comes in from a side more often than it
        # hides a target's middle and leaves its outline (a ring) in view
        cx, cy = box_w * rng.uniform(0.0, 1.0), box_h * rng.uniform(0.0, 1.0)
        dx, dy = x - cx, y - cy
        if shape == "ellipse":
            angle, ratio = rng.uniform(0, np.pi), rng.uniform(0.45, 1.0)
            along, across = dx * np.cos(angle) + dy * np.sin(angle), -dx * np.sin(angle) + dy * np.cos(angle)
            field = np.hypot(along, across / ratio)
        else:  # blob: a star-shaped outline with a few lobes
            angle = np.arctan2(dy, dx)
            radius = np.ones_like(angle)
            for lobes, amplitude in zip((2, 3, 5), rng.uniform(0.0, (0.25, 0.18, 0.08))):
                radius += amplitude * np.cos(lobes * angle + rng.uniform(0, 2 * np.pi))
            field = np.hypot(dx, dy) / radius
    noise = _smooth_noise(rng, xs / region_w, ys / region_h)
    return field * (1.0 + _RAGGEDNESS * (2.0 * noise - 1.0))


def _arm(rng: np.random.Generator, x: np.ndarray, y: np.ndarray, box_w: float, box_h: float) -> np.ndarray:
    """An arm entering from a side of the box, reaching in as the level grows, with a hand at its tip."""
    side, position = int(rng.integers(4)), rng.uniform(0.25, 0.75)
    entry, inward = [(np.array([0.0, position * box_h]), 0.0), (np.array([box_w, position * box_h]), np.pi),
                     (np.array([position * box_w, 0.0]), np.pi / 2),
                     (np.array([position * box_w, box_h]), -np.pi / 2)][side]
    direction = inward + rng.uniform(-0.5, 0.5)
    dx, dy = x - entry[0], y - entry[1]
    along = dx * np.cos(direction) + dy * np.sin(direction)
    across = -dx * np.sin(direction) + dy * np.cos(direction)
    thickness, reach = rng.uniform(0.1, 0.18), rng.uniform(0.5, 0.8)
    arm = np.hypot(across / thickness, np.maximum(along, 0.0) / reach)
    tip_along = reach * rng.uniform(0.6, 0.9)   # where the hand starts to widen
    hand = np.hypot(along - tip_along, across) / (2.2 * thickness) + tip_along / reach
    return np.minimum(arm, hand)


def _smooth_noise(rng: np.random.Generator, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Bilinear value noise in [0, 1] on a coarse grid over the region (u, v: 0..1 across it)."""
    grid = rng.random((_NOISE_GRID, _NOISE_GRID), dtype=np.float32)
    gu, gv = np.clip(u, 0, 1) * (_NOISE_GRID - 1), np.clip(v, 0, 1) * (_NOISE_GRID - 1)
    iu, iv = np.minimum(gu.astype(int), _NOISE_GRID - 2), np.minimum(gv.astype(int), _NOISE_GRID - 2)
    fu, fv = (gu - iu).astype(np.float32)[None, :], (gv - iv).astype(np.float32)[:, None]
    iu, iv = iu[None, :], iv[:, None]
    top = grid[iv, iu] * (1 - fu) + grid[iv, iu + 1] * fu
    bottom = grid[iv + 1, iu] * (1 - fu) + grid[iv + 1, iu + 1] * fu
    return top * (1 - fv) + bottom * fv
