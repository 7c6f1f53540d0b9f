"""The live manipulation-primitive recognizer: one frame's predicate estimates in, one primitive out.

    from predrel_ros.action import ActionConfig, ActionRecognizer
    recognizer = ActionRecognizer.from_config(ActionConfig.load("config/action.yaml", section="action"))
    result = recognizer.update(frame_index, estimates, trust=levels)   # levels: predicate -> OK|WARN|ERROR
    result.primitive, result.probability, result.trusted, result.reason

Frames must come in increasing frame_index, by the one stream-order policy
(`predrel_ros.core.stream_order`, the recognizer's `order`); gaps are fine (dropped frames keep
their indices, the temporal window reads them as missing, see `encoding`). An older or repeated
index, or one implausibly far ahead, raises `FrameOrderError` and changes nothing; the
`restart_after`-th such frame in a row (default 5) starts a new sequence. `reset()` starts one too.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from predrel_ros.action.encoding import TemporalWindow, encode_frame, expand_masked
from predrel_ros.action.model import PrimitiveModel
from predrel_ros.action.trust_gate import ActionConfig, trust_decision
from predrel_ros.core.stream_order import StreamOrder
from predrel_ros.predicates.estimate import PredicateEstimate


@dataclass
class ActionResult:
    """One frame's primitive (the fields of ActionEstimate.msg, plus what the decision relied on)."""

    frame_index: int
    primitive: str
    probability: float
    class_names: tuple[str, ...]
    probabilities: np.ndarray
    trusted: bool
    reason: str
    relied_on: tuple[str, ...] = ()


class ActionRecognizer:
    """Stateful per-stream recognizer around a `PrimitiveModel`.

    masked: predicate or group names treated as unknown (an ablation, or predicates known to be
    broken on this robot); the model still runs, on less evidence. order: the frame order of its
    input (`StreamOrder()` by default; a node passes the one it decides with)."""

    def __init__(self, model: PrimitiveModel, config: ActionConfig | None = None,
                 masked: Sequence[str] = (), order: StreamOrder | None = None) -> None:
        self.order = order if order is not None else StreamOrder()
        self.model = model
        self.config = config if config is not None else ActionConfig()
        self.masked = expand_masked(masked)
        self._window = TemporalWindow(model.temporal)

    @classmethod
    def from_config(cls, config: ActionConfig) -> "ActionRecognizer":
        return cls(PrimitiveModel.load(config.model or None), config)

    def reset(self) -> None:
        """Forget the temporal window (a new sequence starts)."""
        self._window.reset()
        self.order.reset()

    @property
    def last_frame(self) -> int | None:
        return self._window.last_frame

    def update(self, frame_index: int, estimates: Sequence[PredicateEstimate],
               trust: Mapping[str, Any] | None = None) -> ActionResult:
        """The primitive at `frame_index` from that frame's estimates.

        trust: predicate (or group) name -> trust level "OK" / "WARN" / "ERROR" / "STALE", or an
        object with .level and .reasons (`TrustAssessor.assess` output); None without a reliability
        node (then only the probability gates)."""
        frame_index = int(frame_index)
        vector = encode_frame(estimates, self.model.confidence_weighted, self.masked)
        self.order.admit(frame_index, self.reset)           # FrameOrderError: nothing changed
        features = self._window.push(frame_index, vector)
        self.order.accept(frame_index)
        probabilities = self.model.probabilities(features)
        winner = int(np.argmax(probabilities))
        probability = float(probabilities[winner])
        trusted, reason, relied = trust_decision(self.model.reliance(features, winner), probability, trust,
                                                 self.config)
        return ActionResult(frame_index, self.model.class_names[winner], probability, self.model.class_names,
                            probabilities, trusted, reason, relied)
