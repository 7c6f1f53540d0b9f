"""Predicate confidence (paper 3.4): six evidence factors and the combination c = g_k(z).

z = [q_det, q_seg, q_trk, q_vis, q_sp, q_tmp], each in [0, 1]:
  q_det = min(q_i, q_j)                       detection scores of the two entities
  q_seg = min(mask quality)                   a box without a mask counts `box_only_seg_quality`
  q_trk = min(track quality) * continuity     continuity: share of the window's frames in which both
                                              tracks were seen (a dropped frame is missing evidence)
  q_vis = min(visibility)
  q_sp  = min(1, |Delta - theta| / eta)       margin of the measurement from the decision threshold
                                              (`config.Threshold.margin`); a rule with several tests
                                              combines their margins (`rules.decide`)
  q_tmp = (1/|W|) sum_{tau in W} I(y_tau = y_t)   agreement of the stream over its window

Two combinations g_k:
- `GeometricMeanConfidence` (default): weighted geometric mean with per-predicate weights from the
  config, c = exp(sum_f w_f log q_f / sum_f w_f); any factor with positive weight at 0 gives c = 0.
- `CalibratedConfidence`: per predicate a logistic regression of "the estimate agrees with the
  reference" on the six factors, fitted on clean validation data (`fit`), saved as JSON or YAML.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np
from scipy import optimize

from predrel_ros.core.config_io import read_data, write_data
from predrel_ros.predicates import vocabulary
from predrel_ros.predicates.estimate import EVIDENCE_FACTORS, PredicateEstimate


def q_tmp(window_values: Sequence[int], current: int) -> float:
    """Share of the window's values equal to the current one (the current frame included)."""
    if not window_values:
        raise ValueError("q_tmp: the window holds no value (it must include the current frame)")
    return window_values.count(current) / len(window_values)


class GeometricMeanConfidence:
    """Default g_k: weighted geometric mean of the six factors, weights per predicate name."""

    def __init__(self, weights: Mapping[str, Mapping[str, float]]) -> None:
        self.weights = {name: dict(factors) for name, factors in weights.items()}
        #: per predicate, (factor index, normalised weight) of the factors with positive weight
        self._active: dict[str, tuple[tuple[int, float], ...]] = {}
        for name, factors in self.weights.items():
            total = sum(factors[f] for f in EVIDENCE_FACTORS)
            if total <= 0:
                raise ValueError(f"confidence weights of {name!r} must have a positive sum")
            self._active[name] = tuple((index, factors[f] / total) for index, f in enumerate(EVIDENCE_FACTORS)
                                       if factors[f] > 0)
        self._matrix: np.ndarray | None = None      # the normalised weights as a (name x factor) array
        self._index: dict[str, int] = {}

    def __call__(self, name: str, factors: Sequence[float]) -> float:
        try:
            active = self._active[name]
        except KeyError:
            raise ValueError(f"no confidence weights for predicate {name!r}") from None
        log_sum = 0.0
        log = math.log
        for index, weight in active:
            value = factors[index]
            if value <= 0.0:
                return 0.0
            log_sum += weight * log(value)
        confidence = math.exp(log_sum)
        return confidence if confidence < 1.0 else 1.0

    def confidences(self, names: Sequence[str], factors: np.ndarray) -> np.ndarray:
        """c of every row of `factors` (N x 6), row k for predicate names[k]: `__call__`'s arithmetic
        on arrays (the same products, summed in the same factor order)."""
        if self._matrix is None:
            self._index = {name: row for row, name in enumerate(self._active)}
            self._matrix = np.zeros((len(self._active), len(EVIDENCE_FACTORS)))
            for name, active in self._active.items():
                for index, weight in active:
                    self._matrix[self._index[name], index] = weight
        try:
            weights = self._matrix[[self._index[name] for name in names]]
        except KeyError as error:
            raise ValueError(f"no confidence weights for predicate {error.args[0]!r}") from None
        active = weights > 0.0
        usable = ~(factors <= 0.0)
        logs = np.log(np.where(usable, factors, 1.0))
        confidence = np.exp(np.sum(weights * logs, axis=1))
        confidence[(active & ~usable).any(axis=1)] = 0.0
        return np.where(confidence < 1.0, confidence, 1.0)


