"""Frame dropping: per-frame decision to deliver, drop or repeat, with frame indices preserved.

Each frame index gets two draws from (seed, frame_index): it is affected when its first draw is below
`affected_rate`, and an affected frame repeats the last delivered frame when its second draw is below
`repeat_share`, else it is dropped (nothing is published under that index). Losses are independent
per frame (packet loss; runs of consecutive losses appear at the rate they would by chance), the
expected share of affected frames is `affected_rate`, and since the draws do not depend on severity,
the frames affected at severity s are also affected at every higher severity.

Indices are preserved (paper 4.3): a repeated frame is published under its own index with the content
of the last delivered frame, so the degraded sequence stays aligned with the clean reference. A
repeat with no delivered frame before it since `stream_start` becomes a drop.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

from predrel_ros.degradations import draws

#: frames examined per step when looking back for the last delivered frame
_LOOKBACK_CHUNK = 64


class FrameAction(str, enum.Enum):
    DELIVER = "deliver"
    DROP = "drop"
    REPEAT = "repeat"


@dataclass(frozen=True)
class FrameDecision:
    """What to publish under `frame_index`: the content of frame `source_index`, or nothing (drop)."""

    frame_index: int
    action: FrameAction
    source_index: int | None


def affected(seed: int, frame_indices, affected_rate: float) -> np.ndarray:
    """Whether each frame index is affected (dropped or repeated) at this rate."""
    return draws.uniform(seed, "frame_drop.affected", frame_indices) < affected_rate


def decide(seed: int, frame_index: int, affected_rate: float, repeat_share: float,
           stream_start: int = 0) -> FrameDecision:
    """The decision for one frame; stateless, so any frame can be decided in any order."""
    if frame_index < stream_start:
        raise ValueError(f"frame_index {frame_index} lies before stream_start {stream_start}")
    if not affected(seed, frame_index, affected_rate)[0]:
        return FrameDecision(frame_index, FrameAction.DELIVER, frame_index)
    if draws.uniform(seed, "frame_drop.repeat", frame_index)[0] >= repeat_share:
        return FrameDecision(frame_index, FrameAction.DROP, None)
    end = frame_index  # look back over [start, end) in chunks, newest first
    while end > stream_start:
        start = max(stream_start, end - _LOOKBACK_CHUNK)
        candidates = np.arange(end - 1, start - 1, -1)
        delivered = ~affected(seed, candidates, affected_rate)
        if delivered.any():
            return FrameDecision(frame_index, FrameAction.REPEAT, int(candidates[np.argmax(delivered)]))
        end = start
    return FrameDecision(frame_index, FrameAction.DROP, None)
