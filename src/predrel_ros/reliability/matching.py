"""Joining the parts of one frame that arrive on separate streams, by frame_index.

Over DDS the streams the reliability monitor compares arrive independently: the evaluated
predicates (e.g. `degraded/predicates`), their reference (`clean/predicates` or the ground truth)
and, for the association of entities, the entities each side's predicates were computed from.
Any part of a frame may come first, a pipeline may lag, drop a frame or stop.
`FrameIndexMatcher` holds the parts still waiting for the rest of their frame in a bounded buffer
per part and hands out a frame as soon as all its parts are there. Complete frames come out in
increasing frame_index, as the rolling metrics need them (the stream-order policy,
`predrel_ros.core.stream_order`, strict: the matcher's owner decides restarts and calls `reset`),
so once frame f is complete every waiting part of an older frame can no longer be used: it is
counted unmatched and dropped. Every part given to the matcher ends up in exactly one counter:

- `matched` (per complete frame, so one count covers one item of every part);
- `unmatched_<part>`: the rest of its frame never came (another pipeline dropped it, or it came
  too late), or it fell out of the full buffer;
- `late_<part>`: it arrived after a newer frame had been completed, or implausibly far ahead of it
  (more than `stream_order.MAX_INDEX_STEP` frames: it would never be matched);
- `duplicate_<part>`: its part already had an item with that index waiting (the first one is kept);
- `pending_<part>` (not a final state): still waiting;
- `incomplete` (per frame, only with `optional` parts): a frame whose required parts all came but an
  optional part did not (the evaluated pipeline dropped or lost the frame) is handed out without
  it (`take_incomplete`) once it can no longer be completed: a newer frame completed, or the
  buffer of a required part is full. The reliability monitor scores such a frame as the offline
  evaluation does (every reference stream disagrees), instead of leaving it out.
"""
from __future__ import annotations

from typing import Any, Sequence

from predrel_ros.core.stream_order import NEXT, StreamOrder

EVALUATED = "evaluated"
REFERENCE = "reference"
#: the entities of each side (for the association of evaluated with reference entities)
EVALUATED_ENTITIES = "evaluated_entities"
REFERENCE_ENTITIES = "reference_entities"


class FrameIndexMatcher:
    """Joins one item per part by frame_index. parts: the part names (at least two); capacity:
    frames waiting per part at most; optional: parts a frame may be handed out without (see the
    module docstring), at least one part must be required."""

    def __init__(self, parts: Sequence[str] = (EVALUATED, REFERENCE), capacity: int = 64,
                 optional: Sequence[str] = ()) -> None:
        parts = tuple(parts)
        if len(parts) < 2 or len(set(parts)) != len(parts):
            raise ValueError(f"parts must name at least two distinct parts, got {parts}")
        if capacity < 1:
            raise ValueError(f"capacity must be >= 1 frame, got {capacity}")
        optional = tuple(optional)
        if not set(optional) <= set(parts) or set(optional) == set(parts):
            raise ValueError(f"optional parts must be some of {parts}, not all, got {optional}")
        self.parts = parts
        self.capacity = capacity
        self.required = tuple(part for part in parts if part not in optional)
        self.optional = optional
        self._incomplete: list[tuple[int, dict[str, Any]]] = []
        self.counters: dict[str, int] = {"matched": 0}
        if optional:
            self.counters["incomplete"] = 0
        for part in parts:
            for state in ("unmatched", "late", "duplicate"):
                self.counters[f"{state}_{part}"] = 0
        self._waiting: dict[str, dict[int, Any]] = {part: {} for part in parts}
        self._order = StreamOrder(restart_after=0)

    @property
    def last_matched(self) -> int | None:
        """The newest frame handed out (None: none since the start or the last reset)."""
        return self._order.last

    def reset(self) -> None:
        """Forget the order and the waiting items, which count as unmatched (a new sequence
        starts); the counters are kept."""
        for part, frames in self._waiting.items():
            self.counters[f"unmatched_{part}"] += len(frames)
            frames.clear()
        self._order.reset()
        self._incomplete.clear()

    def take_incomplete(self) -> list[tuple[int, dict[str, Any]]]:
        """The frames handed out without their optional parts since the last call, oldest first
        (each older than the frame `add` returned with them): (frame_index, {part: item} for the
        parts that came)."""
        frames, self._incomplete = self._incomplete, []
        return frames

    def pending(self, part: str) -> int:
        return len(self._waiting[part])

    def add(self, part: str, frame_index: int, item: Any) -> tuple[int, dict[str, Any]] | None:
        """Add one item of `part`; returns (frame_index, {part: item} for every part) when it
        completes its frame, else None."""
        if part not in self._waiting:
            raise ValueError(f"part must be one of {self.parts}, got {part!r}")
        frame_index = int(frame_index)
        if self._order.check(frame_index) != NEXT:
            self.counters[f"late_{part}"] += 1
            return None
        waiting = self._waiting[part]
        if frame_index in waiting:
            self.counters[f"duplicate_{part}"] += 1
            return None
        if any(frame_index not in self._waiting[other] for other in self.parts if other != part):
            waiting[frame_index] = item
            if len(waiting) > self.capacity:
                oldest = min(waiting)
                if part in self.required and self._has_required(oldest):
                    self._pass(oldest)
                    self._hand_out_incomplete(oldest)
                else:
                    self._expire(part, oldest)
            return None
        frame = {other: self._waiting[other].pop(frame_index) for other in self.parts if other != part}
        frame[part] = item
        self.counters["matched"] += 1
        self._pass(frame_index)
        self._order.accept(frame_index)
        return frame_index, frame

    def _has_required(self, frame_index: int) -> bool:
        return all(frame_index in self._waiting[part] for part in self.required)

    def _hand_out_incomplete(self, frame_index: int) -> None:
        frame = {part: self._waiting[part].pop(frame_index) for part in self.parts
                 if frame_index in self._waiting[part]}
        self._incomplete.append((frame_index, frame))
        self.counters["incomplete"] += 1
        self._order.accept(frame_index)

    def _pass(self, frame_index: int) -> None:
        """Every waiting frame older than `frame_index` can no longer be completed: handed out
        incomplete when it may be (oldest first), else its parts are unmatched."""
        older = sorted({index for frames in self._waiting.values() for index in frames if index < frame_index})
        for index in older:
            if self.optional and self._has_required(index):
                self._hand_out_incomplete(index)
            else:
                for each in self.parts:
                    if index in self._waiting[each]:
                        self._expire(each, index)

    def _expire(self, part: str, frame_index: int) -> None:
        del self._waiting[part][frame_index]
        self.counters[f"unmatched_{part}"] += 1

    def snapshot(self) -> dict[str, int]:
        """The counters plus the items still waiting per part."""
        return {**self.counters, **{f"pending_{part}": self.pending(part) for part in self.parts}}
