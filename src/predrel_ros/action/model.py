"""The primitive classifier: a small softmax network with numpy inference, and its model file.

    logits = W2 tanh(x W1 + b1) + b2      (hidden > 0)      logits = x W + b      (hidden = 0)

Small enough to run per frame in the action node (a few microseconds for ~300 inputs), trained by
`downstream.training`. The model file is JSON: format name and version, the class names, the
encoding (frame slots, temporal spec, confidence weighting), the layers, the baseline input (the
mean training feature vector, used to explain decisions), the training record and a SHA-256 digest
of all of it. Loading refuses, with a message naming the file, anything that is not such a file,
a newer version, a digest mismatch (corrupted or hand-edited), an encoding other than the one this
code computes, and inconsistent shapes.

Explaining a decision: `reliance(x, winner)` splits the winner's margin over the runner-up into
per-feature contributions grad_margin(x) * (x - baseline) (exact for hidden = 0, first order
otherwise) and sums the positive contributions per predicate name, as shares of their total:
the predicates this decision relies on, for the trust gate.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from predrel_ros.action.encoding import FRAME_SLOTS, TemporalSpec, feature_names, feature_predicates, slot_name
from predrel_ros.core.errors import UserError

FORMAT_NAME = "predrel-action-model"
FORMAT_VERSION = 1
#: the packaged model (trained on the controlled set; docs/predicates.md, docs/results.md "Action recognition")
DEFAULT_MODEL = Path(__file__).resolve().parent / "models" / "primitive-recognizer.json"
#: its variant trained without confidences (`predrel action fit --no-confidence`; the paper's ablation)
NO_CONFIDENCE_MODEL = DEFAULT_MODEL.with_name("primitive-recognizer-noconf.json")
#: digits kept per parameter in the file (float32 precision)
_DIGITS = 7


@dataclass
class Layer:
    weights: np.ndarray   # (inputs, outputs)
    bias: np.ndarray      # (outputs,)


@dataclass
class PrimitiveModel:
    """A trained primitive classifier with everything needed to encode its input."""

    class_names: tuple[str, ...]
    temporal: TemporalSpec
    confidence_weighted: bool
    layers: list[Layer]
    baseline: np.ndarray
    training: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.class_names = tuple(self.class_names)
        if len(self.class_names) < 2 or len(set(self.class_names)) != len(self.class_names) \
                or not all(isinstance(n, str) and n for n in self.class_names):
            raise ValueError(f"class_names must be at least two distinct non-empty names, got {list(self.class_names)}")
        if len(self.layers) not in (1, 2):
            raise ValueError(f"a model has one (linear) or two (one hidden layer) layers, got {len(self.layers)}")
        inputs = self.n_features
        for index, layer in enumerate(self.layers):
            layer.weights = np.asarray(layer.weights, dtype=np.float64)
            layer.bias = np.asarray(layer.bias, dtype=np.float64)
            if layer.weights.ndim != 2 or layer.weights.shape[0] != inputs \
                    or layer.bias.shape != layer.weights.shape[1:]:
                raise ValueError(f"layer {index}: weights {layer.weights.shape} and bias {layer.bias.shape} do not "
                                 f"fit {inputs} inputs")
            if not (np.isfinite(layer.weights).all() and np.isfinite(layer.bias).all()):
                raise ValueError(f"layer {index} has non-finite parameters")
            inputs = layer.weights.shape[1]
        if inputs != len(self.class_names):
            raise ValueError(f"the last layer has {inputs} outputs for {len(self.class_names)} classes")
        self.baseline = np.asarray(self.baseline, dtype=np.float64)
        if self.baseline.shape != (self.n_features,) or not np.isfinite(self.baseline).all():
            raise ValueError(f"baseline must be {self.n_features} finite numbers, got shape {self.baseline.shape}")
        self._predicates = np.array(feature_predicates(self.temporal))
        self._predicate_names, self._predicate_index = np.unique(self._predicates, return_inverse=True)

    @property
    def n_features(self) -> int:
        return len(FRAME_SLOTS) * len(self.temporal.blocks)

    @property
    def hidden(self) -> int:
        return self.layers[0].weights.shape[1] if len(self.layers) == 2 else 0

    @property
    def feature_names(self) -> list[str]:
        return feature_names(self.temporal)

    # ------------------------------------------------------------------------------- inference

    def logits(self, features: np.ndarray) -> np.ndarray:
        """(n, classes) logits of (n, n_features) features (or (classes,) of one vector)."""
        x = np.asarray(features, dtype=np.float64)
        if x.shape[-1] != self.n_features:
            raise ValueError(f"expected {self.n_features} features, got {x.shape[-1]}")
        if len(self.layers) == 2:
            x = np.tanh(x @ self.layers[0].weights + self.layers[0].bias)
        return x @ self.layers[-1].weights + self.layers[-1].bias

    def probabilities(self, features: np.ndarray) -> np.ndarray:
        return softmax(self.logits(features))

    def reliance(self, features: np.ndarray, winner: int) -> dict[str, float]:
        """Predicate name -> share of the positive contributions to the margin of class `winner`
        over the runner-up (shares sum to 1; empty when nothing pushed towards the winner)."""
        x = np.asarray(features, dtype=np.float64).reshape(-1)
        logits = self.logits(x)
        order = np.argsort(logits)[::-1]
        runner_up = int(order[1] if order[0] == winner else order[0])
        gradient = self._margin_gradient(x, winner, runner_up)
        contributions = np.maximum(gradient * (x - self.baseline), 0.0)
        per_predicate = np.bincount(self._predicate_index, weights=contributions,
                                    minlength=len(self._predicate_names))
        total = per_predicate.sum()
        if total <= 0:
            return {}
        return {str(name): float(share) for name, share in zip(self._predicate_names, per_predicate / total)
                if share > 0}

    def _margin_gradient(self, x: np.ndarray, winner: int, runner_up: int) -> np.ndarray:
        last = self.layers[-1].weights
        direction = last[:, winner] - last[:, runner_up]
        if len(self.layers) == 1:
            return direction
        first = self.layers[0]
        hidden = np.tanh(x @ first.weights + first.bias)
        return first.weights @ ((1.0 - hidden ** 2) * direction)

    # ------------------------------------------------------------------------------- file

    def to_dict(self) -> dict:
        payload = {
            "format": FORMAT_NAME,
            "format_version": FORMAT_VERSION,
            "class_names": list(self.class_names),
            "encoding": {"frame_slots": [slot_name(slot) for slot in FRAME_SLOTS],
                         "temporal": self.temporal.to_dict(),
                         "confidence_weighted": self.confidence_weighted},
            "layers": [{"weights": _plain(layer.weights), "bias": _plain(layer.bias)} for layer in self.layers],
            "baseline": _plain(self.baseline),
            "training": self.training,
        }
        # round-trip through JSON so the digest covers exactly what a reader will parse
        payload = json.loads(json.dumps(payload))
        payload["digest"] = _digest(payload)
        return payload

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_dict(), separators=(",", ":")) + "\n")
        return path

    @classmethod
    def from_dict(cls, data: dict, source: str = "model") -> "PrimitiveModel":
        def refuse(message: str) -> UserError:
            return UserError(f"{source}: {message}")

        if not isinstance(data, dict) or data.get("format") != FORMAT_NAME:
            raise refuse(f"not a {FORMAT_NAME} file")
        version = data.get("format_version")
        if not isinstance(version, int) or version > FORMAT_VERSION:
            raise refuse(f"format version {version!r} is newer than this predrel_ros reads ({FORMAT_VERSION}); "
                         f"update predrel_ros")
        body = {key: value for key, value in data.items() if key != "digest"}
        if data.get("digest") != _digest(body):
            raise refuse("digest mismatch: the file is corrupted or was edited by hand; retrain it "
                         "with `predrel action fit`")
        try:
            encoding = data["encoding"]
            slots = [slot_name(slot) for slot in FRAME_SLOTS]
            if encoding["frame_slots"] != slots:
                raise refuse("the model was trained on a different predicate encoding than this predrel_ros "
                             "computes (frame slots differ); retrain it with `predrel action fit`")
            temporal = TemporalSpec(**encoding["temporal"])
            layers = [Layer(np.array(layer["weights"], dtype=np.float64), np.array(layer["bias"], dtype=np.float64))
                      for layer in data["layers"]]
            return cls(class_names=tuple(data["class_names"]), temporal=temporal,
                       confidence_weighted=bool(encoding["confidence_weighted"]), layers=layers,
                       baseline=np.array(data["baseline"], dtype=np.float64), training=data.get("training", {}))
        except UserError:
            raise
        except (KeyError, TypeError, ValueError) as error:
            detail = f"missing field {error}" if isinstance(error, KeyError) else str(error)
            raise refuse(f"invalid model ({detail})") from None

    @classmethod
    def load(cls, path: str | Path | None = None) -> "PrimitiveModel":
        """Read a model file (default: the packaged model)."""
        path = Path(path) if path else DEFAULT_MODEL
        try:
            text = path.read_text()
        except OSError as error:
            hint = " (train one with `predrel action fit`)" if path == DEFAULT_MODEL else ""
            raise UserError(f"cannot read action model {path}: {error.strerror}{hint}") from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise UserError(f"{path}: not valid JSON ({error}); the file is corrupted") from None
        return cls.from_dict(data, str(path))


def softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(axis=-1, keepdims=True)
    exp = np.exp(shifted)
    return exp / exp.sum(axis=-1, keepdims=True)


def _plain(array: np.ndarray) -> list:
    """Nested lists of floats with `_DIGITS` significant digits."""
    rounded = np.vectorize(lambda v: float(f"{v:.{_DIGITS}g}"), otypes=[float])(np.asarray(array, dtype=np.float64))
    return rounded.tolist()


def _digest(payload: dict) -> str:
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()
