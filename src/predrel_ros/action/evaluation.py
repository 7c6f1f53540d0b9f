"""Offline recognition over whole episodes: the clean / degraded / masked conditions of Table 13
and the per-frame probabilities DIS needs (paper 3.5.5, 4.6).

    from predrel_ros.action import PrimitiveModel, evaluate_streams
    clean = evaluate_streams(model, clean_streams)
    without_contact = evaluate_streams(model, degraded_streams, masked={"contact"})
    metrics.dis_accuracy(clean.accuracy, without_contact.accuracy)
    metrics.dis_prob(clean.p_true, without_contact.p_true)    # same episodes, same frame order

Every frame of an episode is scored against its ground-truth primitive, dropped frames included: a
frame that was not delivered is scored with the estimate of the newest delivered frame before it
(what a consumer of the action topic holds at that time), and frames before the first delivered
one have no prediction (wrong, and probability 0 for the true class). Frames without ground truth
are left out.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from predrel_ros.action import metrics
from predrel_ros.action.encoding import encode_sequence, expand_masked
from predrel_ros.action.model import PrimitiveModel
from predrel_ros.action.streams import EpisodeStream
from predrel_ros.core.errors import UserError


@dataclass
class StreamPrediction:
    """Per-frame outcome of one episode (arrays over all its frames)."""

    name: str
    y_true: np.ndarray         # class index, -1 where there is no ground truth
    y_pred: np.ndarray         # class index, -1 where there is no prediction
    p_true: np.ndarray         # probability of the true class (0 without prediction, NaN without truth)
    probabilities: np.ndarray  # (delivered frames, classes)
    frames: np.ndarray         # delivered frame indices


def predict_stream(model: PrimitiveModel, stream: EpisodeStream, masked: Iterable[str] = (),
                   confidence_weighted: bool | None = None) -> StreamPrediction:
    """Predictions for every frame of `stream`.

    masked: predicate or group names treated as unknown (Table 13's masking rows, DIS_k).
    confidence_weighted: override the model's encoding (None: as trained); False on a model trained
        with confidence drops the confidences at inference only. For the paper's "without confidence
        weighting" row use a model trained without them (`predrel action fit --no-confidence`)."""
    weighted = model.confidence_weighted if confidence_weighted is None else confidence_weighted
    class_index = {name: i for i, name in enumerate(model.class_names)}
    unknown = {label for label in stream.labels if label is not None and label not in class_index}
    if unknown:
        raise UserError(f"episode {stream.name}: primitives {sorted(unknown)} are not among the model's classes "
                        f"{list(model.class_names)}")
    features = encode_sequence(stream.frames, model.temporal, weighted, expand_masked(masked))
    frames = np.array([frame_index for frame_index, _ in stream.frames], dtype=np.int64)
    probabilities = model.probabilities(features) if len(frames) else np.zeros((0, len(model.class_names)))
    y_true = np.array([-1 if label is None else class_index[label] for label in stream.labels], dtype=np.int64)
    y_pred, p_true = held_scores(probabilities, frames, y_true)
    return StreamPrediction(stream.name, y_true, y_pred, p_true, probabilities, frames)


def held_scores(probabilities: np.ndarray, frames: np.ndarray, y_true: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(y_pred, p_true) over all frames 0..len(y_true)-1 from the probabilities of the delivered
    `frames` (increasing): each frame holds the newest delivered estimate at or before it."""
    count = y_true.size
    held = np.searchsorted(frames, np.arange(count), side="right") - 1
    has = held >= 0
    y_pred = np.full(count, metrics.NO_PREDICTION, dtype=np.int64)
    y_pred[has] = probabilities[held[has]].argmax(axis=1)
    p_true = np.full(count, np.nan)
    known = y_true >= 0
    p_true[known] = 0.0
    both = known & has
    p_true[both] = probabilities[held[both], y_true[both]]
    return y_pred, p_true


@dataclass
class Evaluation:
    class_names: tuple[str, ...]
    accuracy: float
    macro_f1: float
    per_class_f1: np.ndarray
    confusion: np.ndarray          # (classes, classes + 1): rows true, columns predicted, last = none
    p_true: np.ndarray             # probability of the true class, scored frames of all episodes in order
    frames: int
    episodes: int

    def to_dict(self) -> dict:
        return {"accuracy": self.accuracy, "macro_f1": self.macro_f1, "frames": self.frames,
                "episodes": self.episodes, "class_names": list(self.class_names),
                "per_class_f1": {name: (None if np.isnan(f1) else float(f1))
                                 for name, f1 in zip(self.class_names, self.per_class_f1)},
                "confusion": self.confusion.tolist(), "mean_p_true": float(np.mean(self.p_true))
                if self.p_true.size else None}


def evaluate_streams(model: PrimitiveModel, streams: Sequence[EpisodeStream], masked: Iterable[str] = (),
                     confidence_weighted: bool | None = None) -> Evaluation:
    """Accuracy, macro-F1, confusion and true-class probabilities over all frames of `streams`."""
    masked = tuple(masked)
    predictions = [predict_stream(model, stream, masked, confidence_weighted) for stream in streams]
    n = len(model.class_names)
    y_true = np.concatenate([p.y_true for p in predictions]) if predictions else np.zeros(0, np.int64)
    y_pred = np.concatenate([p.y_pred for p in predictions]) if predictions else np.zeros(0, np.int64)
    p_true = np.concatenate([p.p_true for p in predictions]) if predictions else np.zeros(0)
    return Evaluation(model.class_names, metrics.accuracy(y_true, y_pred, n), metrics.macro_f1(y_true, y_pred, n),
                      metrics.per_class_f1(y_true, y_pred, n), metrics.confusion_matrix(y_true, y_pred, n),
                      p_true[y_true >= 0], int(np.count_nonzero(y_true >= 0)), len(predictions))
