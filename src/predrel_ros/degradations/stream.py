"""Degrade a whole stream of frames: frame decisions plus pixel degradations, indices preserved."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

import numpy as np

from predrel_ros.degradations.degrader import Degrader
from predrel_ros.degradations.frame_drop import FrameAction
from predrel_ros.degradations.schedule import Condition, ConstantSchedule, ScheduledDegrader


@dataclass(frozen=True)
class DegradedFrame:
    """What is published under `frame_index`: `image` (None when dropped), taken from `source_index`."""

    frame_index: int
    action: FrameAction
    source_index: int | None
    image: np.ndarray | None
    degrader: Degrader


def degrade_stream(frames: Iterable[tuple[int, np.ndarray]], degrader: Degrader | ScheduledDegrader,
                   targets: Callable[[int], object] | None = None) -> Iterator[DegradedFrame]:
    """Yield one `DegradedFrame` per input (frame_index, image), in order.

    A repeated frame carries the last image this stream delivered (for a constant condition that is
    exactly the decision's source_index); a repeat before any delivery becomes a drop.
    targets: optional frame_index -> occlusion targets (Entities or boxes) for that frame.
    """
    if isinstance(degrader, Degrader):
        degrader = ScheduledDegrader(ConstantSchedule(Condition(degrader.kind, degrader.severity)),
                                     degrader.seed, degrader.table, degrader.options)
    last: tuple[int, np.ndarray] | None = None
    stream_start: int | None = None
    for frame_index, image in frames:
        stream_start = frame_index if stream_start is None else stream_start
        current = degrader.degrader_at(frame_index)
        decision = current.decide_frame(frame_index, stream_start)
        if decision.action == FrameAction.DELIVER:
            out = current.apply_image(image, frame_index, None if targets is None else targets(frame_index))
            last = (frame_index, out)
            yield DegradedFrame(frame_index, FrameAction.DELIVER, frame_index, out, current)
        elif decision.action == FrameAction.REPEAT and last is not None:
            yield DegradedFrame(frame_index, FrameAction.REPEAT, last[0], last[1], current)
        else:
            yield DegradedFrame(frame_index, FrameAction.DROP, None, None, current)
