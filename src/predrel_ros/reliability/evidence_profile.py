"""How the evidence looks on clean data, and how far a window's evidence is from it.

`EvidenceProfile.fit(windows)` takes the evidence of clean windows (`TrustEvidence.features()`,
one per frame, of the setup the robot works in: camera, model, scenes) and keeps, per feature, its
`low` and `high` percentiles (5 and 95 by default: a range clean data stays in, not its worst
window) and its median. `deviations(features)` says per feature how far outside that range a
window is, in units of the clean range's width (0 inside it; negative below, positive above; NaN
where the window or the profile has no value), plus `score_shift`: the total-variation distance
between the window's score histogram and the clean one, the model's own out-of-domain signal (a
foreign scene moves the scores the detector gives).

A feature whose clean range is narrower than `min_spread` (e.g. a birth rate that clean data keeps
at 0), or than `relative_spread` times its clean median (a few clean scenes leave a range narrower
than the next scene's differs), is measured in units of that width instead, so one event or one
new scene is not an infinite deviation.
"""
from __future__ import annotations

import math
from typing import Iterable, Mapping

import numpy as np

from predrel_ros.reliability.trust_evidence import FEATURES, SCORE_SHARES

SCORE_SHIFT = "score_shift"
#: what `deviations` returns, in order
DEVIATIONS = FEATURES + (SCORE_SHIFT,)
_SCORE_SHARES = [FEATURES.index(name) for name in SCORE_SHARES]


class EvidenceProfile:
    FORMAT = "predrel-evidence-profile/1"

    def __init__(self, low: Mapping[str, float], median: Mapping[str, float], high: Mapping[str, float],
                 percentiles: tuple[float, float] = (5.0, 95.0), min_spread: float = 0.02, windows: int = 0,
                 relative_spread: float = 0.1) -> None:
        if not 0.0 <= percentiles[0] < percentiles[1] <= 100.0:
            raise ValueError(f"percentiles must be 0 <= low < high <= 100, got {percentiles}")
        if not (math.isfinite(min_spread) and min_spread > 0.0):
            raise ValueError(f"min_spread must be a positive number, got {min_spread}")
        if not (math.isfinite(relative_spread) and relative_spread >= 0.0):
            raise ValueError(f"relative_spread must be a number >= 0, got {relative_spread}")
        self.relative_spread = float(relative_spread)
        self.low = {name: float(low.get(name, math.nan)) for name in FEATURES}
        self.median = {name: float(median.get(name, math.nan)) for name in FEATURES}
        self.high = {name: float(high.get(name, math.nan)) for name in FEATURES}
        self.percentiles = (float(percentiles[0]), float(percentiles[1]))
        self.min_spread = float(min_spread)
        self.windows = int(windows)
        #: the same as arrays over FEATURES, for `deviation_array` (a range's unit once, not per window)
        self._low = np.array([self.low[name] for name in FEATURES])
        self._high = np.array([self.high[name] for name in FEATURES])
        self._spread = np.array([max(self.high[name] - self.low[name], self.min_spread,
                                     self.relative_spread * abs(self.median[name])) for name in FEATURES])
        clean = np.array([self.median[name] for name in SCORE_SHARES])
        clean_total = clean.sum()
        self._clean_shares = None if np.isnan(clean).any() or clean_total <= 0 else clean / clean_total

    @classmethod
    def fit(cls, windows: Iterable[Mapping[str, float]], percentiles: tuple[float, float] = (5.0, 95.0),
            min_spread: float = 0.02, relative_spread: float = 0.1) -> "EvidenceProfile":
        rows = np.array([[window.get(name, math.nan) for name in FEATURES] for window in windows], dtype=np.float64)
        if rows.size == 0:
            raise ValueError("an evidence profile needs at least one clean window")
        quantiles = {}
        for column, name in enumerate(FEATURES):
            values = rows[:, column][~np.isnan(rows[:, column])]
            quantiles[name] = np.percentile(values, [percentiles[0], 50.0, percentiles[1]]) if values.size \
                else (math.nan, math.nan, math.nan)
        return cls({n: q[0] for n, q in quantiles.items()}, {n: q[1] for n, q in quantiles.items()},
                   {n: q[2] for n, q in quantiles.items()}, percentiles, min_spread, len(rows), relative_spread)

    def deviations(self, features: Mapping[str, float]) -> dict[str, float]:
        """Per feature its deviation from the clean range, and `score_shift` (see the module docstring)."""
        values = np.array([features.get(name, math.nan) for name in FEATURES], dtype=np.float64)
        return dict(zip(DEVIATIONS, self.deviation_array(values).tolist()))

    def deviation_array(self, values: np.ndarray) -> np.ndarray:
        """`deviations` of a window's features as an array over FEATURES, in the order of DEVIATIONS."""
        result = np.empty(len(DEVIATIONS))
        result[:-1] = np.where(values > self._high, (values - self._high) / self._spread,
                               np.where(values < self._low, (values - self._low) / self._spread, 0.0))
        result[:-1][np.isnan(values) | np.isnan(self._low)] = math.nan
        window = values[_SCORE_SHARES]
        result[-1] = math.nan if self._clean_shares is None or np.isnan(window).any() \
            else 0.5 * np.abs(window - self._clean_shares).sum()
        return result

    def to_dict(self) -> dict:
        def plain(values: Mapping[str, float]) -> dict:
            return {name: None if math.isnan(value) else value for name, value in values.items()}
        return {"format": self.FORMAT, "percentiles": list(self.percentiles), "min_spread": self.min_spread,
                "relative_spread": self.relative_spread,
                "windows": self.windows, "low": plain(self.low), "median": plain(self.median),
                "high": plain(self.high)}

    @classmethod
    def from_dict(cls, data: Mapping) -> "EvidenceProfile":
        if data.get("format") != cls.FORMAT:
            raise ValueError(f"evidence profile: expected format {cls.FORMAT!r}, got {data.get('format')!r}")

        def numbers(key: str) -> dict[str, float]:
            return {name: math.nan if value is None else float(value) for name, value in (data.get(key) or {}).items()}
        low, high = data.get("percentiles", (5.0, 95.0))
        return cls(numbers("low"), numbers("median"), numbers("high"), (float(low), float(high)),
                   float(data.get("min_spread", 0.02)), int(data.get("windows", 0)),
                   float(data.get("relative_spread", 0.1)))
