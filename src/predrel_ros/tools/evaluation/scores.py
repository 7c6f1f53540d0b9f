"""Metric rows of one episode: every predicate (and value-level row) under every condition, computed
with the paper's formulas (`predrel_ros.reliability.metrics`) from the saved sequences.

Which streams and frames count (the definitions the tables rest on):

- A stream counts when its reference is known on at least one frame; its frames with an UNK
  reference are left out of agreement scores (paper 4.5).
- Predicate rows (one per predicate name, e.g. "contact"): PRS pools the known frames of all the
  episode's streams of that predicate: PRS = mean over those (stream, frame) of c * I(y = y_ref).
  `agreement` is the same without confidence (c = 1: the unweighted baseline). TPC, TPC-S and CWS
  are per stream (transitions live in one stream) and averaged over the streams. CWS compares the
  confidence with the clean run's (c^0).
- Value rows (Table 10's "Contact / T", "Above-below / Ab,Be", ...): PRS and agreement over the
  frames whose reference takes one of the row's values, pooled over the predicate's streams. The
  derived rows "Grasp", "Release", "Active hand" take the frames where the reference says T (the
  event or state is there): over all frames they would mostly measure the N majority.

Aggregating over episodes and into groups, degradation kinds and the paper's tables is `tables`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from predrel_ros.predicates import vocabulary
from predrel_ros.reliability import metrics
from predrel_ros.tools.evaluation.sequences import EpisodeSequences

PREDICATE = "predicate"
VALUE = "value"


@dataclass(frozen=True)
class ValueRow:
    """A value-level row: the frames where `predicate`'s reference is one of `values`."""

    label: str
    predicate: str
    values: tuple[str, ...]

    @property
    def codes(self) -> tuple[int, ...]:
        return tuple(vocabulary.encode(self.predicate, value) for value in self.values)


#: Table 10's rows, in the paper's order
VALUE_ROWS = (
    ValueRow("Contact / T", vocabulary.CONTACT, ("T",)),
    ValueRow("Non-contact / N", vocabulary.CONTACT, ("N",)),
    ValueRow("Above-below / Ab,Be", vocabulary.STATIC, ("Ab", "Be")),
    ValueRow("Around / Ar", vocabulary.STATIC, ("Ar",)),
    ValueRow("Inside / In", vocabulary.STATIC, ("In",)),
    ValueRow("Support / Sup", vocabulary.STATIC, ("Sup",)),
    ValueRow("GC / MA", vocabulary.DYNAMIC, ("GC", "MA")),
    ValueRow("MT", vocabulary.DYNAMIC, ("MT",)),
    ValueRow("Grasp", vocabulary.GRASP, ("T",)),
    ValueRow("Release", vocabulary.RELEASE, ("T",)),
    ValueRow("Active hand", vocabulary.ACTIVE_HAND, ("T",)),
)

NAN = float("nan")


def _mean(values: list[float]) -> float:
    finite = [v for v in values if not np.isnan(v)]
    return float(np.mean(finite)) if finite else NAN


def scored_streams(sequences: EpisodeSequences, predicate: str) -> np.ndarray:
    """Rows of the streams of `predicate` whose reference is known on at least one frame."""
    names = np.array([key[0] for key in sequences.keys])
    if not len(names):
        return np.zeros(0, dtype=np.int64)
    known = (sequences.y_ref != vocabulary.UNK).any(axis=1)
    return np.flatnonzero((names == predicate) & known)


