"""A node's health for `/diagnostics`: OK, WARN or ERROR, with a one-line reason (no rclpy here).

Two sources: what the counters did in the last reporting interval (malformed or unmatched input
warns, a processing failure is an error), and conditions the node raises itself (a QoS mismatch, a
missing input, a stalled source), each held until cleared or for `hold_s` seconds.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Mapping

from predrel_ros.ros.kit.frame_counters import (
    FAILED,
    IMAGE_LOST,
    MALFORMED,
    NO_FRAME_INFO,
    OUT_OF_ORDER,
    PROCESSED,
    UNSYNCHRONISED,
)

#: levels, as diagnostic_msgs/DiagnosticStatus numbers them
OK, WARN, ERROR = 0, 1, 2
LEVEL_NAMES = {OK: "OK", WARN: "WARN", ERROR: "ERROR"}
#: outcomes that make an interval WARN (bad or lost input) or ERROR (the node failed)
WARNING_OUTCOMES = (MALFORMED, OUT_OF_ORDER, UNSYNCHRONISED, IMAGE_LOST, NO_FRAME_INFO)
ERROR_OUTCOMES = (FAILED,)


@dataclass(frozen=True)
class Condition:
    level: int
    text: str
    until: float | None  # monotonic time it lapses, None = until cleared


class Health:
    def __init__(self, clock=time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._conditions: dict[str, Condition] = {}

    def raise_condition(self, key: str, level: int, text: str, hold_s: float | None = None) -> None:
        if level not in LEVEL_NAMES:
            raise ValueError(f"level must be one of {sorted(LEVEL_NAMES)}, got {level}")
        with self._lock:
            self._conditions[key] = Condition(level, text, None if hold_s is None else self._clock() + hold_s)

    def clear(self, key: str) -> None:
        with self._lock:
            self._conditions.pop(key, None)

    def conditions(self) -> list[Condition]:
        now = self._clock()
        with self._lock:
            for key in [k for k, c in self._conditions.items() if c.until is not None and c.until <= now]:
                del self._conditions[key]
            return list(self._conditions.values())

    def assess(self, seconds: float, increments: Mapping[str, int]) -> tuple[int, str]:
        """(level, message) from the counter increments of the last `seconds` (keys "stream.outcome"
        or "outcome") and the current conditions."""
        by_outcome: dict[str, int] = {}
        for key, n in increments.items():
            outcome = key.rsplit(".", 1)[-1]
            by_outcome[outcome] = by_outcome.get(outcome, 0) + n
        level, events = OK, []
        for outcome in ERROR_OUTCOMES + WARNING_OUTCOMES:
            if by_outcome.get(outcome):
                level = max(level, ERROR if outcome in ERROR_OUTCOMES else WARN)
                events.append(f"{by_outcome[outcome]} {outcome}")
        conditions = sorted(self.conditions(), key=lambda c: -c.level)
        level = max([level] + [c.level for c in conditions])
        parts = [c.text for c in conditions]
        if events:
            parts.append(f"{', '.join(events)} in the last {seconds:.1f} s")
        rate = by_outcome.get(PROCESSED, 0) / seconds if seconds > 0 else 0.0
        parts.append(f"{rate:.1f} frames/s processed")
        return level, "; ".join(parts)
