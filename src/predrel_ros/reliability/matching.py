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
- `pending_<part>` (not a final state): still waiting.
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
    frames waiting per part at most."""

    def __init__(self, parts: Sequence[str] = (EVALUATED, REFERENCE), capacity: int = 64) -> None:
        parts = tuple(parts)
        if len(parts) < 2 or len(set(parts)) != len(parts):
            raise ValueError(f"parts must name at least two distinct parts, got {parts}")
        if capacity < 1:
            raise ValueError(f"capacity must be >= 1 frame, got {capacity}")
        self.parts = parts
        self.capacity = capacity
        self.counters: dict[str, int] = {"matched": 0}
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
                self._expire(part, min(waiting))
            return None
        frame = {other: self._waiting[other].pop(frame_index) for other in self.parts if other != part}
        frame[part] = item
        self.counters["matched"] += 1
        self._order.accept(frame_index)
        for each in self.parts:
            for old in [index for index in self._waiting[each] if index < frame_index]:
                self._expire(each, old)
        return frame_index, frame

    def _expire(self, part: str, frame_index: int) -> None:
        del self._waiting[part][frame_index]
        self.counters[f"unmatched_{part}"] += 1

    def snapshot(self) -> dict[str, int]:
        """The counters plus the items still waiting per part."""
        return {**self.counters, **{f"pending_{part}": self.pending(part) for part in self.parts}}
