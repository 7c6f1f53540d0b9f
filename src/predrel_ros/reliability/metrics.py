"""Predicate reliability metrics of paper 3.5, exactly as defined there, over numpy arrays of frames.

PRS: Predicate Reliability Score (3.5.1); PDS: Predicate Degradation Sensitivity (3.5.2); TPC:
Temporal Predicate Consistency, here reference-aware (transitions matched against the reference's);
TPC-S: its self form, which needs no reference (3.5.3); CWS: Confidence-Weighted predicate
Stability (3.5.4); DIS: Downstream Impact Score (3.5.5); Phi = [PRS, PDS, TPC, CWS, DIS], the
aggregate reliability profile (3.5.6).

Predicate values are small integer codes (`predrel_ros.predicates.vocabulary`), `UNK = -1`.
UNK handling (paper 4.5): frames whose reference is UNK are excluded from the agreement scores
(PRS, TPC's reference transitions); a degraded UNK against a known reference is a disagreement.
Continuous predicate values (the alpha form of PRS) may also mark unknown frames with NaN.
A score over no valid frame is NaN.

  PRS   = (1/|V|) sum_{t in V} c_t I(y_t = y0_t)                  categorical (alpha None)
  PRS   = (1/|V|) sum_{t in V} c_t (1 - |y_t - y0_t| / alpha)_+    continuous
          V: frames whose reference is known
  PDS   = (PRS[s_min] - PRS[s_max]) / (s_max - s_min)              "endpoint"
  PDS   = 1/(|S|-1) sum_r (PRS[s_r] - PRS[s_r+1])                 "mean_step"
  TPC-S = 1 - (1/(T-1)) sum_{t=2..T} I(y_t != y_{t-1})             (1 for T = 1, NaN for T = 0)
  TPC   = clip(1 - (spurious + missed) / (T-1), 0, 1)              reference-aware, see `tpc`
  CWS   = (1/T) sum_t c_t (1 - |c_t - c0_t|)
  DIS   = A0_all - A_without_k                                     `dis_accuracy`
  DIS   = (1/T) sum_t |P(a_t | clean) - P(a_t | degraded without k)|  `dis_prob`
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

import numpy as np

from predrel_ros.predicates.vocabulary import UNK

__all__ = ["UNK", "prs", "prs_terms", "pds", "tpc_s", "tpc", "transitions", "cws", "dis_accuracy", "dis_prob",
           "unk_summary", "ReliabilityProfile", "reliability_profile"]


def _values(y, name: str) -> np.ndarray:
    array = np.asarray(y, dtype=np.float64).reshape(-1) if not isinstance(y, np.ndarray) else y.reshape(-1)
    if array.dtype.kind not in "iufb":
        raise ValueError(f"{name} must hold numbers (predicate codes), got dtype {array.dtype}")
    return array


def _known(y: np.ndarray) -> np.ndarray:
    if y.dtype.kind == "f":
        return (y != UNK) & ~np.isnan(y)
    return y != UNK


def _unit_interval(c, name: str, size: int) -> np.ndarray:
    array = np.asarray(c, dtype=np.float64).reshape(-1)
    if array.size != size:
        raise ValueError(f"{name} has {array.size} frames, expected {size}")
    if array.size and (np.isnan(array).any() or array.min() < 0.0 or array.max() > 1.0):
        raise ValueError(f"{name} must lie in [0, 1]")
    return array


def _same_length(a: np.ndarray, b: np.ndarray, names: str) -> None:
    if a.size != b.size:
        raise ValueError(f"{names} must have the same number of frames, got {a.size} and {b.size}")


def prs(y_deg, y_ref, conf, alpha: float | None = None) -> float:
    """Predicate Reliability Score (paper 3.5.1): confidence-weighted agreement with the reference.

    Categorical when alpha is None; continuous (1 - |y_deg - y_ref| / alpha)_+ otherwise.
    Mean over the frames whose reference is known; NaN when there is none.
    """
    terms, valid = prs_terms(y_deg, y_ref, conf, alpha)
    if not valid.any():
        return float("nan")
    return float(np.mean(terms[valid]))


def prs_terms(y_deg, y_ref, conf, alpha: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per frame, the PRS term c_t * agreement_t and whether the frame counts (reference known):
    PRS of any subset of frames is sum(terms[subset & valid]) / count(subset & valid)."""
    y_deg, y_ref = _values(y_deg, "y_deg"), _values(y_ref, "y_ref")
    _same_length(y_deg, y_ref, "y_deg and y_ref")
    conf = _unit_interval(conf, "conf", y_deg.size)
    valid = _known(y_ref)
    degraded_known = _known(y_deg)
    if alpha is None:
        agreement = (y_deg == y_ref) & degraded_known
    else:
        if not (math.isfinite(alpha) and alpha > 0):
            raise ValueError(f"alpha must be a positive number, got {alpha}")
        difference = np.abs(np.where(degraded_known, y_deg, 0.0) - np.where(valid, y_ref, 0.0))
        agreement = np.where(degraded_known, np.clip(1.0 - difference / alpha, 0.0, None), 0.0)
    return conf * agreement, valid