def confidences(model: Callable[[str, Sequence[float]], float], names: Sequence[str], factors: np.ndarray
                ) -> np.ndarray:
    """c of every row of `factors` (N x 6) under `model`, row k for predicate names[k]: by the model's
    own `confidences` where it has one (the shipped models), else one call per row."""
    batch = getattr(model, "confidences", None)
    if batch is not None:
        return batch(names, factors)
    return np.array([model(name, row) for name, row in zip(names, factors.tolist())], np.float64).reshape(-1)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def fit_logistic(factors: np.ndarray, correct: np.ndarray, l2: float = 1e-2) -> np.ndarray:
    """Logistic regression P(correct | z) = sigmoid(b0 + b . z); returns [b0, b_det, ..., b_tmp].

    Maximum likelihood with an L2 penalty on b (not on b0), by L-BFGS. `factors` is N x 6.
    """
    z = np.asarray(factors, dtype=np.float64)
    y = np.asarray(correct, dtype=np.float64).reshape(-1)
    if z.ndim != 2 or z.shape[1] != len(EVIDENCE_FACTORS) or z.shape[0] != y.size:
        raise ValueError(f"fit_logistic: factors must be N x {len(EVIDENCE_FACTORS)} and correct N, "
                         f"got {z.shape} and {y.shape}")
    if y.size == 0:
        raise ValueError("fit_logistic: no samples")
    design = np.hstack([np.ones((y.size, 1)), z])
    penalty = np.full(design.shape[1], l2)
    penalty[0] = 0.0

    def loss(beta: np.ndarray) -> tuple[float, np.ndarray]:
        logits = design @ beta
        # log(1 + e^x) - y x, computed stably
        value = np.sum(np.logaddexp(0.0, logits) - y * logits) / y.size + 0.5 * np.sum(penalty * beta ** 2)
        gradient = design.T @ (_sigmoid(logits) - y) / y.size + penalty * beta
        return float(value), gradient

    start = np.zeros(design.shape[1])
    rate = float(np.clip(y.mean(), 1e-3, 1 - 1e-3))
    start[0] = math.log(rate / (1 - rate))
    result = optimize.minimize(loss, start, jac=True, method="L-BFGS-B")
    return result.x


class CalibratedConfidence:
    """Calibrated g_k: per predicate, c = sigmoid(b0 + sum_f b_f q_f) fitted on clean validation data.

    coefficients: predicate name -> [b0, b_det, b_seg, b_trk, b_vis, b_sp, b_tmp]. Predicates without
    coefficients fall back to `fallback` (the default geometric mean) when one is given.
    """

    FORMAT = "predrel-calibrated-confidence/1"

    def __init__(self, coefficients: Mapping[str, Sequence[float]],
                 fallback: GeometricMeanConfidence | None = None) -> None:
        self.coefficients: dict[str, np.ndarray] = {}
        for name, values in coefficients.items():
            vocabulary.group_of(name)
            array = np.asarray(values, dtype=np.float64).reshape(-1)
            if array.size != len(EVIDENCE_FACTORS) + 1 or not np.all(np.isfinite(array)):
                raise ValueError(f"calibrated confidence of {name!r}: needs {len(EVIDENCE_FACTORS) + 1} "
                                 f"finite coefficients (intercept first), got {list(values)}")
            self.coefficients[name] = array
        self.fallback = fallback

    def __call__(self, name: str, factors: Sequence[float]) -> float:
        beta = self.coefficients.get(name)
        if beta is None:
            if self.fallback is None:
                raise ValueError(f"calibrated confidence has no coefficients for {name!r}")
            return self.fallback(name, factors)
        logit = beta[0] + sum(b * q for b, q in zip(beta[1:], factors))
        return 0.5 * (1.0 + math.tanh(0.5 * logit))

    def confidences(self, names: Sequence[str], factors: np.ndarray) -> np.ndarray:
        """c of every row of `factors` (N x 6), row k for predicate names[k] (`__call__` on arrays)."""
        out = np.empty(len(names))
        fitted = np.array([name in self.coefficients for name in names], bool)
        if fitted.any():
            betas = np.array([self.coefficients[name] for name, known in zip(names, fitted) if known])
            logits = betas[:, 0] + np.sum(betas[:, 1:] * factors[fitted], axis=1)
            out[fitted] = 0.5 * (1.0 + np.tanh(0.5 * logits))
        if not fitted.all():
            rest = [name for name, known in zip(names, fitted) if not known]
            if self.fallback is None:
                raise ValueError(f"calibrated confidence has no coefficients for {rest[0]!r}")
            out[~fitted] = self.fallback.confidences(rest, factors[~fitted])
        return out

    @classmethod
    def fit(cls, samples: Mapping[str, AgreementSamples], l2: float = 1e-2,
            min_samples: int = 20, fallback: GeometricMeanConfidence | None = None
            ) -> "CalibratedConfidence":
        """Fit from `agreement_samples(...)` of clean validation data; predicates with fewer than
        `min_samples` samples, or whose samples are all correct or all wrong, are left to the fallback."""
        coefficients = {}
        for name, sample in samples.items():
            correct = sample.correct
            if correct.size < min_samples or correct.all() or not correct.any():
                continue
            coefficients[name] = fit_logistic(sample.factors, correct, l2)
        return cls(coefficients, fallback)

    def to_dict(self) -> dict:
        return {"format": self.FORMAT, "factors": list(EVIDENCE_FACTORS),
                "coefficients": {name: [float(v) for v in beta] for name, beta in self.coefficients.items()}}

    @classmethod
    def from_dict(cls, data: Mapping, fallback: GeometricMeanConfidence | None = None) -> "CalibratedConfidence":
        if data.get("format") != cls.FORMAT:
            raise ValueError(f"calibrated confidence: expected format {cls.FORMAT!r}, got {data.get('format')!r}")
        if list(data.get("factors", [])) != list(EVIDENCE_FACTORS):
            raise ValueError(f"calibrated confidence: factor order must be {list(EVIDENCE_FACTORS)}, "
                             f"got {data.get('factors')}")
        return cls(data.get("coefficients", {}), fallback)

    def save(self, path: str | Path) -> Path:
        """Write as YAML (.yaml / .yml) or JSON."""
        return write_data(path, self.to_dict())

    @classmethod
    def load(cls, path: str | Path, fallback: GeometricMeanConfidence | None = None) -> "CalibratedConfidence":
        data = read_data(path)
        if not isinstance(data, Mapping):
            raise ValueError(f"{path}: expected a mapping with format / factors / coefficients")
        return cls.from_dict(data, fallback)


