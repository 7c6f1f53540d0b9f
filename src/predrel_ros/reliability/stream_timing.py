"""Stream timing as trust evidence: which frames of the rolling window the evaluated stream delivered.

Frames carry consecutive indices (the camera's or the replay's frame_index), so a gap in the
indices is a frame the pipeline never published (dropped by the camera, the transport or the
frame-drop degradation). `predrel eval` and the reference modes score such a frame as a
disagreement on every stream (`tools.evaluation.rolling_agreement`), so the agreement to expect
over a window is the agreement expected on the delivered frames times the delivered share of the
window: `delivered_share` is that factor, which the monitor applies to the expected agreement.
"""
from __future__ import annotations

import math
from collections import deque


class StreamTiming:
    """The delivered frame indices of the last `window` frames (by index)."""

    def __init__(self, window: int) -> None:
        if window < 1:
            raise ValueError(f"window must be >= 1 frame, got {window}")
        self.window = window
        self.reset()

    def reset(self) -> None:
        self._delivered: deque[int] = deque()
        self._first: int | None = None

    def update(self, frame_index: int) -> None:
        """One delivered frame (indices increase)."""
        if self._first is None:
            self._first = frame_index
        self._delivered.append(frame_index)
        oldest = frame_index - self.window + 1
        while self._delivered[0] < oldest:
            self._delivered.popleft()

    def span(self) -> int:
        """Frames the window covers so far: `window`, or fewer since the first frame."""
        if self._first is None:
            return 0
        return min(self.window, self._delivered[-1] - self._first + 1)

    def delivered_share(self) -> float:
        """Delivered frames / frames of the window (NaN before the first frame)."""
        span = self.span()
        return len(self._delivered) / span if span else math.nan

    def gaps(self) -> int:
        """Frames of the window that were not delivered."""
        return self.span() - len(self._delivered)
