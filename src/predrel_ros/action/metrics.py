"""Frame-level recognition scores (paper 4.6): accuracy, macro-F1, confusion matrix.

Labels are class indices 0..n_classes-1. A predicted label of -1 means "no prediction" (no
estimate was published for that frame, e.g. every frame so far was dropped): it is wrong, counts
as a miss of the true class and as a false positive of none. Frames whose true label is -1 (no
ground truth) are left out of every score.

macro-F1 averages the per-class F1 = 2 TP / (2 TP + FP + FN) over the classes that occur in the
truth or in the predictions of the scored frames (the classes nobody mentions are left out rather
than counted as 0 or 1).
"""
from __future__ import annotations

import numpy as np

NO_PREDICTION = -1


def _scored(y_true, y_pred, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    y_true = np.asarray(y_true, dtype=np.int64).reshape(-1)
    y_pred = np.asarray(y_pred, dtype=np.int64).reshape(-1)
    if y_true.shape != y_pred.shape:
        raise ValueError(f"y_true and y_pred must have the same length, got {y_true.size} and {y_pred.size}")
    for name, values in (("y_true", y_true), ("y_pred", y_pred)):
        if values.size and (values.min() < -1 or values.max() >= n_classes):
            raise ValueError(f"{name} must hold class indices 0..{n_classes - 1} or -1, "
                             f"got {values.min()}..{values.max()}")
    keep = y_true >= 0
    return y_true[keep], y_pred[keep]


def confusion_matrix(y_true, y_pred, n_classes: int) -> np.ndarray:
    """(n_classes, n_classes + 1) counts: row = true class, column = predicted class, the last
    column counts frames without a prediction."""
    y_true, y_pred = _scored(y_true, y_pred, n_classes)
    matrix = np.zeros((n_classes, n_classes + 1), dtype=np.int64)
    np.add.at(matrix, (y_true, np.where(y_pred >= 0, y_pred, n_classes)), 1)
    return matrix


def accuracy(y_true, y_pred, n_classes: int) -> float:
    """Share of scored frames predicted right; NaN when no frame is scored."""
    y_true, y_pred = _scored(y_true, y_pred, n_classes)
    return float(np.mean(y_true == y_pred)) if y_true.size else float("nan")


def per_class_f1(y_true, y_pred, n_classes: int) -> np.ndarray:
    """F1 of every class; NaN for a class that occurs neither in the truth nor in the predictions."""
    matrix = confusion_matrix(y_true, y_pred, n_classes)
    tp = np.diag(matrix[:, :n_classes]).astype(np.float64)
    fn = matrix.sum(axis=1) - tp
    fp = matrix[:, :n_classes].sum(axis=0) - tp
    denominator = 2 * tp + fp + fn
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, 2 * tp / denominator, np.nan)


def macro_f1(y_true, y_pred, n_classes: int) -> float:
    """Mean F1 over the classes present in the truth or the predictions; NaN with no scored frame."""
    f1 = per_class_f1(y_true, y_pred, n_classes)
    return float(np.nanmean(f1)) if np.isfinite(f1).any() else float("nan")
