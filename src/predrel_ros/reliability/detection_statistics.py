"""Detection statistics as trust evidence: what the detector's output looks like, frame by frame.

A detector on a scene unlike the one it was trained on finds fewer objects, with scores pulled
towards its threshold, and its masks breathe from frame to frame; one that sees confident objects
in an occluder patch finds more. Per frame (`DetectionStatistics.update`), over the observed
entities (visibility >= `min_visibility`):

- `count`: entities observed; `hands`: of them hands;
- `score_mean`, `score_min` (NaN without an entity) and `low_score_share`: the share with a score
  below `low_score`;
- `score_histogram`: counts over `SCORE_BINS` equal bins of [0, 1], which the clean profile
  compares with the clean histogram (`evidence_profile`: the model's out-of-domain signal);
- `mask_change`: per track observed at the previous update too, |area now - area then| / the
  larger area, averaged (NaN without such a track; boxes where there is no mask);
- `mask_fill`: per object (not a hand) with a mask, its pixels / its box's area, averaged (NaN
  without one): an object partly hidden by something in front of it keeps its box (the tracker's,
  or the visible extremes) while its mask loses the hidden part, so the masks fill less of their
  boxes; blur, noise or a low resolution leave the fill as it was. Hands are left out: how much of
  its box an open or closed hand fills changes with its pose.
"""
from __future__ import annotations

import math
from typing import Iterable

import numpy as np

from predrel_ros.core.entities import Entity

SCORE_BINS = 5


class DetectionStatistics:
    def __init__(self, low_score: float = 0.5, min_visibility: float = 0.05) -> None:
        for name, value in (("low_score", low_score), ("min_visibility", min_visibility)):
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must lie in [0, 1], got {value}")
        self.low_score = low_score
        self.min_visibility = min_visibility
        self.reset()

    def reset(self) -> None:
        self._areas: dict[int, float] = {}

    def update(self, entities: Iterable[Entity]) -> dict:
        """The statistics of one frame (see the module docstring). Plain Python arithmetic over the
        few entities of a frame: numpy's per-call cost is larger than the sums here."""
        observed = [e for e in entities if e.visibility >= self.min_visibility]
        scores = [float(e.score) for e in observed]
        areas = {e.id: _area(e) for e in observed}
        fills = [areas[e.id] / box_area for e in observed
                 if not e.is_hand and e.mask is not None and (box_area := _box_area(e)) > 0]
        changes = [abs(area - self._areas[track]) / max(area, self._areas[track])
                   for track, area in areas.items() if track in self._areas and max(area, self._areas[track]) > 0]
        self._areas = areas
        histogram = np.zeros(SCORE_BINS, dtype=np.intp)
        for score in scores:
            histogram[min(int(score * SCORE_BINS), SCORE_BINS - 1)] += 1
        return {"count": len(observed), "hands": sum(1 for e in observed if e.is_hand),
                "score_mean": _mean(scores), "score_min": min(scores) if scores else math.nan,
                "low_score_share": sum(1 for score in scores if score < self.low_score) / len(scores) if scores
                else math.nan, "score_histogram": histogram, "mask_change": _mean(changes), "mask_fill": _mean(fills)}


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else math.nan


def _area(entity: Entity) -> float:
    if entity.mask is not None:
        return float(np.count_nonzero(entity.mask))
    return _box_area(entity)


def _box_area(entity: Entity) -> float:
    x1, y1, x2, y2 = entity.box
    return float((x2 - x1) * (y2 - y1))
