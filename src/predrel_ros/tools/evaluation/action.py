"""The downstream task inside a sweep: primitive recognition from the predicate state (paper 4.6,
Table 13), the DIS of every predicate (3.5.5) and the recognizer ablations of Table 15.

Models (`ActionModels`):
- `full`: the confidence-weighted recognizer (`predrel_ros.action`). With `fit` it is selected
  and fitted on the clean predicates of the train split (validation split for the choice), produced
  by the very pipeline under evaluation (same front-end, same selected predicate config), so its
  input distribution is the one it is tested on; or a given model file (`committed`: the packaged one).
- `no_confidence`: the same hyperparameters fitted on indicators without confidence (the paper's
  "without confidence weighting" model);
- `frame_level`: the same hidden size and L2 on the current frame only (no temporal context: the
  "frame-level predicate evaluation" baseline of Table 15).

Variants scored per condition: `full`, `no_confidence`, `frame_level` and `mask:<name>` (the full
model with one predicate, or the derived group, treated as unknown). A masked predicate's features
are exactly zero (`downstream.encoding`: unknown encodes as 0, and masking never changes a pair's
kind), so a masked variant is computed by zeroing that predicate's feature columns of the already
encoded frames, instead of encoding again; `tests/evaluation` checks this equals
`downstream.evaluation.predict_stream(..., masked=...)`. Frames are scored like
`predict_stream` does: a frame that was not delivered holds the newest delivered estimate before it.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from predrel_ros.action.encoding import (
    FRAME_SLOTS,
    TemporalSpec,
    TemporalWindow,
    encode_frame,
    expand_masked,
    feature_predicates,
)
from predrel_ros.action.evaluation import held_scores
from predrel_ros.action.model import PrimitiveModel
from predrel_ros.predicates import vocabulary
from predrel_ros.predicates.estimate import PredicateEstimate

FULL = "full"
NO_CONFIDENCE = "no_confidence"
FRAME_LEVEL = "frame_level"
#: masked variants: every predicate, and the derived group (the other groups are one predicate each)
MASKS: dict[str, frozenset[str]] = {**{name: frozenset({name}) for name in vocabulary.PREDICATES},
                                    vocabulary.DERIVED: expand_masked([vocabulary.DERIVED])}
FRAME_LEVEL_TEMPORAL = TemporalSpec(lags=(0,), recent_max=0, max_hold=0)


def mask_variant(name: str) -> str:
    return f"mask:{name}"


@dataclass
class ActionModels:
    full: PrimitiveModel
    no_confidence: PrimitiveModel | None
    frame_level: PrimitiveModel | None
    origin: str

    def models(self) -> dict[str, PrimitiveModel]:
        return {name: model for name, model in ((FULL, self.full), (NO_CONFIDENCE, self.no_confidence),
                                                (FRAME_LEVEL, self.frame_level)) if model is not None}

    def save(self, directory: str | Path) -> dict[str, str]:
        directory = Path(directory)
        return {name: str(model.save(directory / f"{name}.json")) for name, model in self.models().items()}


def fit_models(train, val, class_names: Sequence[str], seed: int = 0, progress: bool = False) -> ActionModels:
    """`full` selected on val among the downstream default grid; the two ablation models with its
    hidden size and L2 (see the module docstring)."""
    from predrel_ros.action import training

    selection = training.select_and_fit(train, val, class_names, None, True, seed, progress)
    best = selection.best.hyperparameters
    record = {"selected": selection.best.to_dict(), "trials": [trial.to_dict() for trial in selection.trials],
              "train_episodes": len(train), "val_episodes": len(val)}
    full = selection.model
    full.training = {**full.training, "evaluation_fit": record}
    no_confidence = training.fit_model(train, best, class_names, confidence_weighted=False, seed=seed,
                                       training={"evaluation_fit": {"hyperparameters": best.to_dict()}})
    frame_best = training.Hyperparameters(FRAME_LEVEL_TEMPORAL, best.hidden, best.l2)
    frame_level = training.fit_model(train, frame_best, class_names, confidence_weighted=True, seed=seed,
                                     training={"evaluation_fit": {"hyperparameters": frame_best.to_dict()}})
    return ActionModels(full, no_confidence, frame_level, "fitted on the clean train split of this evaluation")


def load_models(path: str | Path | None) -> ActionModels:
    """A model file (None: the packaged model, with its no-confidence sibling when installed)."""
    from predrel_ros.action.model import DEFAULT_MODEL

    full_path = Path(path) if path is not None else DEFAULT_MODEL
    full = PrimitiveModel.load(full_path)
    sibling = full_path.with_name(full_path.stem + "-noconf.json")
    no_confidence = PrimitiveModel.load(sibling) if sibling.is_file() else None
    return ActionModels(full, no_confidence, None, f"model file {full_path}")


def _features(vectors: np.ndarray, frame_indices: Sequence[int], temporal: TemporalSpec) -> np.ndarray:
    window = TemporalWindow(temporal)
    rows = [window.push(t, vector) for t, vector in zip(frame_indices, vectors)]
    return np.array(rows) if rows else np.zeros((0, vectors.shape[1] * len(temporal.blocks)))


def predict_condition(models: ActionModels, frames: Sequence[tuple[int, Sequence[PredicateEstimate]]],
                      y_true: np.ndarray, masks: dict[str, frozenset[str]] = MASKS,
                      known_values_confident: bool = False) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """variant -> (y_pred, p_true) over every frame of one condition run of one episode.

    known_values_confident: every estimate that is not UNK has a confidence > 0 (the extractor with a
    confidence floor > 0 guarantees it: weaker estimates become UNK); then the indicator encoding is
    exactly (weighted encoding > 0) and the frames are encoded once instead of twice."""
    frame_indices = np.array([t for t, _ in frames], dtype=np.int64)
    vectors: dict[bool, np.ndarray] = {}

    def frame_vectors(weighted: bool) -> np.ndarray:
        if weighted not in vectors:
            if not weighted and known_values_confident:
                vectors[False] = (frame_vectors(True) > 0).astype(np.float64)
            else:
                rows = [encode_frame(estimates, weighted) for _, estimates in frames]
                vectors[weighted] = np.array(rows) if rows else np.zeros((0, len(FRAME_SLOTS)))
        return vectors[weighted]

    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for variant, model in models.models().items():
        features = _features(frame_vectors(model.confidence_weighted), frame_indices, model.temporal)
        if variant == FULL:
            columns = np.array(feature_predicates(model.temporal))
            for mask_name, names in masks.items():
                masked = features.copy()
                masked[:, np.isin(columns, list(names))] = 0.0
                out[mask_variant(mask_name)] = held_scores(_probabilities(model, masked), frame_indices, y_true)
        out[variant] = held_scores(_probabilities(model, features), frame_indices, y_true)
    return out


def _probabilities(model: PrimitiveModel, features: np.ndarray) -> np.ndarray:
    if not len(features):
        return np.zeros((0, len(model.class_names)))
    return model.probabilities(features)


def class_indices(labels: Sequence[str | None], class_names: Sequence[str]) -> np.ndarray:
    """Class index of every frame's primitive (-1 where there is none, or not one of the classes)."""
    index = {name: i for i, name in enumerate(class_names)}
    return np.array([index.get(label, -1) if label is not None else -1 for label in labels], dtype=np.int64)
