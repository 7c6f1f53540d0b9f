"""Object permanence as trust evidence: a memory of the entities seen, and the events that break it.

Objects on a table do not appear out of thin air, vanish, turn into another class or jump across
the image between two frames; a hand does not become a cylinder. A perception pipeline that sees
such things is wrong, even when it is confident (an occluder patch detected as a confident cube,
an object relabelled under occlusion). The predicate streams of `self` mode forget an entity
`track_memory` frames after it vanished, so this memory keeps what they forget:

- every entity seen (track id, label, role, last box, last depth, the frame it was last observed);
- a *birth* (a track observed for the first time) is explained when its box is near the image
  border (it came into view) or near a hand (it was held or uncovered); otherwise it is
  *unexplained*. A new track at the place of an entity that vanished within `reacquire_frames`
  frames is no birth: the same label is the object *reacquired* under a new id, another label is a
  *relabel*;
- a *disappearance* (observed at the previous update, not now) is explained near the border or a
  hand (it left the view, or the hand hides it); the memory keeps the unexplained ones as *missing*
  until they come back or `memory` frames passed;
- a *relabel* is also a track whose label changes; a *jump* is a track whose centroid moves more
  than `max_step` image diagonals per frame, or whose depth changes more than `max_depth_step`
  metres per frame, between two observations.

`SceneMemory.update` returns the counts of one frame (`SceneEvents`); rates over a window are
`trust_evidence`'s business. An entity counts as observed with visibility >= `min_visibility`
(perception reports a lost track with visibility 0 for a few frames).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable

import numpy as np

from predrel_ros.core.boxes import box_iou
from predrel_ros.core.entities import Entity


@dataclass(frozen=True)
class SceneEvents:
    """What one frame did to the scene memory (counts of entities)."""

    observed: int
    births: int
    unexplained_births: int
    reacquired: int
    disappearances: int
    unexplained_disappearances: int
    relabels: int
    jumps: int
    missing: int            # unexplained disappearances remembered and not back


@dataclass
class _Seen:
    label: str
    role: str
    box: np.ndarray
    depth: float | None
    last_observed: int


class SceneMemory:
    """The entities seen so far and the events of each new frame (see the module docstring).

    border: share of the image width / height from each edge within which a box touches the border;
    hand_margin: a hand's box grown by this share of its size on every side is "near the hand";
    max_step: image diagonals per frame a centroid may move; max_depth_step: metres per frame;
    reacquire_frames: frames within which a new track at a vanished entity's place (box IoU >=
    `reacquire_iou`) is that entity again; memory: frames a missing entity is remembered.
    """

    def __init__(self, border: float = 0.04, hand_margin: float = 0.5, max_step: float = 0.15,
                 max_depth_step: float = 0.15, reacquire_frames: int = 30, reacquire_iou: float = 0.2,
                 memory: int = 90, min_visibility: float = 0.05) -> None:
        for name, value in (("border", border), ("reacquire_iou", reacquire_iou), ("min_visibility", min_visibility)):
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must lie in [0, 1], got {value}")
        for name, value in (("hand_margin", hand_margin), ("max_step", max_step), ("max_depth_step", max_depth_step)):
            if not (math.isfinite(value) and value > 0.0):
                raise ValueError(f"{name} must be a positive number, got {value}")
        for name, value in (("reacquire_frames", reacquire_frames), ("memory", memory)):
            if value < 1:
                raise ValueError(f"{name} must be >= 1 frame, got {value}")
        self.border = border
        self.hand_margin = hand_margin
        self.max_step = max_step
        self.max_depth_step = max_depth_step
        self.reacquire_frames = reacquire_frames
        self.reacquire_iou = reacquire_iou
        self.memory = memory
        self.min_visibility = min_visibility
        self.reset()

    def reset(self) -> None:
        self._seen: dict[int, _Seen] = {}
        self._previous: set[int] = set()        # ids observed at the previous update
        self._missing: set[int] = set()         # unexplained disappearances not back

    def update(self, frame_index: int, entities: Iterable[Entity], image_size: tuple[int, int]) -> SceneEvents:
        """The events of one frame (frames in increasing order); image_size: (width, height)."""
        width, height = image_size
        if width < 1 or height < 1:
            raise ValueError(f"image_size must be (width, height) >= 1 pixel, got {image_size}")
        self._forget(frame_index)
        # in track order: two new tracks may compete for one vanished predecessor, and the winner must not
        # depend on the order the entities came in
        observed = sorted((e for e in entities if e.visibility >= self.min_visibility), key=lambda e: e.id)
        hands = np.array([_grown(e.box, self.hand_margin) for e in observed if e.is_hand]).reshape(-1, 4)
        diagonal = math.hypot(width, height)
        births = unexplained_births = reacquired = relabels = jumps = 0
        for entity in observed:
            seen = self._seen.get(entity.id)
            if seen is None:
                births += 1
                predecessor = self._predecessor(entity, frame_index)
                if predecessor is not None:
                    births -= 1
                    if self._seen[predecessor].label == entity.label:
                        reacquired += 1
                    else:
                        relabels += 1
                    self._missing.discard(predecessor)
                    del self._seen[predecessor]
                elif not self._explained(entity.box, hands, width, height):
                    unexplained_births += 1
            else:
                if seen.label != entity.label:
                    relabels += 1
                frames = max(frame_index - seen.last_observed, 1)
                (x, y), (seen_x, seen_y) = _centre(entity.box), _centre(seen.box)
                step = math.hypot(x - seen_x, y - seen_y) / (frames * diagonal)
                depth = entity.depth
                depth_step = abs(depth - seen.depth) / frames if depth is not None and seen.depth is not None else 0.0
                if step > self.max_step or depth_step > self.max_depth_step:
                    jumps += 1
                self._missing.discard(entity.id)
            self._seen[entity.id] = _Seen(entity.label, entity.role, entity.box.copy(), entity.depth, frame_index)
        now = {entity.id for entity in observed}
        gone = [track for track in self._previous - now if track in self._seen]
        unexplained_gone = [track for track in gone if not self._explained(self._seen[track].box, hands, width, height)]
        self._missing.update(unexplained_gone)
        self._previous = now
        return SceneEvents(observed=len(observed), births=births, unexplained_births=unexplained_births,
                           reacquired=reacquired, disappearances=len(gone),
                           unexplained_disappearances=len(unexplained_gone), relabels=relabels, jumps=jumps,
                           missing=len(self._missing))

    def _forget(self, frame_index: int) -> None:
        old = [track for track, seen in self._seen.items() if seen.last_observed < frame_index - self.memory]
        for track in old:
            del self._seen[track]
            self._missing.discard(track)
            self._previous.discard(track)

    def _predecessor(self, entity: Entity, frame_index: int) -> int | None:
        """The vanished entity a new track takes the place of (best box IoU), if any."""
        candidates = [track for track, seen in self._seen.items()  # vanished: neither last frame nor this one
                      if track not in self._previous and 0 < frame_index - seen.last_observed <= self.reacquire_frames]
        if not candidates:
            return None
        ious = box_iou(entity.box, np.array([self._seen[track].box for track in candidates]))[0]
        best = int(np.argmax(ious))
        return candidates[best] if ious[best] >= self.reacquire_iou else None

    def _explained(self, box: np.ndarray, hands: np.ndarray, width: int, height: int) -> bool:
        """Near the image border, or touching a (grown) hand box: hands is (H, 4)."""
        x1, y1, x2, y2 = box
        bx, by = self.border * width, self.border * height
        if x1 <= bx or y1 <= by or x2 >= width - 1 - bx or y2 >= height - 1 - by:
            return True
        return bool(np.any((x1 <= hands[:, 2]) & (x2 >= hands[:, 0]) & (y1 <= hands[:, 3]) & (y2 >= hands[:, 1])))


def _centre(box: np.ndarray) -> tuple[float, float]:
    x1, y1, x2, y2 = box.tolist()       # Python floats: numpy's per-element cost is larger than the sums
    return (x1 + x2) / 2.0, (y1 + y2) / 2.0


def _grown(box: np.ndarray, margin: float) -> np.ndarray:
    x1, y1, x2, y2 = box
    dx, dy = margin * (x2 - x1), margin * (y2 - y1)
    return np.array([x1 - dx, y1 - dy, x2 + dx, y2 + dy])
