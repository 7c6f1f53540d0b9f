"""Track quality in [0, 1]: how far a track's identity can be trusted (the paper's trk evidence).

A tracker cannot see its own identity switches, so quality combines four observable symptoms over
the last `window` frames of the track's life (frame indices, so frames dropped upstream count as
unobserved):

  continuity  observed frames / elapsed frames: gaps are where identities get lost or swapped;
  maturity    min(1, observations / mature_after): a track seen once is not an identity yet;
  switches    1 / (1 + suspected switches), a suspected switch being an association whose
              detection was improbable under the track's motion model (squared Mahalanobis
              distance of the innovation above `gate_chi2`, the 99 % chi-square quantile);
  smoothness  1 / (1 + mean jerk / smoothness_scale), the jerk being the second difference of the
              box centre over three consecutive observed frames, in units of the box height: a
              smooth trajectory keeps 1, jitter or jumps lower it.

quality = continuity * maturity * switches * smoothness.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from predrel_ros.perception.kalman import CHI2_4DOF_99


@dataclass(frozen=True)
class TrackQualityConfig:
    window: int = 30
    mature_after: int = 3
    gate_chi2: float = CHI2_4DOF_99
    smoothness_scale: float = 0.1

    def __post_init__(self) -> None:
        for name in ("window", "mature_after"):
            if getattr(self, name) < 1:
                raise ValueError(f"track_quality.{name} must be at least 1, got {getattr(self, name)}")
        for name in ("gate_chi2", "smoothness_scale"):
            if getattr(self, name) <= 0:
                raise ValueError(f"track_quality.{name} must be positive, got {getattr(self, name)}")


@dataclass(frozen=True)
class TrackQuality:
    continuity: float
    maturity: float
    switches: float
    smoothness: float

    @property
    def value(self) -> float:
        return float(self.continuity * self.maturity * self.switches * self.smoothness)

    def as_dict(self) -> dict[str, float]:
        return {"continuity": self.continuity, "maturity": self.maturity, "switches": self.switches,
                "smoothness": self.smoothness, "value": self.value}


class TrackHistory:
    """What one track's quality is computed from: its recent observations."""

    def __init__(self, config: TrackQualityConfig, frame_index: int) -> None:
        self.config = config
        self.first_frame = frame_index
        self.hits = 0
        # (frame_index, centre x, centre y, height, suspected switch) of observed frames
        self._observed: deque = deque()

    def observe(self, frame_index: int, box: np.ndarray, gating_distance: float | None) -> None:
        x1, y1, x2, y2 = box
        suspect = gating_distance is not None and gating_distance > self.config.gate_chi2
        self._observed.append((frame_index, (x1 + x2) / 2, (y1 + y2) / 2, max(y2 - y1, 1e-6), suspect))
        self.hits += 1
        self._forget(frame_index)

    def _forget(self, frame_index: int) -> None:
        oldest = frame_index - self.config.window + 1
        while self._observed and self._observed[0][0] < oldest:
            self._observed.popleft()

    def quality(self, frame_index: int) -> TrackQuality:
        self._forget(frame_index)
        cfg = self.config
        elapsed = min(cfg.window, frame_index - self.first_frame + 1)
        observed = list(self._observed)
        continuity = len(observed) / elapsed if elapsed > 0 else 0.0
        maturity = min(1.0, self.hits / cfg.mature_after)
        switches = 1.0 / (1.0 + sum(1 for row in observed if row[4]))
        jerks = [np.hypot(c[1] - 2 * b[1] + a[1], c[2] - 2 * b[2] + a[2]) / c[3]
                 for a, b, c in zip(observed, observed[1:], observed[2:])
                 if b[0] - a[0] == 1 and c[0] - b[0] == 1]
        smoothness = 1.0 / (1.0 + float(np.mean(jerks)) / cfg.smoothness_scale) if jerks else 1.0
        return TrackQuality(float(min(continuity, 1.0)), float(maturity), float(switches), float(smoothness))
