"""Approximate-time synchronisation of a few streams (image + depth + camera info) without ROS.

The perception node uses message_filters' ApproximateTimeSynchronizer where message_filters is
importable; this is the same idea for where it is not (it is not installable from PyPI), plus
what message_filters lacks: every message that leaves without a partner is reported (`on_drop`),
so the node counts it `unsynchronised` instead of losing it silently.

Each `add(input, stamp_ns, item)` tries to complete a set around the new message: from every other
input the message with the nearest stamp within `slop_ns`. A complete set goes to `on_match` (items
in input order); every waiting message not newer than the set's, on any input, then leaves: the
set's own members matched, the older ones dropped. Queues hold at most `queue_size` messages per
input (the oldest is dropped), and a message not newer than the last matched set is dropped at once.
"""
from __future__ import annotations

import bisect
import threading
from typing import Any, Callable, Sequence


class ApproximateTimeSynchroniser:
    def __init__(self, inputs: Sequence[str], slop_ns: int, queue_size: int,
                 on_match: Callable[[list[Any]], None], on_drop: Callable[[str, Any], None]) -> None:
        if len(inputs) < 2 or len(set(inputs)) != len(inputs):
            raise ValueError(f"inputs must be two or more distinct names, got {list(inputs)}")
        if slop_ns < 0 or queue_size < 1:
            raise ValueError(f"slop_ns must be >= 0 and queue_size >= 1, got {slop_ns}, {queue_size}")
        self.inputs = tuple(inputs)
        self.slop_ns = int(slop_ns)
        self.queue_size = int(queue_size)
        self._on_match = on_match
        self._on_drop = on_drop
        self._queues: list[list[tuple[int, int, Any]]] = [[] for _ in inputs]  # (stamp, arrival, item)
        self._arrivals = 0
        self._last_matched: int | None = None
        self._lock = threading.Lock()

    def add(self, input_name: str, stamp_ns: int, item: Any) -> None:
        index = self.inputs.index(input_name)
        matched: list[Any] | None = None
        dropped: list[tuple[str, Any]] = []
        with self._lock:
            if self._last_matched is not None and stamp_ns <= self._last_matched:
                dropped.append((input_name, item))
            else:
                queue = self._queues[index]
                self._arrivals += 1
                entry = (int(stamp_ns), self._arrivals, item)
                bisect.insort(queue, entry, key=lambda queued: queued[:2])
                while len(queue) > self.queue_size:
                    dropped.append((input_name, queue.pop(0)[2]))
                if any(queued is entry for queued in queue):  # an old message may overflow at once
                    matched = self._match(index, entry, dropped)
        for name, old in dropped:
            self._on_drop(name, old)
        if matched is not None:
            self._on_match(matched)

    def _match(self, pivot: int, entry: tuple, dropped: list) -> list[Any] | None:
        stamp_ns = entry[0]
        chosen = []
        for index, queue in enumerate(self._queues):
            if index == pivot:
                chosen.append(entry)
                continue
            best = min(queue, key=lambda entry: abs(entry[0] - stamp_ns), default=None)
            if best is None or abs(best[0] - stamp_ns) > self.slop_ns:
                return None
            chosen.append(best)
        newest = max(entry[0] for entry in chosen)
        for index, queue in enumerate(self._queues):
            keep = []
            for entry in queue:
                if entry is chosen[index]:
                    continue
                if entry[0] <= newest:
                    dropped.append((self.inputs[index], entry[2]))
                else:
                    keep.append(entry)
            queue[:] = keep
        self._last_matched = newest
        return [entry[2] for entry in chosen]

    def pending(self) -> dict[str, int]:
        with self._lock:
            return {name: len(queue) for name, queue in zip(self.inputs, self._queues)}

    def drain(self) -> list[tuple[str, Any]]:
        """Remove and return every waiting (input, item) (at shutdown, to count them)."""
        with self._lock:
            items = [(name, entry[2]) for name, queue in zip(self.inputs, self._queues) for entry in queue]
            for queue in self._queues:
                queue.clear()
            return items
