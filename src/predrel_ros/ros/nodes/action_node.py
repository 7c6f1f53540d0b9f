"""action_node: predicates (+ their reliability) -> the manipulation primitive (`predrel_ros/ActionEstimate`).

The work is `predrel_ros.action.ActionRecognizer` (paper 4.6: approach, grasp, transport,
place, insert, remove, release, idle over the confidence-weighted predicate state), configured by
the `action` section of `config` (default `config/action.yaml`) with the packaged model unless
`model` names another. `use_confidence: false` feeds the predicates without their confidences (the
paper's "without confidence" ablation) to the packaged model trained that way (`predrel action fit
--no-confidence`), unless `model` or the config names another.

Trust: with `use_reliability` the node keeps the newest `reliability` report (reliability_node) and
gives its per-predicate and per-group trust levels to the recognizer's trust gate: an estimate that
relies on an untrusted predicate (level in the config's `untrusted_levels`), or whose probability is
below `min_probability`, is published with trusted = false and the reason. Without a report
received in the last `reliability_timeout_s` seconds every estimate is untrusted ("no reliability
report"): a robot must not act on predicates nobody vouches for. Set `use_reliability: false` to run
without a reliability node (then only the probability gates).

The recognizer keeps a temporal window, so frames must come in increasing frame_index (the
stream-order policy, `predrel_ros.core.stream_order`, shared with the recognizer): older ones, and
ones implausibly far ahead, are counted `out_of_order` and skipped, `restart_after` of them in a row
start a new sequence (counted `restarts`, logged rate-limited). Reports follow the same policy.
Outcomes under `predicates.*` (processed, malformed, out_of_order, no_subscribers, failed) and
`reliability.*` (processed, malformed, out_of_order: a report older than the one held, or far ahead);
`action.untrusted` counts the estimates published untrusted.

    ros2 run predrel_ros action_node --ros-args -r predicates:=degraded/predicates -r action:=degraded/action
"""
from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path
from typing import Mapping

from predrel_ros.action import ActionConfig, ActionRecognizer, PrimitiveModel
from predrel_ros.action.model import DEFAULT_MODEL, NO_CONFIDENCE_MODEL
from predrel_ros.core.errors import UserError
from predrel_ros.core.package_files import config_path
from predrel_ros.core.stream_order import StreamOrder
from predrel_ros.msg import ActionEstimate, PredicateArray, ReliabilityReport
from predrel_ros.ros.kit.frame_counters import NO_SUBSCRIBERS, PROCESSED
from predrel_ros.ros.kit.frame_order import admit, restart_after_parameter
from predrel_ros.ros.kit.message_bounds import MAX_PREDICATES
from predrel_ros.ros.kit.node_base import PredrelNode, wanted
from predrel_ros.ros.kit.parameter_specs import ParameterSpec
from predrel_ros.ros.kit.qos import STREAM_QOS
from predrel_ros.ros.kit.runtime import run_node
from predrel_ros.ros.kit.topic_specs import DIAGNOSTICS, PUBLISHES, STREAM_QOS_TEXT, SUBSCRIBES, TopicSpec
from predrel_ros.ros.messages.actions import action_to_msg
from predrel_ros.ros.messages.predicates import predicates_from_msg
from predrel_ros.ros.messages.reliability import reliability_report_from_msg

NODE_NAME = "action"
#: its params file in config/ (action.yaml is the recognizer's library config)
PARAMS_FILE = "action_node.yaml"
PREDICATES, RELIABILITY = "predicates", "reliability"
#: counted per estimate published with trusted = false (an event, not an input outcome)
UNTRUSTED = "action.untrusted"

#: what a runtime change of the parameters that choose the recognizer does
RECOGNIZER_RUNTIME = ("; a change at runtime loads the recognizer anew (refused when it does not load), its temporal "
                      "window starting with the next frame")
#: the parameters that choose the recognizer
RECOGNIZER_PARAMETERS = ("config", "model", "use_confidence")

