"""The live manipulation-primitive recognizer: one frame's predicate estimates in, one primitive out.

    from predrel_ros.action import ActionConfig, ActionRecognizer
    recognizer = ActionRecognizer.from_config(ActionConfig.load("config/action.yaml", section="action"))
    result = recognizer.update(frame_index, estimates, trust=levels)   # levels: predicate -> OK|WARN|ERROR
    result.primitive, result.probability, result.trusted, result.reason

Frames must come in increasing frame_index; gaps are fine (dropped frames keep their indices, the
temporal window reads them as missing, see `encoding`). An older or repeated index raises
`FrameOrderError` and changes nothing. `reset()` starts a new sequence.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from predrel_ros.action.encoding import TemporalWindow, encode_frame, expand_masked
from predrel_ros.action.model import PrimitiveModel
from predrel_ros.action.trust_gate import ActionConfig, trust_decision
from predrel_ros.predicates.estimate import PredicateEstimate
from predrel_ros.predicates.extractor import FrameOrderError


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
    broken on this robot); the model still runs, on less evidence."""

    def __init__(self, model: PrimitiveModel, config: ActionConfig | None = None,
                 masked: Sequence[str] = ()) -> None:
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
        last = self._window.last_frame
        if last is not None and frame_index <= last:
            raise FrameOrderError(f"frame {frame_index} arrived after frame {last}; frames must come in "
                                  f"increasing frame_index (this frame was ignored)")
        vector = encode_frame(estimates, self.model.confidence_weighted, self.masked)
        features = self._window.push(frame_index, vector)
        probabilities = self.model.probabilities(features)
        winner = int(np.argmax(probabilities))
        probability = float(probabilities[winner])
        trusted, reason, relied = trust_decision(self.model.reliance(features, winner), probability, trust,
                                                 self.config)
        return ActionResult(frame_index, self.model.class_names[winner], probability, self.model.class_names,
                            probabilities, trusted, reason, relied)