def fit_geometric_weights(factors: np.ndarray, correct: np.ndarray) -> dict[str, float]:
    """Weights of the geometric mean that minimise the Brier score (c - correct)^2 on validation data.

    Weights are kept >= 0 and normalised to sum 1 (only their ratios matter). Used by the weight
    selection of paper 4.8 for predicates that keep the default g_k.
    """
    z = np.clip(np.asarray(factors, dtype=np.float64), 1e-6, 1.0)
    y = np.asarray(correct, dtype=np.float64).reshape(-1)
    if z.ndim != 2 or z.shape != (y.size, len(EVIDENCE_FACTORS)) or y.size == 0:
        raise ValueError(f"fit_geometric_weights: factors must be N x {len(EVIDENCE_FACTORS)} with N > 0 "
                         f"and correct N, got {z.shape} and {y.shape}")
    logs = np.log(z)

    def brier(weights: np.ndarray) -> float:
        total = weights.sum()
        if total <= 0:
            return float(np.mean(y ** 2))
        confidence = np.exp(logs @ (weights / total))
        return float(np.mean((confidence - y) ** 2))

    start = np.full(len(EVIDENCE_FACTORS), 1.0 / len(EVIDENCE_FACTORS))
    result = optimize.minimize(brier, start, method="L-BFGS-B", bounds=[(0.0, 1.0)] * len(start))
    weights = np.asarray(result.x)
    if weights.sum() <= 0:
        weights = start
    weights = weights / weights.sum()
    return {f: float(w) for f, w in zip(EVIDENCE_FACTORS, weights)}


@dataclass
class AgreementSamples:
    """Per-estimate evidence, confidence and agreement with the reference, of one predicate."""

    factors: np.ndarray      # N x 6, in EVIDENCE_FACTORS order
    confidence: np.ndarray   # N
    correct: np.ndarray      # N, bool


def agreement_samples(matched: Iterable[tuple[PredicateEstimate, str]]) -> dict[str, AgreementSamples]:
    """Group (estimate, reference label) pairs (see `estimate.match_references`) by predicate name.

    Pairs whose reference is UNK are skipped (no agreement to learn from); an UNK estimate against a
    known reference is incorrect.
    """
    rows: dict[str, list[list[float]]] = {}
    confidences: dict[str, list[float]] = {}
    labels: dict[str, list[bool]] = {}
    for estimate, reference in matched:
        if reference == vocabulary.UNK_LABEL:
            continue
        rows.setdefault(estimate.name, []).append([estimate.evidence[f] for f in EVIDENCE_FACTORS])
        confidences.setdefault(estimate.name, []).append(estimate.confidence)
        labels.setdefault(estimate.name, []).append(estimate.value == reference)
    return {name: AgreementSamples(np.asarray(rows[name], dtype=np.float64).reshape(-1, len(EVIDENCE_FACTORS)),
                                   np.asarray(confidences[name]), np.asarray(labels[name], dtype=bool))
            for name in rows}
