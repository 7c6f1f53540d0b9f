"""Rate limiting of repeated log messages per key, with a count of what was held back.

A camera sending a malformed stream at 30 Hz must not flood the log, yet the first message of each
kind must appear at once and the log must say how many were suppressed:

    throttle = LogThrottle(period_s=5.0)
    suppressed = throttle.allow("image_raw.malformed")
    if suppressed is not None:
        logger.warning(f"... ({suppressed} more since the last report)" if suppressed else "...")

(rclpy's `throttle_duration_sec` throttles per call site, not per key, and does not count.)
"""
from __future__ import annotations

import threading
import time


class LogThrottle:
    def __init__(self, period_s: float = 5.0, clock=time.monotonic) -> None:
        if period_s < 0:
            raise ValueError(f"period_s must be >= 0, got {period_s}")
        self.period_s = period_s
        self._clock = clock
        self._lock = threading.Lock()
        self._last: dict[str, float] = {}
        self._held: dict[str, int] = {}

    def allow(self, key: str) -> int | None:
        """None when a message for `key` was let through less than period_s ago (it is counted as
        suppressed); otherwise the number suppressed since the last one let through."""
        now = self._clock()
        with self._lock:
            last = self._last.get(key)
            if last is not None and now - last < self.period_s:
                self._held[key] = self._held.get(key, 0) + 1
                return None
            self._last[key] = now
            return self._held.pop(key, 0)


def suppressed_note(suppressed: int) -> str:
    """" (N more since the last report)" or ""."""
    return f" ({suppressed} more since the last report)" if suppressed else ""