def pds(prs_by_severity: Mapping[float, float], mode: str = "endpoint") -> float:
    """Predicate Degradation Sensitivity (paper 3.5.2) from {severity: PRS}; higher = more fragile.

    endpoint: (PRS[s_min] - PRS[s_max]) / (s_max - s_min); mean_step: mean of the consecutive drops
    PRS[s_r] - PRS[s_r+1] over the ordered severities.
    """
    if len(prs_by_severity) < 2:
        raise ValueError(f"pds needs PRS at two severities at least, got {dict(prs_by_severity)}")
    severities = sorted(prs_by_severity)
    scores = [float(prs_by_severity[s]) for s in severities]
    if mode == "endpoint":
        return (scores[0] - scores[-1]) / (severities[-1] - severities[0])
    if mode == "mean_step":
        return sum(scores[r] - scores[r + 1] for r in range(len(scores) - 1)) / (len(scores) - 1)
    raise ValueError(f"pds mode must be 'endpoint' or 'mean_step', got {mode!r}")


def tpc_s(y) -> float:
    """Self temporal consistency (paper 3.5.3): 1 - (number of value changes) / (T - 1).

    UNK is a value like any other here (a flip to UNK is a change). 1 for one frame, NaN for none.
    """
    y = _values(y, "y")
    if y.size == 0:
        return float("nan")
    if y.size == 1:
        return 1.0
    return 1.0 - float(np.count_nonzero(y[1:] != y[:-1])) / (y.size - 1)


def transitions(y) -> list[tuple[int, int, int]]:
    """(t, from, to) for every frame t where the value changes."""
    return _transitions(_values(y, "y").tolist())


def _transitions(values: list) -> list[tuple[int, int, int]]:
    """`transitions` of a plain list (rolling windows are short: a Python loop beats numpy's per-call cost)."""
    return [(t, int(values[t - 1]), int(values[t])) for t in range(1, len(values)) if values[t] != values[t - 1]]


def tpc(y_deg, y_ref, tol: int = 2) -> float:
    """Reference-aware temporal predicate consistency: 1 - (spurious + missed) / (T - 1), in [0, 1].

    A degraded transition (t, from, to) matches the earliest unmatched reference transition with the
    same (from, to) within `tol` frames (one-to-one, degraded transitions taken in time order);
    unmatched degraded transitions are spurious, unmatched reference transitions are missed.
    Reference transitions into or out of UNK are ignored: never counted as missed (an ambiguous
    reference proves no change), though a degraded transition with the same (from, to) may still
    match one, so a stream compared with itself scores 1. With a constant reference this equals
    tpc_s(y_deg). 1 for one frame, NaN for none.
    """
    y_deg, y_ref = _values(y_deg, "y_deg"), _values(y_ref, "y_ref")
    _same_length(y_deg, y_ref, "y_deg and y_ref")
    if tol < 0:
        raise ValueError(f"tol must be >= 0 frames, got {tol}")
    if y_deg.size == 0:
        return float("nan")
    if y_deg.size == 1:
        return 1.0
    reference = _transitions(y_ref.tolist())
    matched = [False] * len(reference)
    spurious = 0
    for t, a, b in _transitions(y_deg.tolist()):
        for index, (t_ref, a_ref, b_ref) in enumerate(reference):
            if not matched[index] and a_ref == a and b_ref == b and abs(t_ref - t) <= tol:
                matched[index] = True
                break
        else:
            spurious += 1
    missed = sum(1 for (_, a, b), done in zip(reference, matched) if not done and a != UNK and b != UNK)
    return float(min(1.0, max(0.0, 1.0 - (spurious + missed) / (y_deg.size - 1))))