PARAMETERS = (
    ParameterSpec("config", "action.yaml", "YAML whose `action` section configures the recognizer and its trust gate "
                  "(model, min_probability, reliance_share, untrusted_levels, require_trust); a bare file name is "
                  "looked up in the package's config/ folder" + RECOGNIZER_RUNTIME, runtime=True),
    ParameterSpec("model", "", "primitive model file (JSON, `predrel action fit`); empty: the config's (empty there: "
                  "the packaged model)" + RECOGNIZER_RUNTIME, runtime=True),
    ParameterSpec("use_confidence", True, "weight the predicates by their confidence; false: the paper's "
                  "'without confidence' ablation, with the packaged model trained that way unless `model` is set"
                  + RECOGNIZER_RUNTIME, runtime=True),
    ParameterSpec("use_reliability", True, "gate on the trust levels of the `reliability` reports; estimates are "
                  "untrusted while no report is fresh. false: no reliability node (probability gate only)",
                  fixed_because="it decides the reliability subscription, made at start"),
    ParameterSpec("reliability_timeout_s", 2.0, "a report older than this no longer counts (the estimates become "
                  "untrusted until the next)", minimum=0.05, maximum=3600.0, runtime=True),
    restart_after_parameter("predicate", "the temporal window"),
    ParameterSpec("lazy", True, "skip recognition while nobody subscribes to action (counted no_subscribers)",
                  runtime=True),
    MAX_PREDICATES,
)

TOPICS = (
    TopicSpec("predicates", "predrel_ros/PredicateArray", SUBSCRIBES, STREAM_QOS_TEXT,
              "the predicate stream to recognise (e.g. remapped to degraded/predicates)"),
    TopicSpec("reliability", "predrel_ros/ReliabilityReport", SUBSCRIBES, STREAM_QOS_TEXT,
              "trust per predicate and group from reliability_node", "use_reliability"),
    TopicSpec("action", "predrel_ros/ActionEstimate", PUBLISHES, STREAM_QOS_TEXT,
              "the primitive of each frame with all class probabilities, trusted flag and reason"),
    DIAGNOSTICS,
)


def model_file(model_value: str, config: ActionConfig, config_name: str, use_confidence: bool) -> Path:
    """The model the node loads: the `model` parameter, else the config's `model`, else the packaged
    model (its no-confidence variant when use_confidence is false)."""
    if model_value:
        return config_path(model_value, "model")
    if config.model:
        return config_path(config.model, f"config ({config_name}: action.model)")
    return DEFAULT_MODEL if use_confidence else NO_CONFIDENCE_MODEL


def load_recognizer(params: Mapping[str, object], order: StreamOrder | None = None) -> ActionRecognizer:
    """The recognizer of the node's parameters (UserError naming the parameter at fault), deciding
    its frame order with `order`."""
    path = config_path(str(params["config"]))
    try:
        config = ActionConfig.load(path, section="action")
    except (OSError, ValueError) as error:
        raise UserError(f"parameter config: {path}: {error}") from None
    return ActionRecognizer(PrimitiveModel.load(model_file(str(params["model"]), config, path.name,
                                                           bool(params["use_confidence"]))), config, order=order)


