"""Frame order of a live stream: older frames are refused, a stream that keeps going back restarted.

The stateful stages (predicate extraction, rolling reliability, the action recognizer) need frames
in increasing frame_index. A frame whose index is not above the last accepted one is out of order
(a stale or repeated message) and is skipped. But when the producer restarts (a perception node
respawned and numbering from 0 again, a bag played again), every following frame is "old": skipping
them all would silence the node for good. So `restart_after` consecutive out-of-order frames mean
a new sequence: the caller resets its state and takes the frame.

    order = StreamOrder(restart_after=5)
    verdict = order.check(frame_index)        # NEXT, OUT_OF_ORDER or RESTART
    if verdict == OUT_OF_ORDER: count it, skip the frame
    if verdict == RESTART: reset the stage, count the restart
    ... process; then order.accept(frame_index) once the frame was taken
"""
from __future__ import annotations

NEXT = "next"
OUT_OF_ORDER = "out_of_order"
RESTART = "restart"


class StreamOrder:
    """restart_after: consecutive out-of-order frames that mean the stream restarted (0: never)."""

    def __init__(self, restart_after: int = 5) -> None:
        if restart_after < 0:
            raise ValueError(f"restart_after must be >= 0 frames (0 = never), got {restart_after}")
        self.restart_after = restart_after
        self.last: int | None = None
        self._behind = 0

    def check(self, frame_index: int) -> str:
        """Verdict on the next frame (counts consecutive out-of-order frames; accept() clears that)."""
        if self.last is None or frame_index > self.last:
            return NEXT
        self._behind += 1
        if self.restart_after and self._behind >= self.restart_after:
            return RESTART
        return OUT_OF_ORDER

    def accept(self, frame_index: int) -> None:
        """The frame was taken: later frames must be newer."""
        self.last = int(frame_index)
        self._behind = 0

    def reset(self) -> None:
        self.last = None
        self._behind = 0
