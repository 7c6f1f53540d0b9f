"""Counters of what happened to every input of a node: processed, or dropped with a reason.

Every frame (or message) a node receives ends in exactly one outcome, so `inputs == sum(outcomes)`
once nothing is pending; `/diagnostics` and the shutdown log show them. Counting is thread-safe
(the perception node counts from its worker thread and its callbacks).

Outcome names shared by the nodes are the constants below (`OUTCOMES`); a node may count other
events too (e.g. `pace_timeout`), which are not outcomes.
"""
from __future__ import annotations

import threading
import time
from collections import Counter
from typing import Iterable, Mapping

#: the input was processed and its result published
PROCESSED = "processed"
#: replaced by a newer input before it was processed (newest-frame processing)
DROPPED_STALE = "dropped_stale"
#: the frame_drop degradation dropped it (FrameInfo action=drop): nothing to process
DROPPED_BY_DEGRADATION = "dropped_by_degradation"
#: it could not be decoded or failed validation (wrong encoding, sizes, NaN, unknown kind, ...)
MALFORMED = "malformed"
#: its stamp or frame_index is older than one already taken, or implausibly far ahead of it (the
#: stream-order policy, `predrel_ros.core.stream_order`)
OUT_OF_ORDER = "out_of_order"
#: a depth image or camera info without a partner within the synchroniser's slop and queue
UNSYNCHRONISED = "unsynchronised"
#: its work was skipped because nobody subscribes to the result (lazy publishing)
NO_SUBSCRIBERS = "no_subscribers"
#: its FrameInfo said an image was published, but the image never arrived (lost in transport, or
#: replaced in the subscription queue before the node could take it)
IMAGE_LOST = "image_lost"
#: an image whose FrameInfo never arrived although the stream publishes FrameInfo
NO_FRAME_INFO = "no_frame_info"
#: its twin frame (the same frame_index on the reference stream, or the evaluated one) never came
UNMATCHED = "unmatched"
#: it held more entities or predicates than the node's per-message bound (refused before any work)
TOO_LARGE = "too_large"
#: the replay skipped it in lockstep: the pipelines behind its pace topic still had `lockstep_in_flight`
#: frames in flight, so no twin gets it (ros/replay/lockstep.py)
DROPPED_BUSY = "dropped_busy"
#: processing raised an unexpected error (logged with its traceback)
FAILED = "failed"

OUTCOMES = (PROCESSED, DROPPED_STALE, DROPPED_BY_DEGRADATION, DROPPED_BUSY, MALFORMED, OUT_OF_ORDER, UNSYNCHRONISED,
            NO_SUBSCRIBERS, IMAGE_LOST, NO_FRAME_INFO, UNMATCHED, TOO_LARGE, FAILED)


class FrameCounters:
    """Named counters (outcomes per input stream, plus any other event a node counts).

    `count("image_raw", MALFORMED)` adds to the key "image_raw.malformed"; keys without a stream
    are plain. `interval()` gives the increments since its previous call (diagnostics: rates).
    """

    def __init__(self, clock=time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()
        self._interval_base: tuple[float, Counter[str]] = (clock(), Counter())

    @staticmethod
    def key(stream: str | None, outcome: str) -> str:
        return f"{stream}.{outcome}" if stream else outcome

    def count(self, stream: str | None, outcome: str, n: int = 1) -> None:
        if not n:
            return  # no key for what never happened
        with self._lock:
            self._counts[self.key(stream, outcome)] += n

    def get(self, stream: str | None, outcome: str) -> int:
        with self._lock:
            return self._counts[self.key(stream, outcome)]

    def snapshot(self) -> dict[str, int]:
        """All counters, sorted by key."""
        with self._lock:
            return dict(sorted(self._counts.items()))

    def stream(self, stream: str) -> dict[str, int]:
        """The counters of one stream, keyed by outcome."""
        prefix = f"{stream}."
        with self._lock:
            return {key[len(prefix):]: n for key, n in sorted(self._counts.items()) if key.startswith(prefix)}

    def total(self, stream: str | None, outcomes: Iterable[str] = OUTCOMES) -> int:
        with self._lock:
            return sum(self._counts[self.key(stream, outcome)] for outcome in outcomes)

    def interval(self) -> tuple[float, dict[str, int]]:
        """(seconds, increments of every counter) since the previous call (since creation at first)."""
        now = self._clock()
        with self._lock:
            since, before = self._interval_base
            current = Counter(self._counts)
            self._interval_base = (now, current)
        return now - since, {key: current[key] - before[key] for key in sorted(current) if current[key] != before[key]}


def summary(counts: Mapping[str, int]) -> str:
    """One line for logs: "image_raw.processed=120 image_raw.dropped_stale=3 ..."."""
    return " ".join(f"{key}={value}" for key, value in counts.items()) or "nothing counted"
