"""A small table of items keyed by header stamp: FrameInfo waiting for the Image it describes.

FrameInfo (reliable) and Image (best effort) travel on different topics, so either may arrive
first. The table holds FrameInfos by stamp until their image comes (`pop`), refuses stamps older
than the newest one it has seen (out of order), and gives back the entries whose image never came
(`expire`, bounded size) so the node can count them instead of forgetting them.
"""
from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Generic, TypeVar

Item = TypeVar("Item")


class OutOfOrder(ValueError):
    """A stamp not newer than the newest stamp the table has accepted."""


class StampTable(Generic[Item]):
    def __init__(self, capacity: int = 256, clock=time.monotonic) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be >= 1, got {capacity}")
        self.capacity = capacity
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: OrderedDict[int, tuple[float, Item]] = OrderedDict()
        self._newest: int | None = None

    def add(self, stamp_ns: int, item: Item) -> list[Item]:
        """Store `item` under `stamp_ns`; returns the oldest entries pushed out by the capacity.

        Raises OutOfOrder when stamp_ns is not newer than every stamp added before.
        """
        with self._lock:
            if self._newest is not None and stamp_ns <= self._newest:
                raise OutOfOrder(f"stamp {stamp_ns} ns is not newer than the previous one ({self._newest} ns)")
            self._newest = stamp_ns
            self._entries[stamp_ns] = (self._clock(), item)
            evicted = []
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
