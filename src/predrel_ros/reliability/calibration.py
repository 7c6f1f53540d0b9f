"""Does a confidence of 0.8 mean 80 % agreement? Reliability diagrams and expected calibration error.

`calibration_summary(confidence, correct)` bins the confidences into equal-width bins on [0, 1]
(the last bin closed) and reports per bin the count, the mean confidence and the observed agreement
with the reference, plus ECE = sum_b (n_b / N) |agreement_b - confidence_b|.

Measured on clean data (the controlled set), the same summary maps a live confidence to the
agreement expected at that confidence (`expected_agreement`), which the reference-free trust
assessment uses.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np


@dataclass(frozen=True)
class CalibrationSummary:
    edges: tuple[float, ...]              # n_bins + 1 bin edges on [0, 1]
    counts: tuple[int, ...]
    mean_confidence: tuple[float, ...]    # NaN for an empty bin
    agreement: tuple[float, ...]          # observed share of correct estimates; NaN for an empty bin
    ece: float
    samples: int

    def expected_agreement(self, confidence: float) -> float:
        """Observed agreement of the bin that holds `confidence`; an empty bin gives the agreement of
        the nearest non-empty bin, and no data at all gives the confidence itself."""
        if not 0.0 <= confidence <= 1.0:
            raise ValueError(f"confidence must lie in [0, 1], got {confidence}")
        filled = [index for index, count in enumerate(self.counts) if count > 0]
        if not filled:
            return float(confidence)
        n_bins = len(self.counts)
        index = min(int(confidence * n_bins), n_bins - 1)
        nearest = min(filled, key=lambda b: (abs(b - index), b))
        return self.agreement[nearest]

    @property
    def agreement_rate(self) -> float:
        """Share of all samples that agreed with the reference: the mean expected agreement over
        the data the summary was measured on (NaN without samples)."""
        total = sum(self.counts)
        if not total:
            return float("nan")
        return sum(n * a for n, a in zip(self.counts, self.agreement) if n) / total

    def to_dict(self) -> dict:
        return {"edges": list(self.edges), "counts": list(self.counts),
                "mean_confidence": [_plain(v) for v in self.mean_confidence],
                "agreement": [_plain(v) for v in self.agreement], "ece": _plain(self.ece),
                "samples": self.samples}

    @classmethod
    def from_dict(cls, data: Mapping) -> "CalibrationSummary":
        try:
            summary = cls(tuple(float(v) for v in data["edges"]), tuple(int(v) for v in data["counts"]),
                          tuple(_number(v) for v in data["mean_confidence"]),
                          tuple(_number(v) for v in data["agreement"]), _number(data["ece"]),
                          int(data["samples"]))
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"calibration summary: malformed ({error})") from None
        n_bins = len(summary.counts)
        if len(summary.edges) != n_bins + 1 or len(summary.agreement) != n_bins \
                or len(summary.mean_confidence) != n_bins:
            raise ValueError("calibration summary: edges must have one entry more than counts, "
                             "mean_confidence and agreement")
        return summary


def _plain(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def _number(value) -> float:
    return float("nan") if value is None else float(value)


def calibration_summary(confidence, correct, n_bins: int = 10) -> CalibrationSummary:
    """Reliability-diagram bins and ECE of confidences against agreement with the reference."""
    if n_bins < 1:
        raise ValueError(f"n_bins must be >= 1, got {n_bins}")
    confidence = np.asarray(confidence, dtype=np.float64).reshape(-1)
    correct = np.asarray(correct, dtype=bool).reshape(-1)
    if confidence.size != correct.size:
        raise ValueError(f"confidence and correct must have the same length, got {confidence.size} and "
                         f"{correct.size}")
    if confidence.size and (np.isnan(confidence).any() or confidence.min() < 0 or confidence.max() > 1):
        raise ValueError("confidence must lie in [0, 1]")
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    bins = np.minimum((confidence * n_bins).astype(np.int64), n_bins - 1)
    counts = np.bincount(bins, minlength=n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_confidence = np.bincount(bins, weights=confidence, minlength=n_bins) / counts
        agreement = np.bincount(bins, weights=correct.astype(np.float64), minlength=n_bins) / counts
    filled = counts > 0
    ece = float(np.sum(counts[filled] / confidence.size * np.abs(agreement[filled] - mean_confidence[filled]))) \
        if confidence.size else float("nan")
    return CalibrationSummary(tuple(float(e) for e in edges), tuple(int(c) for c in counts),
                              tuple(float(v) for v in mean_confidence), tuple(float(v) for v in agreement),
                              ece, int(confidence.size))


def expected_calibration_error(confidence, correct, n_bins: int = 10) -> float:
    """ECE = sum_b (n_b / N) |agreement_b - mean confidence_b| over equal-width bins."""
    return calibration_summary(confidence, correct, n_bins).ece
