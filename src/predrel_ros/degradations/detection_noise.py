"""Detection noise at the perception-output level: box jitter, misses, false detections, track breaks.

Every effect reads fixed draws keyed by (seed, frame_index, entity id) and compares them with
thresholds or scales them by amplitudes from the severity table, so the effects are nested in
severity: an entity missed at s is missed at s+1, a track interrupted at s is interrupted at s+1, a
false detection present at s is present at s+1, and box displacements only grow.

- Box jitter: each corner coordinate moves by z * box_jitter * (box width or height), z a standard
  normal clipped to +-2.5; the box is then clipped to the image and kept at least one pixel wide and
  high. The mask is resampled from the old box onto the new one, so it moves and stretches with it.
- Missed detections: the entity is absent from the output.
- Track interruptions: at a break frame b the tracker loses the entity; from b on it carries a new
  synthetic id for `track_interruption_frames` frames, with a track quality that ramps up again,
  after which it is re-identified (its original id returns).
- False detections: up to `max_false_detections` candidates per frame; each copies the label, role
  and mask shape of an entity of the frame (so its label is plausible), at a random place and a
  0.7-1.3 size factor, with a low score and track quality and a fresh synthetic id.
Synthetic ids lie in [synthetic_id_base, 2 * synthetic_id_base).
"""
from __future__ import annotations

import dataclasses
from typing import Sequence

import cv2
import numpy as np

from predrel_ros.core.boxes import pixel_span
from predrel_ros.core.entities import Entity
from predrel_ros.degradations import draws
from predrel_ros.degradations.options import DegradationOptions

#: box-corner draws are clipped to this many standard deviations (see the table's box_jitter bound)
JITTER_CLIP = 2.5
#: size factor range of a false detection relative to the entity it imitates
_FALSE_SIZE = (0.7, 1.3)


def perturb_entities(entities: Sequence[Entity], frame_index: int, image_shape: tuple[int, ...],
                     row: dict[str, float], seed: int, options: DegradationOptions) -> list[Entity]:
    """The noisy perception output for one frame; the input entities are left unchanged.

    The draws of all entities of the frame are read in one call per stream (the same values as one
    call per entity: a draw depends only on its keys)."""
    height, width = image_shape[:2]
    for entity in entities:
        if entity.mask is not None and entity.mask.shape != (height, width):
            raise ValueError(f"entity {entity.id}: mask shape {entity.mask.shape} does not match "
                             f"image_shape {(height, width)}")
    if not entities:
        return []
    ids = np.array([entity.id for entity in entities], dtype=np.int64)
    missed = draws.uniform(seed, "noise.miss", frame_index, ids) < row["miss_rate"]
    z = np.clip(draws.normal(seed, "noise.box", frame_index, ids[:, None], np.arange(4)), -JITTER_CLIP, JITTER_CLIP)
    broken = interruptions(ids, frame_index, row["track_break_rate"], seed, options)
    out = [_jittered(entity, frame_index, (height, width), z[i], broken[i], row, seed, options)
           for i, entity in enumerate(entities) if not missed[i]]
    out.extend(_false_detections(entities, frame_index, (height, width), row, seed, options))
    return out


def interruptions(entity_ids: np.ndarray, frame_index: int, break_rate: float, seed: int,
                  options: DegradationOptions) -> list[int | None]:
    """Per entity id, the latest break frame of its track still in effect at `frame_index`, or None."""
    span = options.track_interruption_frames
    frames = np.arange(frame_index, frame_index - span, -1)
    breaks = draws.uniform(seed, "noise.break", frames, np.asarray(entity_ids, dtype=np.int64)[:, None]) < break_rate
    latest = np.argmax(breaks, axis=1)   # frames run backwards: the first break is the latest
    return [int(frames[latest[i]]) if breaks[i].any() else None for i in range(len(breaks))]


def synthetic_id(seed: int, stream: str, options: DegradationOptions, *keys) -> int:
    base = options.synthetic_id_base
    return base + int(draws.hashes(seed, stream, *keys)[0] % np.uint64(base))


def _jittered(entity: Entity, frame_index: int, shape: tuple[int, int], z: np.ndarray, broken_at: int | None,
              row: dict[str, float], seed: int, options: DegradationOptions) -> Entity:
    """`entity` with its box corners moved by the clipped normal draws `z`, under a new id while its
    track is interrupted (since `broken_at`)."""
    box = _clip_box(entity.box, shape)
    size = np.array([box[2] - box[0], box[3] - box[1]] * 2)
    new_box = _clip_box(box + z * row["box_jitter"] * size, shape)
    changes: dict = {}
    if broken_at is not None:
        ramp = (frame_index - broken_at + 1) / options.track_interruption_frames
        changes = {"id": synthetic_id(seed, "noise.break.id", options, entity.id, broken_at),
                   "track_quality": entity.track_quality * ramp,
                   "attributes": {**entity.attributes, "detection_noise": "track_interrupted",
                                  "original_id": entity.id}}
    return _with_geometry(entity, box, new_box, True, **changes)


