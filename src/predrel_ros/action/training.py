"""Training the primitive classifier (paper 4.8): fit on train, select on validation, report on test.

The network (`model.PrimitiveModel`) is fitted by L-BFGS (scipy) on the class-balanced mean
cross-entropy plus an L2 penalty on the weights (not the biases): every class weighs the same in
the loss, since macro-F1 counts the short primitives (release, grasp) as much as transport. All
randomness (the initial weights of a hidden layer) comes from `seed`, so a fit is reproducible.
BLAS runs single-threaded during the fit: these matrices are small, and on a busy machine
multi-threaded OpenBLAS made matrix products 7 times and a small fit 40 times slower (measured on
the loaded shared 2-core host).

`select_and_fit` tries every (temporal spec, hidden size, l2) of a grid on the training streams and
keeps the one with the best validation macro-F1 (ties: the simpler model: fewer hidden units,
stronger L2, fewer features); the training data are predicates extracted from clean inputs, and
nothing is tuned on degraded data.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
from scipy.optimize import minimize
from threadpoolctl import threadpool_limits

from predrel_ros.action.encoding import TemporalSpec, encode_sequence
from predrel_ros.action.metrics import accuracy, macro_f1
from predrel_ros.action.model import Layer, PrimitiveModel, softmax
from predrel_ros.action.streams import EpisodeStream
from predrel_ros.core.errors import UserError


@dataclass(frozen=True)
class Hyperparameters:
    temporal: TemporalSpec
    hidden: int = 0
    l2: float = 1e-3

    def __post_init__(self) -> None:
        if self.hidden < 0:
            raise ValueError(f"hidden must be >= 0 units, got {self.hidden}")
        if not self.l2 >= 0:
            raise ValueError(f"l2 must be >= 0, got {self.l2}")

    def to_dict(self) -> dict:
        return {"temporal": self.temporal.to_dict(), "hidden": self.hidden, "l2": self.l2}


#: the default search grid (select_and_fit)
DEFAULT_TEMPORAL = (TemporalSpec(lags=(0,), recent_max=0, max_hold=0),
                    TemporalSpec(lags=(0, 3, 8), recent_max=15, max_hold=4),
                    TemporalSpec(lags=(0, 2, 5, 10, 20), recent_max=30, max_hold=4),
                    TemporalSpec(lags=(0, 3, 8, 15, 30), recent_max=30, max_hold=4),
                    TemporalSpec(lags=(0, 2, 5, 10, 20, 40), recent_max=45, max_hold=4))
DEFAULT_HIDDEN = (0, 32)
DEFAULT_L2 = (3e-4, 1e-3, 1e-2)


def default_grid() -> list[Hyperparameters]:
    return [Hyperparameters(temporal, hidden, l2)
            for temporal in DEFAULT_TEMPORAL for hidden in DEFAULT_HIDDEN for l2 in DEFAULT_L2]


def labelled_features(streams: Sequence[EpisodeStream], temporal: TemporalSpec, class_names: Sequence[str],
                      confidence_weighted: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(features, class indices) of the delivered frames that have a ground-truth primitive."""
    index = {name: i for i, name in enumerate(class_names)}
    blocks, targets = [], []
    for stream in streams:
        features = encode_sequence(stream.frames, temporal, confidence_weighted)
        labels = [stream.labels[frame_index] for frame_index, _ in stream.frames]
        unknown = {label for label in labels if label is not None and label not in index}
        if unknown:
            raise UserError(f"episode {stream.name}: primitives {sorted(unknown)} are not among the classes "
                            f"{list(class_names)}")
        keep = [i for i, label in enumerate(labels) if label is not None]
        blocks.append(features[keep])
        targets.extend(index[labels[i]] for i in keep)
    if not targets:
        raise UserError("no frame with a ground-truth primitive to learn from")
    return np.concatenate(blocks), np.array(targets, dtype=np.int64)


def balanced_weights(y: np.ndarray, n_classes: int) -> np.ndarray:
    """Per-sample weights so that every present class has the same total weight (mean 1)."""
    counts = np.bincount(y, minlength=n_classes).astype(np.float64)
    present = np.count_nonzero(counts)
    per_class = np.divide(len(y), present * counts, out=np.zeros(n_classes), where=counts > 0)
    return per_class[y]


