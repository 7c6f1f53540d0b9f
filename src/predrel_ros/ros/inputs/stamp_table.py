"""A small table of items keyed by header stamp: FrameInfo waiting for the Image it describes.

FrameInfo (reliable) and Image (best effort) travel on different topics, so either may arrive
first. The table holds FrameInfos by stamp until their image comes (`pop`), refuses what the
stream-order policy (`predrel_ros.core.stream_order`) calls out of order: a stamp not newer than the
newest one accepted, or more than an hour ahead of it (a bogus stamp never becomes the reference);
items that carry a frame_index (FrameInfo) are ordered by it, with the stamp as the policy's clock.
When the policy sees the stream restart (`restart_after` out-of-order items in a row, a bag played
again), the item is taken as the first of a new sequence (`order.restarts` counts them) and the
entries of the old sequence that are not older than it are given back. It also gives back the
entries whose image never came (`expire`, bounded size) so the node can count them instead of
forgetting them.
"""
from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Generic, TypeVar

from predrel_ros.core.stream_order import OUT_OF_ORDER, RESTART, StreamOrder

Item = TypeVar("Item")


class OutOfOrder(ValueError):
    """An item the stream-order policy refused (not newer than the newest accepted, or far ahead)."""


class StampTable(Generic[Item]):
    def __init__(self, capacity: int = 256, clock=time.monotonic, by_frame_index: bool = False) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be >= 1, got {capacity}")
        self.capacity = capacity
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: OrderedDict[int, tuple[float, Item]] = OrderedDict()
        self._newest: int | None = None
        self.by_frame_index = by_frame_index
        #: the policy (its `restarts` counts the restarts, its `reason` says why the last one happened)
        self.order = StreamOrder() if by_frame_index else StreamOrder.of_stamps()

    def add(self, stamp_ns: int, item: Item, frame_index: int | None = None) -> list[Item]:
        """Store `item` under `stamp_ns`; returns the entries it pushed out: the oldest beyond the
        capacity, and on a restart those of the old sequence not older than `stamp_ns`.
        frame_index: the item's, needed (and only read) by a table `by_frame_index`.

        Raises OutOfOrder for an item the stream-order policy refuses (nothing changes then).
        """
        with self._lock:
            if stamp_ns in self._entries:
                raise OutOfOrder(f"stamp {stamp_ns} ns is already waiting")
            if not self.by_frame_index:
                position, clock = stamp_ns, None
            elif frame_index is None:
                raise ValueError("this table orders its items by frame_index: give it")
            else:
                position, clock = int(frame_index), stamp_ns
            verdict = self.order.check(position, clock)
            if verdict == OUT_OF_ORDER:
                raise OutOfOrder(self.order.reason)
            evicted = []
            if verdict == RESTART:
                self.order.reset()
                evicted = [self._entries.pop(old)[1] for old in [s for s in self._entries if s >= stamp_ns]]
            self.order.accept(position, clock)
            self._newest = stamp_ns
            self._entries[stamp_ns] = (self._clock(), item)
            while len(self._entries) > self.capacity:
                evicted.append(self._entries.popitem(last=False)[1][1])
            return evicted

    def pop(self, stamp_ns: int) -> Item | None:
        """The item stored under exactly `stamp_ns` (removed), or None."""
        with self._lock:
            entry = self._entries.pop(stamp_ns, None)
            return None if entry is None else entry[1]

    def pop_older(self, stamp_ns: int) -> list[Item]:
        """Remove and return every item stored under a stamp older than `stamp_ns`."""
        with self._lock:
            old = [stamp for stamp in self._entries if stamp < stamp_ns]
            return [self._entries.pop(stamp)[1] for stamp in old]

    def expire(self, max_age_s: float) -> list[Item]:
        """Remove and return the items added more than max_age_s ago."""
        limit = self._clock() - max_age_s
        with self._lock:
            old = [stamp for stamp, (added, _) in self._entries.items() if added < limit]
            return [self._entries.pop(stamp)[1] for stamp in old]

    def drain(self) -> list[Item]:
        """Remove and return everything (at shutdown)."""
        with self._lock:
            items = [item for _, item in self._entries.values()]
            self._entries.clear()
            return items

    @property
    def newest_stamp(self) -> int | None:
        with self._lock:
            return self._newest

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def __contains__(self, stamp_ns: int) -> bool:
        with self._lock:
            return stamp_ns in self._entries