def _false_detections(entities: Sequence[Entity], frame_index: int, shape: tuple[int, int],
                      row: dict[str, float], seed: int, options: DegradationOptions) -> list[Entity]:
    height, width = shape
    count = options.max_false_detections
    candidates = np.arange(count)
    present = np.flatnonzero(draws.uniform(seed, "noise.false", frame_index, candidates)
                             < row["false_per_frame"] / count)
    if not len(present):
        return []
    drawn = zip(*(draws.uniform(seed, f"noise.false.{stream}", frame_index, present).tolist()
                  for stream in ("source", "size", "x", "y", "score")))
    out = []
    for j, (source_draw, size_draw, x_draw, y_draw, score_draw) in zip(present, drawn):
        source = entities[min(int(source_draw * len(entities)), len(entities) - 1)]
        source_box = _clip_box(source.box, shape)
        factor = _FALSE_SIZE[0] + (_FALSE_SIZE[1] - _FALSE_SIZE[0]) * size_draw
        box_w = min(max(1.0, (source_box[2] - source_box[0]) * factor), width)
        box_h = min(max(1.0, (source_box[3] - source_box[1]) * factor), height)
        x1, y1 = x_draw * (width - box_w), y_draw * (height - box_h)
        box = _clip_box(np.array([x1, y1, x1 + box_w, y1 + box_h]), shape)
        low, high = options.false_detection_score
        out.append(_with_geometry(
            source, source_box, box, False, id=synthetic_id(seed, "noise.false.id", options, frame_index, j),
            score=low + (high - low) * score_draw, visibility=1.0,
            track_quality=options.false_detection_track_quality, frame_index=frame_index, point3d=None,
            attributes={"detection_noise": "false_detection", "imitates_id": source.id}))
    return out


def _clip_box(box: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """Box clipped to the image, ordered and at least one pixel wide and high."""
    height, width = shape
    x1, x2 = (min(max(float(v), 0.0), width) for v in sorted((box[0], box[2])))
    y1, y2 = (min(max(float(v), 0.0), height) for v in sorted((box[1], box[3])))
    x1, y1 = min(x1, width - 1.0), min(y1, height - 1.0)
    return np.array([x1, y1, max(x2, x1 + 1.0), max(y2, y1 + 1.0)])


def _moved_mask(mask: np.ndarray, old_box: np.ndarray, new_box: np.ndarray,
                shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray | None]:
    """The mask's content inside `old_box` resampled onto `new_box` (nearest neighbour), and the
    moved mask's centroid (None when it is empty), computed on the crop rather than the frame."""
    ox1, oy1, ox2, oy2 = pixel_span(old_box, *shape)
    nx1, ny1, nx2, ny2 = pixel_span(new_box, *shape)
    moved = np.zeros(shape, bool)
    crop = mask[oy1:oy2, ox1:ox2]
    if not crop.any():
        return moved, None
    resized = cv2.resize(np.ascontiguousarray(crop, dtype=np.uint8), (nx2 - nx1, ny2 - ny1),
                         interpolation=cv2.INTER_NEAREST).astype(bool)
    moved[ny1:ny2, nx1:nx2] = resized
    moments = cv2.moments(resized.view(np.uint8), binaryImage=True)
    if moments["m00"] == 0:
        return moved, None
    return moved, np.array([moments["m10"] / moments["m00"] + nx1, moments["m01"] / moments["m00"] + ny1])


def _with_geometry(entity: Entity, old_box: np.ndarray, box: np.ndarray, keep_depth: bool, **changes) -> Entity:
    """A copy of `entity` moved from `old_box` to `box`: its mask moves along and the 2-D centroid
    follows (from the mask, else the box, as Entity computes it); `keep_depth` keeps a centroid depth."""
    mask, centroid = (None, None) if entity.mask is None else _moved_mask(entity.mask, old_box, box,
                                                                          entity.mask.shape)
    if centroid is None:
        centroid = np.array([(box[0] + box[2]) / 2.0, (box[1] + box[3]) / 2.0])
    if keep_depth and entity.centroid is not None and entity.centroid.size == 3:
        centroid = np.append(centroid, entity.centroid[2])
    return dataclasses.replace(entity, box=box, mask=mask, centroid=centroid, **changes)
