"""Visibility estimate: the entity's visible size now relative to its typical size on its track.

A camera cannot see hidden pixels, so visibility is inferred: visible mask area (box area for a
box-only detector) divided by the `quantile` (0.9) of the areas of the same track over its last
`window` observed frames, capped at 1. When the entity's depth is known in this frame and all
remembered ones, areas are scaled by depth squared first, so moving away from the camera does not
read as occlusion. A track's first frame has visibility 1 (nothing to compare with: an object
that enters half hidden is taken as whole). A track not detected in a frame has visibility 0.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class VisibilityConfig:
    window: int = 90
    quantile: float = 0.9

    def __post_init__(self) -> None:
        if self.window < 1:
            raise ValueError(f"visibility.window must be at least 1, got {self.window}")
        if not 0 < self.quantile <= 1:
            raise ValueError(f"visibility.quantile must lie in (0, 1], got {self.quantile}")


class VisibilityEstimator:
    def __init__(self, config: VisibilityConfig | None = None) -> None:
        self.config = config or VisibilityConfig()
        self._areas: dict[int, deque] = {}  # track id -> (area, depth or None)

    def estimate(self, track_id: int, area: float, depth: float | None = None) -> float:
        """Visibility of `track_id` seen with `area` pixels (at `depth` metres if known); remembers it."""
        history = self._areas.setdefault(track_id, deque(maxlen=self.config.window))
        visibility = 1.0
        if history:
            scaled = depth is not None and all(d is not None for _, d in history)
            sizes = [a * d * d if scaled else a for a, d in history]
            typical = float(np.quantile(sizes, self.config.quantile))
            size = area * depth * depth if scaled else area
            visibility = min(1.0, size / typical) if typical > 0 else 1.0
        history.append((float(area), None if depth is None else float(depth)))
        return float(visibility)

    def forget_except(self, track_ids) -> None:
        """Drop the history of tracks no longer alive."""
        alive = set(track_ids)
        for track_id in list(self._areas):
            if track_id not in alive:
                del self._areas[track_id]

    def reset(self) -> None:
        self._areas.clear()
