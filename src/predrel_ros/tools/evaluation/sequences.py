"""The per-frame predicate sequences of one episode under every condition, aligned with the reference.

Streams are keyed (name, subject, object) in the reference's entity ids (canonical order for the
unordered predicates). Every condition gets, per stream and per frame index 0..T-1:

- `y`: the pipeline's value code, UNK (-1) where it said nothing about that stream at that frame:
  a dropped frame (no output is published for it; the index is kept for comparison, paper 4.8), an
  entity it did not detect, or a pair it did not evaluate;
- `c`: its confidence, 0 where it said nothing;
- `present`: whether it emitted an estimate (an UNK estimate included).

The reference (`y_ref`, `c_ref`) is the ground truth (confidence 1) or the clean run's own values,
and `c_clean` the clean run's confidences (the c^0 of CWS). These arrays are what every metric of
the sweep is computed from, and they are saved per episode (`save` / `load`), so anyone can
recompute any number of the report with `predrel_ros.reliability.metrics` directly.
"""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from predrel_ros.degradations import Condition
from predrel_ros.predicates import vocabulary
from predrel_ros.predicates.estimate import NO_OBJECT, PredicateEstimate, stream_key


def save_atomically(path: str | Path, arrays: dict[str, np.ndarray], compressed: bool = True) -> Path:
    """np.savez(_compressed) to a temporary name beside `path`, then renamed: a reader (or a unit run
    again after its worker died, `evaluation.fleet`) never sees a partial file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.stem}.{os.getpid()}.{threading.get_ident()}.tmp.npz")
    (np.savez_compressed if compressed else np.savez)(temporary, **arrays)
    os.replace(temporary, path)
    return path


StreamKey = tuple[str, int, int]
_NAMES = tuple(vocabulary.PREDICATES)


@dataclass
class EpisodeSequences:
    """Aligned sequences of one episode (see the module docstring); condition axis first."""

    episode: str
    scenario_group: str
    keys: list[StreamKey]
    conditions: list[Condition]
    y: np.ndarray          # (C, K, T) int8
    c: np.ndarray          # (C, K, T) float32
    present: np.ndarray    # (C, K, T) bool
    delivered: np.ndarray  # (C, T) bool: a frame was published under this index
    y_ref: np.ndarray      # (K, T) int8
    c_ref: np.ndarray      # (K, T) float32
    c_clean: np.ndarray    # (K, T) float32
    reference: str

    def condition_index(self, condition: Condition) -> int:
        return self.conditions.index(condition)

    def save(self, path: str | Path) -> Path:
        return save_atomically(path, dict(
            episode=np.array(self.episode), scenario_group=np.array(self.scenario_group),
            key_name=np.array([_NAMES.index(k[0]) for k in self.keys], dtype=np.int8).reshape(-1),
            key_subject=np.array([k[1] for k in self.keys], dtype=np.int64).reshape(-1),
            key_object=np.array([k[2] for k in self.keys], dtype=np.int64).reshape(-1),
            condition_kind=np.array([c.kind for c in self.conditions]),
            condition_severity=np.array([c.severity for c in self.conditions], dtype=np.int64),
            y=self.y, c=self.c, present=self.present, delivered=self.delivered, y_ref=self.y_ref,
            c_ref=self.c_ref, c_clean=self.c_clean, reference=np.array(self.reference)))

    @classmethod
    def load(cls, path: str | Path) -> "EpisodeSequences":
        with np.load(path) as data:
            keys = [(_NAMES[int(n)], int(s), int(o))
                    for n, s, o in zip(data["key_name"], data["key_subject"], data["key_object"])]
            conditions = [Condition(str(k), int(s)) for k, s in zip(data["condition_kind"], data["condition_severity"])]
            return cls(str(data["episode"]), str(data["scenario_group"]), keys, conditions, data["y"], data["c"],
                       data["present"], data["delivered"], data["y_ref"], data["c_ref"], data["c_clean"],
                       str(data["reference"]))


class StreamIndex:
    """Row of each stream key, and the conversion of a frame's estimates into those rows."""

    def __init__(self, keys: Sequence[StreamKey]) -> None:
        self.keys = list(keys)
        self.rows = {key: row for row, key in enumerate(self.keys)}

    def __len__(self) -> int:
        return len(self.keys)

    def fill(self, delivered: Sequence[tuple[int, int]], estimates: Sequence[Sequence[PredicateEstimate]],
             mappings: Sequence[dict[int, int] | None], count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(y, c, present) arrays (K, T) of one condition. mappings[i] translates the ids of delivered
        frame i to reference ids (None: the ids are the reference's); estimates about an entity
        without a reference partner, or of a stream outside the index, are left out."""
        size = len(self.keys)
        y = np.full((size, count), vocabulary.UNK, dtype=np.int8)
        c = np.zeros((size, count), dtype=np.float32)
        present = np.zeros((size, count), dtype=bool)
        rows = self.rows
        for (t, _), frame_estimates, mapping in zip(delivered, estimates, mappings):
            for estimate in frame_estimates:
                subject, obj = estimate.subject, estimate.object
                if mapping is not None:
                    subject = mapping.get(subject)
                    obj = NO_OBJECT if obj == NO_OBJECT else mapping.get(obj)
                    if subject is None or obj is None:
                        continue
                row = rows.get(stream_key(estimate.name, subject, obj))
                if row is None:
                    continue
                y[row, t] = estimate.code
                c[row, t] = estimate.confidence
                present[row, t] = True
        return y, c, present


def scope_keys(estimates: Sequence[Sequence[PredicateEstimate]]) -> list[StreamKey]:
    """Canonical keys of every stream in a run, sorted (the streams a sweep evaluates)."""
    keys = {estimate.canonical_key for frame in estimates for estimate in frame}
    return sorted(keys, key=lambda k: (_NAMES.index(k[0]), k[1], k[2]))
