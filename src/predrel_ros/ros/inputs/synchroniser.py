"""Approximate-time synchronisation of a few streams (image + depth + camera info) without ROS.

The perception node uses message_filters' ApproximateTimeSynchronizer where message_filters is
importable; this is the same idea for where it is not (it is not installable from PyPI), plus
what message_filters lacks: every message that leaves without a partner is reported (`on_drop`),
so the node counts it `unsynchronised` instead of losing it silently.

Each `add(input, stamp_ns, item)` tries to complete a set around the new message: from every other
input the message with the nearest stamp within `slop_ns`. A complete set goes to `on_match` (items
in input order); every waiting message not newer than the set's, on any input, then leaves: the
set's own members matched, the older ones dropped. Queues hold at most `queue_size` messages per
input (the oldest is dropped), and a message the stream-order policy (`predrel_ros.core.stream_order`,
by stamp) calls out of order against the last matched set, not newer or more than an hour ahead (a
bogus stamp), is dropped at once. When the policy sees the camera restart (its clock went back for
good: 5 such stamps in a row), everything waiting is dropped, `on_restart(reason)` is told, and
the message starts the new sequence (`sequence` counts them: a consumer that orders the sets too
starts anew with the first set of a new sequence, instead of refusing it again).
"""
from __future__ import annotations

import bisect
import threading
from typing import Any, Callable, Sequence

from predrel_ros.core.stream_order import OUT_OF_ORDER, RESTART, StreamOrder


class ApproximateTimeSynchroniser:
    def __init__(self, inputs: Sequence[str], slop_ns: int, queue_size: int,
                 on_match: Callable[[list[Any]], None], on_drop: Callable[[str, Any], None],
                 on_restart: Callable[[str], None] | None = None) -> None:
        if len(inputs) < 2 or len(set(inputs)) != len(inputs):
            raise ValueError(f"inputs must be two or more distinct names, got {list(inputs)}")
        if slop_ns < 0 or queue_size < 1:
            raise ValueError(f"slop_ns must be >= 0 and queue_size >= 1, got {slop_ns}, {queue_size}")
        self.inputs = tuple(inputs)
        self.slop_ns = int(slop_ns)
        self.queue_size = int(queue_size)
        self._on_match = on_match
        self._on_drop = on_drop
        self._on_restart = on_restart
        self._queues: list[list[tuple[int, int, Any]]] = [[] for _ in inputs]  # (stamp, arrival, item)
        self._arrivals = 0
        self._order = StreamOrder.of_stamps()   # of the matched sets
        #: how many times the input streams restarted (the sequence the next set belongs to)
        self.sequence = 0
        self._lock = threading.Lock()

    def add(self, input_name: str, stamp_ns: int, item: Any) -> None:
        index = self.inputs.index(input_name)
        matched: list[Any] | None = None
        dropped: list[tuple[str, Any]] = []
        restart = ""
        with self._lock:
            verdict = self._order.check(stamp_ns)
            if verdict == OUT_OF_ORDER:
                dropped.append((input_name, item))
            else:
                if verdict == RESTART:
                    restart = self._order.reason
                    self._order.reset()
                    self.sequence += 1
                    dropped += self._take_all()
                queue = self._queues[index]
                self._arrivals += 1
                entry = (int(stamp_ns), self._arrivals, item)
                bisect.insort(queue, entry, key=lambda queued: queued[:2])
                while len(queue) > self.queue_size:
                    dropped.append((input_name, queue.pop(0)[2]))
                if any(queued is entry for queued in queue):  # an old message may overflow at once
                    matched = self._match(index, entry, dropped)
        if restart and self._on_restart is not None:
            self._on_restart(restart)
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
        self._order.accept(newest)
        return [entry[2] for entry in chosen]

    def pending(self) -> dict[str, int]:
        with self._lock:
            return {name: len(queue) for name, queue in zip(self.inputs, self._queues)}

    def drain(self) -> list[tuple[str, Any]]:
        """Remove and return every waiting (input, item) (at shutdown, to count them)."""
        with self._lock:
            return self._take_all()

    def _take_all(self) -> list[tuple[str, Any]]:
        items = [(name, entry[2]) for name, queue in zip(self.inputs, self._queues) for entry in queue]
        for queue in self._queues:
            queue.clear()
        return items