class ActionNode(PredrelNode):
    def __init__(self, **kwargs) -> None:
        super().__init__(NODE_NAME, PARAMETERS, on_parameters=self._on_parameters,
                         check_parameters=self._check_parameters, **kwargs)
        p = self.params
        self.order = StreamOrder(p["restart_after"])
        self.recognizer = self._load(p.values)
        self._loaded: ActionRecognizer | None = None     # a new recognizer, loaded while its change is checked
        self.get_logger().info(
            f"primitives {', '.join(self.recognizer.model.class_names)}; confidences "
            f"{'used' if self.recognizer.model.confidence_weighted else 'not used'}; "
            f"trust from {'reliability reports' if p['use_reliability'] else 'nothing (probability gate only)'}")
        self.report_order = StreamOrder(p["restart_after"])
        self.report: ReliabilityReport | None = None
        self._trust = None
        self._report_time: float | None = None
        self.action_publisher = self.publisher(ActionEstimate, "action", STREAM_QOS)
        self.subscription(PredicateArray, "predicates", self._on_predicates, STREAM_QOS, stream=PREDICATES)
        if p["use_reliability"]:
            self.subscription(ReliabilityReport, "reliability", self._on_reliability, STREAM_QOS, stream=RELIABILITY)

    def _load(self, params: Mapping[str, object]) -> ActionRecognizer:
        """The recognizer of `params`, its model's inputs without confidences when use_confidence is false."""
        recognizer = load_recognizer(params, self.order)
        model = recognizer.model
        if not params["use_confidence"] and model.confidence_weighted:
            self.get_logger().warning("use_confidence is false but the model was trained with confidences: its "
                                      "inputs are given without them (set model to one trained with --no-confidence)")
            recognizer.model = dataclasses.replace(model, confidence_weighted=False)
        return recognizer

    def _check_parameters(self, values: Mapping[str, object]) -> None:
        """A new config, model or use_confidence must give a recognizer (UserError: refused, with why)."""
        if any(name in values for name in RECOGNIZER_PARAMETERS):
            self._loaded = self._load({**self.params.values, **values})

    def _on_parameters(self, changed: Mapping[str, object]) -> None:
        if "restart_after" in changed:
            self.order.restart_after = self.report_order.restart_after = int(changed["restart_after"])
        if any(name in changed for name in RECOGNIZER_PARAMETERS):
            self.recognizer, self._loaded = self._loaded, None
            self.get_logger().info("recognizer loaded anew: action recognition starts with the next frame")

    def _on_reliability(self, msg: ReliabilityReport) -> None:
        report = reliability_report_from_msg(msg)            # ValueError: counted malformed
        if not admit(self, self.report_order, RELIABILITY, report.frame_index, "the trust held"):
            return                                                       # an older report: the newer is kept
        self.report_order.accept(report.frame_index)
        self.report, self._trust, self._report_time = report, report.trust(), time.monotonic()
        self.count(RELIABILITY, PROCESSED)

    def _current_trust(self) -> tuple[dict | None, str]:
        """(trust levels for the gate, why there are none) of the newest fresh report."""
        if not self.params["use_reliability"]:
            return None, ""
        if self._report_time is None:
            return None, "no reliability report received"
        age = time.monotonic() - self._report_time
        if age > self.params["reliability_timeout_s"]:
            return None, f"no reliability report for {age:.1f} s"
        return self._trust, ""

    def _on_predicates(self, msg: PredicateArray) -> None:
        start = time.perf_counter()
        if self.params["lazy"] and not wanted(self.action_publisher):
            self.count(PREDICATES, NO_SUBSCRIBERS)
            return
        estimates = predicates_from_msg(msg, self.params["max_predicates_per_message"])  # counted malformed
        frame_index = int(msg.frame_index)
        if not admit(self, self.order, PREDICATES, frame_index, "action recognition", self.recognizer.reset):
            return
        trust, missing = self._current_trust()
        result = self.recognizer.update(frame_index, estimates, trust)  # ValueError (bad stream): nothing changed
        trusted, reason = result.trusted, result.reason
        if missing:
            trusted, reason = False, "; ".join(part for part in (missing, reason) if part)
        self.action_publisher.publish(action_to_msg(
            frame_index, result.class_names, result.probabilities, trusted, reason, header=msg.header))
        self.count(PREDICATES, PROCESSED)
        if not trusted:
            self.count(None, UNTRUSTED)
        self.latency.add(time.perf_counter() - start)

    def diagnostic_values(self) -> dict[str, object]:
        values: dict[str, object] = {"last_frame_index": -1 if self.order.last is None else self.order.last}
        if self.report is not None:
            values["reliability_frame_index"] = self.report.frame_index
        return values


def main(args: list[str] | None = None) -> int:
    return run_node(ActionNode, args)


if __name__ == "__main__":
    sys.exit(main())
