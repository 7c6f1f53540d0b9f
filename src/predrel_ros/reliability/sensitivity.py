"""Rolling degradation sensitivity: PDS (paper 3.5.2) over the severities seen in the last frames.

Live, the degradation changes while the stream runs (a replay schedule sweeping occlusion 0..5, or
a degrade node set at runtime), so the last `window` frames may hold several severities of one
kind. `RollingSensitivity` keeps, per frame, its degradation and the PRS terms of every stream
(`metrics.prs_terms` of the `pair_with_references` pairs) and computes on demand, per pool of
streams (one stream, a predicate name, a group):

    PRS[s] = PRS over the pool's frames of severity s in the window
    PDS    = metrics.pds({s: PRS[s]}, mode)         NaN with fewer than two severities

Only frames of the newest frame's degradation kind count, plus clean frames (severity 0, any kind):
mixing kinds in one slope would mean nothing. Severities whose PRS is undefined (no frame with a
known reference) are left out.
"""
from __future__ import annotations

import math
from collections import deque
from typing import Callable, Hashable, Iterable

import numpy as np

from predrel_ros.degradations.table import MAX_SEVERITY
from predrel_ros.predicates import vocabulary
from predrel_ros.reliability import metrics
from predrel_ros.reliability.rolling import Pair

StreamKey = tuple[str, int, int]


def by_stream(key: StreamKey) -> Hashable:
    return key


def by_predicate(key: StreamKey) -> Hashable:
    return key[0]


def by_group(key: StreamKey) -> Hashable:
    return vocabulary.group_of(key[0])


class _Frame:
    __slots__ = ("kind", "severity", "ids", "terms", "valid")

    def __init__(self, kind: str, severity: int, ids: np.ndarray, terms: np.ndarray, valid: np.ndarray) -> None:
        self.kind, self.severity, self.ids, self.terms, self.valid = kind, severity, ids, terms, valid


class RollingSensitivity:
    """PDS per pool of streams over the last `window` frames (see the module docstring)."""

    def __init__(self, window: int, mode: str = "endpoint") -> None:
        if window < 1:
            raise ValueError(f"window must be >= 1 frame, got {window}")
        if mode not in ("endpoint", "mean_step"):
            raise ValueError(f"mode must be 'endpoint' or 'mean_step', got {mode!r}")
        self.window = window
        self.mode = mode
        self.reset()

    def reset(self) -> None:
        self._frames: deque[_Frame] = deque(maxlen=self.window)
        # stream keys as small integers, so pooling maps ids (a few hundred) instead of entries
        self._ids: dict[StreamKey, int] = {}
        self._keys: list[StreamKey] = []

    def __len__(self) -> int:
        return len(self._frames)

    def _id(self, key: StreamKey) -> int:
        index = self._ids.get(key)
        if index is None:
            index = self._ids[key] = len(self._keys)
            self._keys.append(key)
        return index

    def update(self, kind: str, severity: int, pairs: Iterable[Pair]) -> None:
        """Add one frame: its degradation and its (key, y, c, y_ref, c_ref) pairs."""
        if not 0 <= severity <= MAX_SEVERITY:
            raise ValueError(f"severity must lie in 0..{MAX_SEVERITY}, got {severity}")
        pairs = list(pairs)
        ids = np.fromiter((self._id(pair[0]) for pair in pairs), np.int64, len(pairs))
        y = np.fromiter((pair[1] for pair in pairs), np.float64, len(pairs))
        c = np.fromiter((pair[2] for pair in pairs), np.float64, len(pairs))
        y_ref = np.fromiter((pair[3] for pair in pairs), np.float64, len(pairs))
        terms, valid = metrics.prs_terms(y, y_ref, c)
        self._frames.append(_Frame(kind, int(severity), ids, terms, valid))
        if len(self._keys) > 4 * sum(len(frame.ids) for frame in self._frames) + 1024:
            self._renumber()

    def _renumber(self) -> None:
        """Forget the ids of streams no longer in the window (tracks come and go in a long run)."""
        keys, self._ids, self._keys = self._keys, {}, []
        for frame in self._frames:
            frame.ids = np.fromiter((self._id(keys[i]) for i in frame.ids), np.int64, len(frame.ids))

    def prs_by_severity(self, pool_of: Callable[[StreamKey], Hashable] = by_stream
                        ) -> dict[Hashable, dict[int, float]]:
        """pool -> {severity: PRS} over the window's frames of the newest kind (and severity 0)."""
        if not self._frames:
            return {}
        kind = self._frames[-1].kind
        frames = [frame for frame in self._frames if frame.kind == kind or frame.severity == 0]
        pools: dict[Hashable, int] = {}
        pool_of_id = np.fromiter((pools.setdefault(pool_of(key), len(pools)) for key in self._keys), np.int64,
                                 len(self._keys))
        ids = np.concatenate([frame.ids for frame in frames])
        severities = np.concatenate([np.full(len(frame.ids), frame.severity, np.int64) for frame in frames])
        terms = np.concatenate([frame.terms for frame in frames])
        valid = np.concatenate([frame.valid for frame in frames])
        cells = pool_of_id[ids] * (MAX_SEVERITY + 1) + severities
        size = len(pools) * (MAX_SEVERITY + 1)
        sums = np.bincount(cells[valid], weights=terms[valid], minlength=size).reshape(-1, MAX_SEVERITY + 1)
        counts = np.bincount(cells[valid], minlength=size).reshape(-1, MAX_SEVERITY + 1)
        present = np.unique(pool_of_id[ids]) if ids.size else np.zeros(0, np.int64)
        names = {row: pool for pool, row in pools.items()}
        result: dict[Hashable, dict[int, float]] = {}
        for row in present:
            seen = np.flatnonzero(counts[row])
            result[names[int(row)]] = {int(s): float(sums[row, s] / counts[row, s]) for s in seen}
        return result

    def compute(self, pool_of: Callable[[StreamKey], Hashable] = by_stream) -> dict[Hashable, float]:
        """pool -> PDS (NaN when fewer than two severities have a PRS)."""
        return {pool: metrics.pds(scores, self.mode) if len(scores) >= 2 else math.nan
                for pool, scores in self.prs_by_severity(pool_of).items()}
