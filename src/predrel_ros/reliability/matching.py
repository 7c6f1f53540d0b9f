"""Pairing the frames of an evaluated stream with the frames of its reference by frame_index.

Over DDS the two streams (e.g. `degraded/predicates` and `clean/predicates`, or the ground truth)
arrive independently: either side of a frame may come first, the other pipeline may lag, drop a
frame or stop. `FrameMatcher` holds the frames still waiting for their partner in a bounded buffer
per side and hands out each pair as soon as both sides are there. Matched pairs come out in
increasing frame_index, as the rolling metrics need them, so once frame f is matched every waiting
frame older than f can no longer be used: it is counted unmatched and dropped. Every frame given
to the matcher ends up in exactly one counter:

- `matched` (per pair, so one count covers one evaluated and one reference frame);
- `unmatched_evaluated` / `unmatched_reference`: its partner never came (the other pipeline
  dropped it, or it came too late), or it fell out of the full buffer;
- `late_evaluated` / `late_reference`: it arrived after a newer frame had been matched;
- `duplicate_evaluated` / `duplicate_reference`: its side already had a frame with that index
  waiting (the first one is kept);
- `pending_evaluated` / `pending_reference` (not a final state): still waiting.
"""
from __future__ import annotations

from typing import Any, Generic, TypeVar

EVALUATED = "evaluated"
REFERENCE = "reference"
SIDES = (EVALUATED, REFERENCE)

Item = TypeVar("Item")


class FrameMatcher(Generic[Item]):
    """Pairs items of two sides by frame_index. capacity: frames waiting per side at most."""

    def __init__(self, capacity: int = 64) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be >= 1 frame, got {capacity}")
        self.capacity = capacity
        self.counters: dict[str, int] = {"matched": 0}
        for side in SIDES:
            for state in ("unmatched", "late", "duplicate"):
                self.counters[f"{state}_{side}"] = 0
        self._waiting: dict[str, dict[int, Any]] = {side: {} for side in SIDES}
        self.last_matched: int | None = None

    def reset(self) -> None:
        """Forget the order and the waiting frames, which count as unmatched (a new sequence
        starts); the counters are kept."""
        for side, frames in self._waiting.items():
            self.counters[f"unmatched_{side}"] += len(frames)
            frames.clear()
        self.last_matched = None

    def pending(self, side: str) -> int:
        return len(self._waiting[side])

    def add(self, side: str, frame_index: int, item: Item) -> tuple[int, Item, Item] | None:
        """Add one frame of `side`; returns (frame_index, evaluated item, reference item) when it
        completes a pair, else None."""
        if side not in SIDES:
            raise ValueError(f"side must be one of {SIDES}, got {side!r}")
        frame_index = int(frame_index)
        if self.last_matched is not None and frame_index <= self.last_matched:
            self.counters[f"late_{side}"] += 1
            return None
        waiting = self._waiting[side]
        if frame_index in waiting:
            self.counters[f"duplicate_{side}"] += 1
            return None
        other_side = REFERENCE if side == EVALUATED else EVALUATED
        partner = self._waiting[other_side].pop(frame_index, None)
        if partner is None:
            waiting[frame_index] = item
            if len(waiting) > self.capacity:
                self._expire(side, min(waiting))
            return None
        self.counters["matched"] += 1
        self.last_matched = frame_index
        for each in SIDES:
            for old in [index for index in self._waiting[each] if index < frame_index]:
                self._expire(each, old)
        return (frame_index, item, partner) if side == EVALUATED else (frame_index, partner, item)

    def _expire(self, side: str, frame_index: int) -> None:
        del self._waiting[side][frame_index]
        self.counters[f"unmatched_{side}"] += 1

    def snapshot(self) -> dict[str, int]:
        """The counters plus the frames still waiting per side."""
        return {**self.counters, **{f"pending_{side}": self.pending(side) for side in SIDES}}