def fit_network(x: np.ndarray, y: np.ndarray, n_classes: int, hidden: int = 0, l2: float = 1e-3,
                seed: int = 0, max_iter: int = 500) -> list[Layer]:
    """Layers minimising the class-balanced cross-entropy + l2/2 * |weights|^2 (L-BFGS)."""
    x = np.asarray(x, dtype=np.float64)
    n, d = x.shape
    sample_weight = balanced_weights(y, n_classes) / n
    one_hot = np.eye(n_classes)[y]
    rng = np.random.default_rng(seed)
    shapes = [(d, n_classes), (n_classes,)] if hidden == 0 \
        else [(d, hidden), (hidden,), (hidden, n_classes), (n_classes,)]
    initial = [rng.normal(0.0, 1.0 / np.sqrt(shape[0]), shape) if len(shape) == 2 else np.zeros(shape)
               for shape in shapes] if hidden else [np.zeros(shape) for shape in shapes]
    sizes = [int(np.prod(shape)) for shape in shapes]

    def unpack(theta: np.ndarray) -> list[np.ndarray]:
        parts, start = [], 0
        for shape, size in zip(shapes, sizes):
            parts.append(theta[start:start + size].reshape(shape))
            start += size
        return parts

    def loss_and_gradient(theta: np.ndarray) -> tuple[float, np.ndarray]:
        params = unpack(theta)
        if hidden:
            w1, b1, w2, b2 = params
            h = np.tanh(x @ w1 + b1)
            probabilities = softmax(h @ w2 + b2)
        else:
            w2, b2 = params
            h = x
            probabilities = softmax(h @ w2 + b2)
        loss = -np.sum(sample_weight * np.log(np.sum(probabilities * one_hot, axis=1) + 1e-300))
        delta = (probabilities - one_hot) * sample_weight[:, None]
        grad_w2 = h.T @ delta + l2 * w2
        grad_b2 = delta.sum(axis=0)
        loss += 0.5 * l2 * np.sum(w2 ** 2)
        if not hidden:
            return loss, np.concatenate([grad_w2.ravel(), grad_b2])
        back = (delta @ w2.T) * (1.0 - h ** 2)
        grad_w1 = x.T @ back + l2 * w1
        loss += 0.5 * l2 * np.sum(w1 ** 2)
        return loss, np.concatenate([grad_w1.ravel(), back.sum(axis=0), grad_w2.ravel(), grad_b2])

    theta0 = np.concatenate([part.ravel() for part in initial])
    with threadpool_limits(limits=1, user_api="blas"):
        result = minimize(loss_and_gradient, theta0, jac=True, method="L-BFGS-B", options={"maxiter": max_iter})
    params = unpack(result.x)
    if hidden:
        return [Layer(params[0], params[1]), Layer(params[2], params[3])]
    return [Layer(params[0], params[1])]


@dataclass
class Trial:
    hyperparameters: Hyperparameters
    val_accuracy: float
    val_macro_f1: float

    def to_dict(self) -> dict:
        return {**self.hyperparameters.to_dict(), "val_accuracy": round(self.val_accuracy, 4),
                "val_macro_f1": round(self.val_macro_f1, 4)}


@dataclass
class Selection:
    model: PrimitiveModel
    best: Trial
    trials: list[Trial] = field(default_factory=list)


def fit_model(streams: Sequence[EpisodeStream], hyperparameters: Hyperparameters, class_names: Sequence[str],
              confidence_weighted: bool = True, seed: int = 0, training: dict | None = None) -> PrimitiveModel:
    """A model fitted on `streams` (the baseline input is their mean feature vector)."""
    x, y = labelled_features(streams, hyperparameters.temporal, class_names, confidence_weighted)
    layers = fit_network(x, y, len(class_names), hyperparameters.hidden, hyperparameters.l2, seed)
    return PrimitiveModel(tuple(class_names), hyperparameters.temporal, confidence_weighted, layers,
                          baseline=x.mean(axis=0), training=dict(training or {}))


def _simplicity(hyperparameters: Hyperparameters) -> tuple:
    temporal = hyperparameters.temporal
    return (-hyperparameters.hidden, hyperparameters.l2, -len(temporal.blocks))


def select_and_fit(train: Sequence[EpisodeStream], val: Sequence[EpisodeStream], class_names: Sequence[str],
                   grid: Sequence[Hyperparameters] | None = None, confidence_weighted: bool = True,
                   seed: int = 0, progress: bool = False) -> Selection:
    """Fit every grid point on `train`, keep the best validation macro-F1 (see the module docstring)."""
    grid = list(grid or default_grid())
    if not grid:
        raise ValueError("the hyperparameter grid is empty")
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=len(grid), desc="hyperparameter selection", unit="fit")
    trials: list[tuple[Trial, PrimitiveModel]] = []
    try:
        for hyperparameters in grid:
            model = fit_model(train, hyperparameters, class_names, confidence_weighted, seed)
            x_val, y_val = labelled_features(val, hyperparameters.temporal, class_names, confidence_weighted)
            predicted = model.logits(x_val).argmax(axis=1)
            trial = Trial(hyperparameters, accuracy(y_val, predicted, len(class_names)),
                          macro_f1(y_val, predicted, len(class_names)))
            trials.append((trial, model))
            if bar is not None:
                bar.set_postfix(best_f1=f"{max(t.val_macro_f1 for t, _ in trials):.3f}")
                bar.update()
    finally:
        if bar is not None:
            bar.close()
    best, model = max(trials, key=lambda item: (round(item[0].val_macro_f1, 4), _simplicity(item[0].hyperparameters)))
    return Selection(model, best, [trial for trial, _ in trials])
