"""Lockstep at real time: the frames the replay sent down its pipelines and not yet seen through.

Two perception twins that each drop stale frames drop different frames, so a clean-twin comparison
sees only the frames both happened to keep. In lockstep the replay itself decides: a frame due while
`limit` frames are still in flight (sent, and no pace message for them or a later frame yet) is not
published at all, so every pipeline behind the pace topic gets exactly the same frames, and none
queues more than it can take (with limit 2: one being processed, one waiting). A frame whose pace
message never comes leaves the window after `timeout_s` and is reported as expired.

No rclpy here: the replay node feeds it (ros/nodes/replay_node.py).
"""
from __future__ import annotations

import threading
import time
from collections import deque
from typing import Callable


class InFlightWindow:
    def __init__(self, limit: int, timeout_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        if limit < 1 or timeout_s <= 0:
            raise ValueError(f"lockstep needs limit >= 1 and timeout_s > 0, got {limit} and {timeout_s}")
        self.limit = limit
        self.timeout_s = timeout_s
        self._clock = clock
        self._lock = threading.Lock()
        self._sent: deque[tuple[int, float]] = deque()  # (frame_index, time sent), in sending order

    def sent(self, frame_index: int) -> None:
        with self._lock:
            self._sent.append((frame_index, self._clock()))

    def done_through(self, frame_index: int) -> None:
        """A pace message for `frame_index`: it and every frame sent before it are through."""
        with self._lock:
            while self._sent and self._sent[0][0] <= frame_index:
                self._sent.popleft()

    def expire(self) -> int:
        """Drop the frames in flight for longer than timeout_s; returns how many."""
        with self._lock:
            oldest_kept = self._clock() - self.timeout_s
            expired = 0
            while self._sent and self._sent[0][1] < oldest_kept:
                self._sent.popleft()
                expired += 1
            return expired

    @property
    def in_flight(self) -> int:
        with self._lock:
            return len(self._sent)

    def full(self) -> bool:
        """Whether a frame due now must be skipped (call `expire` first)."""
        return self.in_flight >= self.limit