def predicate_scores(y: np.ndarray, c: np.ndarray, present: np.ndarray, y_ref: np.ndarray, c_clean: np.ndarray,
                     tol: int) -> dict[str, float]:
    """Scores of one predicate under one condition from its scored streams' (S, T) arrays."""
    if y.shape[0] == 0:
        return {"prs": NAN, "agreement": NAN, "tpc": NAN, "tpc_s": NAN, "cws": NAN, "mean_confidence": NAN,
                "degraded_unk_rate": NAN, "unk_on_known_reference": NAN, "frames": 0, "streams": 0}
    flat_y, flat_ref, flat_c = y.ravel(), y_ref.ravel(), c.ravel()
    known = flat_ref != vocabulary.UNK
    seen = present.ravel() & known
    unk = metrics.unk_summary(flat_y, flat_ref)
    return {
        "prs": metrics.prs(flat_y, flat_ref, flat_c),
        "agreement": metrics.prs(flat_y, flat_ref, np.ones_like(flat_c)),
        "tpc": _mean([metrics.tpc(y[s], y_ref[s], tol) for s in range(y.shape[0])]),
        "tpc_s": _mean([metrics.tpc_s(y[s]) for s in range(y.shape[0])]),
        "cws": _mean([metrics.cws(c[s], c_clean[s]) for s in range(y.shape[0])]),
        "mean_confidence": float(flat_c[seen].mean()) if seen.any() else NAN,
        "degraded_unk_rate": unk["degraded_unk_rate"],
        "unk_on_known_reference": unk["unk_on_known_reference"],
        "frames": int(known.sum()),
        "streams": int(y.shape[0]),
    }


def value_scores(y: np.ndarray, c: np.ndarray, y_ref: np.ndarray, codes: tuple[int, ...]) -> dict[str, float]:
    """PRS and unweighted agreement over the frames whose reference is one of `codes`."""
    selected = np.isin(y_ref.ravel(), codes)
    if not selected.any():
        return {"prs": NAN, "agreement": NAN, "frames": 0}
    flat_y, flat_ref, flat_c = y.ravel()[selected], y_ref.ravel()[selected], c.ravel()[selected]
    return {"prs": metrics.prs(flat_y, flat_ref, flat_c),
            "agreement": metrics.prs(flat_y, flat_ref, np.ones_like(flat_c)), "frames": int(selected.sum())}


def episode_rows(sequences: EpisodeSequences, tol: int) -> list[dict]:
    """One row per (condition, predicate) and per (condition, value row) of the episode."""
    rows = []
    streams = {name: scored_streams(sequences, name) for name in vocabulary.PREDICATES}
    for index, condition in enumerate(sequences.conditions):
        base = {"episode": sequences.episode, "scenario_group": sequences.scenario_group, "kind": condition.kind,
                "severity": condition.severity}
        y, c, present = sequences.y[index], sequences.c[index], sequences.present[index]
        for name, selected in streams.items():
            scores = predicate_scores(y[selected], c[selected], present[selected], sequences.y_ref[selected],
                                      sequences.c_clean[selected], tol)
            rows.append({**base, "level": PREDICATE, "row": name, "predicate": name,
                         "group": vocabulary.group_of(name), **scores})
        for value_row in VALUE_ROWS:
            selected = streams[value_row.predicate]
            scores = value_scores(y[selected], c[selected], sequences.y_ref[selected], value_row.codes)
            rows.append({**base, "level": VALUE, "row": value_row.label, "predicate": value_row.predicate,
                         "group": vocabulary.group_of(value_row.predicate), **scores})
    return rows


def calibration_samples(sequences: EpisodeSequences, condition_indices) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(confidence, correct, group index) of every emitted estimate with a known reference under the
    given conditions (group index into vocabulary.GROUPS)."""
    groups = np.array([vocabulary.GROUPS.index(vocabulary.group_of(key[0])) for key in sequences.keys],
                      dtype=np.int64)
    confidences, correct, group = [], [], []
    known = sequences.y_ref != vocabulary.UNK
    for index in condition_indices:
        mask = sequences.present[index] & known
        confidences.append(sequences.c[index][mask])
        correct.append((sequences.y[index] == sequences.y_ref)[mask])
        group.append(np.broadcast_to(groups[:, None], mask.shape)[mask])
    if not confidences:
        return np.zeros(0), np.zeros(0, bool), np.zeros(0, np.int64)
    return np.concatenate(confidences), np.concatenate(correct), np.concatenate(group)