def cws(c_deg, c_ref) -> float:
    """Confidence-Weighted predicate Stability (paper 3.5.4): mean of c_deg (1 - |c_deg - c_ref|)."""
    c_deg = _unit_interval(c_deg, "c_deg", np.asarray(c_deg).size)
    c_ref = _unit_interval(c_ref, "c_ref", c_deg.size)
    if c_deg.size == 0:
        return float("nan")
    return float(np.mean(c_deg * (1.0 - np.abs(c_deg - c_ref))))


def dis_accuracy(acc_clean_all: float, acc_degraded_without_k: float) -> float:
    """Downstream Impact Score (paper 3.5.5): A0_all - A_without_k (accuracy, macro-F1, ...)."""
    for name, value in (("acc_clean_all", acc_clean_all), ("acc_degraded_without_k", acc_degraded_without_k)):
        if not (isinstance(value, (int, float, np.floating, np.integer)) and math.isfinite(value)):
            raise ValueError(f"{name} must be a finite number, got {value!r}")
    return float(acc_clean_all) - float(acc_degraded_without_k)


def dis_prob(p_clean, p_degraded_without_k) -> float:
    """Probability form of DIS: mean over frames of |P(a_t | clean) - P(a_t | degraded without k)|."""
    p_clean = _unit_interval(p_clean, "p_clean", np.asarray(p_clean).size)
    p_degraded = _unit_interval(p_degraded_without_k, "p_degraded_without_k", p_clean.size)
    if p_clean.size == 0:
        return float("nan")
    return float(np.mean(np.abs(p_clean - p_degraded)))


def unk_summary(y_deg, y_ref) -> dict[str, float]:
    """The UNK cases analysed apart from agreement (paper 4.5).

    reference_unk_rate: share of frames whose reference is UNK (ambiguous, excluded from PRS);
    degraded_unk_rate: share of frames whose degraded value is UNK;
    unk_on_known_reference: share of the known-reference frames where the degraded value is UNK
        (insufficient evidence under degradation; each counts as a disagreement in PRS).
    """
    y_deg, y_ref = _values(y_deg, "y_deg"), _values(y_ref, "y_ref")
    _same_length(y_deg, y_ref, "y_deg and y_ref")
    if y_deg.size == 0:
        nan = float("nan")
        return {"reference_unk_rate": nan, "degraded_unk_rate": nan, "unk_on_known_reference": nan}
    valid = _known(y_ref)
    degraded_unknown = ~_known(y_deg)
    return {"reference_unk_rate": float(np.mean(~valid)),
            "degraded_unk_rate": float(np.mean(degraded_unknown)),
            "unk_on_known_reference": float(np.mean(degraded_unknown[valid])) if valid.any() else float("nan")}


@dataclass(frozen=True)
class ReliabilityProfile:
    """Phi_k^{d,s} = [PRS, PDS, TPC, CWS, DIS] of one predicate under one degradation and severity."""

    prs: float
    pds: float
    tpc: float
    cws: float
    dis: float

    def as_array(self) -> np.ndarray:
        return np.array([self.prs, self.pds, self.tpc, self.cws, self.dis])


def reliability_profile(y_by_severity: Mapping[float, np.ndarray], c_by_severity: Mapping[float, np.ndarray],
                        y_ref, c_ref, dis_by_severity: Mapping[float, float] | None = None,
                        alpha: float | None = None, tol: int = 2, pds_mode: str = "endpoint"
                        ) -> dict[float, ReliabilityProfile]:
    """Phi of one predicate stream for each severity of one degradation (paper 3.5.6).

    y_by_severity / c_by_severity: degraded values and confidences per severity (s >= 1; the clean
    run is the reference y_ref / c_ref). PDS is shared by all severities; DIS is NaN where not given.
    """
    if set(y_by_severity) != set(c_by_severity):
        raise ValueError(f"values and confidences cover different severities: {sorted(y_by_severity)} "
                         f"vs {sorted(c_by_severity)}")
    scores = {s: prs(y_by_severity[s], y_ref, c_by_severity[s], alpha) for s in y_by_severity}
    sensitivity = pds(scores, pds_mode) if len(scores) > 1 else float("nan")
    dis = dis_by_severity or {}
    return {s: ReliabilityProfile(prs=scores[s], pds=sensitivity, tpc=tpc(y_by_severity[s], y_ref, tol),
                                  cws=cws(c_by_severity[s], c_ref), dis=float(dis.get(s, float("nan"))))
            for s in sorted(y_by_severity)}
