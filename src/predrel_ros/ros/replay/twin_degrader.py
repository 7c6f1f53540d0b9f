"""Frame-by-frame (push) use of `degradations.degrade_stream`, for nodes that receive one frame at a time.

`degrade_stream` pulls frames from an iterable; a node gets them from callbacks or a reader loop.
`TwinDegrader.degrade(frame_index, image, targets, payload)` feeds it one frame and returns the
`DegradedFrame` (deliver / repeat / drop with the degraded pixels), so the live degrade node, the
replay node and offline evaluation share one implementation of frame dropping and repeats. The
`payload` (e.g. the depth image and camera of the frame) travels with the frame, and a repeat
returns the payload of the frame whose content it repeats.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np

from predrel_ros.degradations import DegradedFrame, FrameAction, ScheduledDegrader, degrade_stream, parse_schedule

#: why the seed of a node degrading frames is read-only
SEED_FIXED = ("the degradations draw from it from the first frame on, so that a run is reproducible; another seed is "
              "another run")


@dataclass(frozen=True)
class TwinFrame:
    degraded: DegradedFrame
    payload: Any  # the payload of the frame whose content is published (None when dropped)


class TwinDegrader:
    def __init__(self, schedule: str, seed: int) -> None:
        self.degrader = ScheduledDegrader(parse_schedule(schedule), seed)
        self._incoming: tuple[int, np.ndarray] | None = None
        self._targets: Any = None
        self._payloads: dict[int, Any] = {}
        self._stream: Iterator[DegradedFrame] = degrade_stream(self._feed(), self.degrader, lambda _: self._targets)

    def _feed(self) -> Iterator[tuple[int, np.ndarray]]:
        while True:
            yield self._incoming

    def set_schedule(self, schedule: str, start_frame: int) -> None:
        """Follow `schedule` (text form) from `start_frame` on; sweeps start there at their first step."""
        self.degrader.set_schedule(parse_schedule(schedule, start_frame=start_frame))

    def degrade(self, frame_index: int, image: np.ndarray, targets: Any = None, payload: Any = None) -> TwinFrame:
        """The degraded twin of one frame; frame indices must increase from call to call."""
        self._incoming, self._targets = (frame_index, image), targets
        degraded = next(self._stream)
        if degraded.action == FrameAction.DELIVER:
            self._payloads = {frame_index: payload}  # a repeat shows the last delivered frame
        published = self._payloads.get(degraded.source_index) if degraded.source_index is not None else None
        return TwinFrame(degraded, published)
