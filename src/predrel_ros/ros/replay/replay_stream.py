"""What the replay node plays, and when (no rclpy here).

`replay_frames` turns a source (anything `open_frames` reads, opened again for each pass) into the
frames to publish: from `start_offset_s` on, at most `max_frames` per pass, passes repeated when
looping. Frame indices and source times keep increasing across passes (a pass starts one frame
period after the previous one ended), so downstream order checks and synchronisers never see time
go back.

`Pacer` holds frames to their due wall-clock time: source time / rate after the start. A rate
change re-anchors at the current frame, so playback speeds up or slows down without a jump.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Iterator

import numpy as np

from predrel_ros.core.errors import UserError
from predrel_ros.core.frame import Frame

#: frame period assumed for a pass of a single frame (no interval to measure)
DEFAULT_PERIOD_NS = 33_333_333


@dataclass(frozen=True)
class ReplayFrame:
    """One frame to publish: `frame_index` and `time_ns` (since the first published frame, in source
    time) keep increasing across passes; `frame` is the source frame (its own index and stamp)."""

    frame_index: int
    time_ns: int
    loop: int
    frame: Frame


def replay_frames(open_source: Callable[[], Iterator[Frame]], start_offset_s: float = 0.0, max_frames: int = 0,
                  loop: bool = False, passes: int = 0) -> Iterator[ReplayFrame]:
    """The frames of each pass over the source, numbered and timed across passes.

    A pass plays the frames whose stamp is at least start_offset_s after the source's first stamp,
    at most max_frames of them (0: all). With `loop`, `passes` passes (0: without end). UserError
    when a pass has no frame.
    """
    if start_offset_s < 0 or max_frames < 0 or passes < 0:
        raise ValueError(f"start_offset_s, max_frames and passes must be >= 0, got {start_offset_s}, {max_frames}, "
                         f"{passes}")
    frame_index, base_ns, pass_number = 0, 0, 0
    while True:
        first_stamp = played_first = played_last = None
        played = 0
        for frame in open_source():
            first_stamp = frame.stamp_ns if first_stamp is None else first_stamp
            if frame.stamp_ns - first_stamp < start_offset_s * 1e9:
                continue
            played_first = frame.stamp_ns if played_first is None else played_first
            if played_last is not None and frame.stamp_ns < played_last:
                raise UserError(f"source frame {frame.index}: stamp {frame.stamp_ns} ns goes back in time "
                                f"(previous {played_last} ns); the replay needs increasing stamps")
            played_last = frame.stamp_ns
            yield ReplayFrame(frame_index, base_ns + frame.stamp_ns - played_first, pass_number, frame)
            frame_index += 1
            played += 1
            if max_frames and played >= max_frames:
                break
        if played == 0:
            raise UserError("the source has no frames" + (f" after start_offset_s={start_offset_s:g}"
                                                          if first_stamp is not None else ""))
        if not loop or (passes and pass_number + 1 >= passes):
            return
        period = (played_last - played_first) / (played - 1) if played > 1 else DEFAULT_PERIOD_NS
        base_ns += played_last - played_first + int(round(period))
        pass_number += 1


class Pacer:
    """Waits until each frame's due time: start + source time / rate (rate > 0)."""

    def __init__(self, rate: float, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self._clock = clock
        self._sleep = sleep
        self._anchor: tuple[float, int] | None = None  # (wall time, source time) of the anchor frame
        self.rate = self._check(rate)

    @staticmethod
    def _check(rate: float) -> float:
        if not rate > 0 or not np.isfinite(rate):
            raise ValueError(f"rate must be a positive number, got {rate}")
        return float(rate)

    def set_rate(self, rate: float) -> None:
        """Change the rate from the next frame on (re-anchored there)."""
        self.rate = self._check(rate)
        self._anchor = None

    def due(self, time_ns: int) -> float:
        """The wall-clock time (clock units) frame `time_ns` is due; the first frame anchors."""
        if self._anchor is None:
            self._anchor = (self._clock(), time_ns)
        wall, source = self._anchor
        return wall + (time_ns - source) / 1e9 / self.rate

    def wait(self, time_ns: int, stop: Callable[[], bool] = lambda: False, slice_s: float = 0.1) -> float:
        """Sleep until frame `time_ns` is due (in slices, returning early once `stop()`); returns
        how late it is (seconds, >= 0)."""
        due = self.due(time_ns)
        while not stop():
            remaining = due - self._clock()
            if remaining <= 0:
                return -remaining
            self._sleep(min(remaining, slice_s))
        return 0.0
