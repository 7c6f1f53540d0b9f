"""dashboard_node: a live terminal view of the pipelines, and the summary of a degradation sweep.

It listens to what the replay, reliability and action nodes publish and shows, refreshed a few
times a second: the current degradation, per predicate group the trust level (OK / WARN / ERROR /
STALE), PRS, TPC-S, mean confidence and the reason of each reliability report topic
(`reliability_topics`), the recognised action with its probability, whether it is trusted (and
why not) next to the ground truth, and every node's frame counters from /diagnostics. On a
terminal the screen is redrawn in place; in a pipe or log (ros2 launch) it prints one line every
`line_period_s` (`display`). Rendering is plain Python: `predrel_ros.tools.dashboard`. Each stream
with a frame_index is taken in the order of the stream-order policy (`predrel_ros.core.stream_order`):
an old frame, or one implausibly far ahead (a bogus frame_index), is counted `<topic>.out_of_order`
and neither shown nor recorded, so the frame shown follows the streams; a stream that restarts its
numbering is followed after a few frames (`<topic>.restarts`, logged rate-limited).

With `summary_dir` set it also records both pipelines' predicates and entities and writes, when it
stops, `summary.json` (per degradation condition: agreement and PRS per group against the clean
twin, the twins' entities associated per frame; trust-level counts, action accuracy against ground
truth; frame accounting; timeline) and `sweep.png`.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Mapping

from diagnostic_msgs.msg import DiagnosticArray

from predrel_ros.core.errors import UserError
from predrel_ros.core.package_files import config_path
from predrel_ros.core.stream_order import StreamOrder
from predrel_ros.msg import ActionEstimate, DegradationState, EntityArray, PredicateArray, ReliabilityReport
from predrel_ros.reliability.trust import TrustConfig
from predrel_ros.ros.kit.diagnostics import level_of, values_of
from predrel_ros.ros.kit.frame_counters import OUTCOMES
from predrel_ros.ros.kit.frame_order import admit
from predrel_ros.ros.kit.message_bounds import MAX_ENTITIES, MAX_PREDICATES
from predrel_ros.ros.kit.node_base import PredrelNode
from predrel_ros.ros.kit.parameter_specs import ParameterSpec
from predrel_ros.ros.kit.qos import LATCHED_QOS, STREAM_QOS
from predrel_ros.ros.kit.runtime import run_node
from predrel_ros.ros.kit.topic_specs import DIAGNOSTICS, LATCHED_QOS_TEXT, STREAM_QOS_TEXT, SUBSCRIBES, TopicSpec
from predrel_ros.ros.messages.actions import check_action_estimate, primitive_from_msg
from predrel_ros.ros.messages.degradations import checked_degradation_from_msg
from predrel_ros.ros.messages.entities import entities_from_msg
from predrel_ros.ros.messages.predicates import predicates_from_msg
from predrel_ros.tools.dashboard.plot import plot_summary
from predrel_ros.tools.dashboard.render import MODES, Display
from predrel_ros.tools.dashboard.sweep_summary import CLEAN_SIDE, DEGRADED_SIDE, SweepRecorder
from predrel_ros.tools.dashboard.view import (
    ActionView,
    Condition,
    DashboardState,
    GroupTrust,
    NodeStatus,
    ReportView,
    trust_name,
)

NODE_NAME = "dashboard"
SUMMARY_FILE = "summary.json"
PLOT_FILE = "sweep.png"
DIAGNOSTIC_LEVELS = ("OK", "WARN", "ERROR", "STALE")
#: the counter of a stream's inputs (`frames.in`), next to its outcomes
INPUTS = "in"

PARAMETERS = (
    ParameterSpec("display", "auto", "auto: redraw in place on a terminal, else periodic lines; screen; lines",
                  choices=MODES, fixed_because="the display (screen or lines) is chosen for the terminal at start"),
    ParameterSpec("refresh_hz", 4.0, "screen redraws per second", minimum=0.2, maximum=30.0, runtime=True),
    ParameterSpec("line_period_s", 5.0, "seconds between lines when not drawing a screen", minimum=0.1, runtime=True),
    ParameterSpec("reliability_topics", ["reliability"], "ReliabilityReport topics to show, each as its own "
                  "table (e.g. a clean_twin and a self-mode reliability node)", type="str[]",
                  fixed_because="each is a subscription, made at start"),
    ParameterSpec("summary_dir", "", "where to write summary.json and sweep.png when the node stops; empty: "
                  "no summary (and no predicate recording)", fixed_because="the summary records the run from the "
                  "start"),
    ParameterSpec("title", "", "title of the summary plot", runtime=True),
    ParameterSpec("config", "predicates.yaml", "YAML whose `trust` section gives the agreement limits the plot draws "
                  "as bands; a bare file name is looked up in the package's config/ folder",
                  fixed_because="the trust limits are loaded at start"),
    MAX_ENTITIES,
    MAX_PREDICATES,
)

TOPICS = (
    TopicSpec("degradation", "predrel_ros/DegradationState", SUBSCRIBES, LATCHED_QOS_TEXT,
              "the degraded twin's current condition"),
    TopicSpec("reliability", "predrel_ros/ReliabilityReport", SUBSCRIBES, STREAM_QOS_TEXT,
              "each of `reliability_topics`"),
    TopicSpec("action", "predrel_ros/ActionEstimate", SUBSCRIBES, STREAM_QOS_TEXT, "the recognised action"),
    TopicSpec("ground_truth/action", "predrel_ros/ActionEstimate", SUBSCRIBES, STREAM_QOS_TEXT,
              "the true action (controlled-set replays)"),
    TopicSpec("clean/predicates", "predrel_ros/PredicateArray", SUBSCRIBES, STREAM_QOS_TEXT,
              "the clean twin's predicates (recorded for the summary when summary_dir is set)"),
    TopicSpec("degraded/predicates", "predrel_ros/PredicateArray", SUBSCRIBES, STREAM_QOS_TEXT,
              "the degraded pipeline's predicates"),
    TopicSpec("clean/entities", "predrel_ros/EntityArray", SUBSCRIBES, STREAM_QOS_TEXT,
              "the clean twin's entities (summary: to associate the twins' entities)"),
    TopicSpec("degraded/entities", "predrel_ros/EntityArray", SUBSCRIBES, STREAM_QOS_TEXT,
              "the degraded pipeline's entities"),
    TopicSpec("/diagnostics", "diagnostic_msgs/DiagnosticArray", SUBSCRIBES, "reliable, keep last 10",
              "every node's status and counters"),
    DIAGNOSTICS,
)


def condition_of(msg: DegradationState) -> Condition:
    info = checked_degradation_from_msg(msg)  # ValueError for a kind that does not exist
    return Condition(info.kind, info.severity)


def report_view(msg: ReliabilityReport) -> ReportView:
    groups = {}
    for entry in msg.groups:
        groups[entry.group or entry.predicate] = GroupTrust(
            group=entry.group or entry.predicate, trust=trust_name(int(entry.trust)), prs=float(entry.prs),
            tpc_s=float(entry.tpc_s), mean_confidence=float(entry.mean_confidence), samples=int(entry.samples),
            reason=entry.reason)
    return ReportView(int(msg.frame_index), msg.reference_mode, condition_of(msg.degradation), groups)


def action_view(msg: ActionEstimate) -> ActionView:
    check_action_estimate(msg)
    return ActionView(int(msg.frame_index), msg.primitive, float(msg.probability), bool(msg.trusted), msg.reason)


def node_status(status) -> NodeStatus:
    """A DiagnosticStatus as a NodeStatus keeping the frame counters: inputs (`stream.in`) and
    outcomes (`stream.processed`, `stream.dropped_stale`, ...)."""
    counters = {}
    for key, value in values_of(status).items():
        if key.rsplit(".", 1)[-1] in (*OUTCOMES, INPUTS) and not key.startswith("rate."):
            try:
                counters[key] = int(value)
            except ValueError:
                continue
    level = level_of(status)
    return NodeStatus(status.name, DIAGNOSTIC_LEVELS[level] if level < len(DIAGNOSTIC_LEVELS) else str(level),
                      status.message, counters)


class DashboardNode(PredrelNode):
    def __init__(self, **kwargs) -> None:
        super().__init__(NODE_NAME, PARAMETERS, on_parameters=self._on_parameters, **kwargs)
        p = self.params
        self.state = DashboardState()
        self.orders: dict[str, StreamOrder] = {}   # per stream with a frame_index
        self.summary_dir = Path(p["summary_dir"]).expanduser() if p["summary_dir"] else None
        self.recorder = SweepRecorder() if self.summary_dir is not None else None
        self.display = Display(sys.stdout, p["display"], p["line_period_s"])
        self.on_destroy(self._close)  # registered once it holds what _close needs: a failed start logs no error
        self.trust_config = TrustConfig.load(config_path(p["config"]), section="trust")
        if self.summary_dir is not None:
            try:
                self.summary_dir.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise UserError(f"summary_dir {self.summary_dir}: {error.strerror}") from None
        self.subscription(DegradationState, "degradation", self._on_degradation, LATCHED_QOS)
        for topic in p["reliability_topics"]:
            self.subscription(ReliabilityReport, topic, lambda msg, label=topic: self._on_report(label, msg),
                              STREAM_QOS, stream=topic)
        self.subscription(ActionEstimate, "action", self._on_action, STREAM_QOS)
        self.subscription(ActionEstimate, "ground_truth/action", self._on_ground_truth_action, STREAM_QOS)
        # subscribed also without summary_dir: the graph (what a replay's wait_for_topics counts)
        # does not depend on a parameter
        for side in (CLEAN_SIDE, DEGRADED_SIDE):
            self.subscription(PredicateArray, f"{side}/predicates",
                              lambda msg, side=side: self._on_predicates(side, msg), STREAM_QOS,
                              stream=f"{side}/predicates")
            self.subscription(EntityArray, f"{side}/entities",
                              lambda msg, side=side: self._on_entities(side, msg), STREAM_QOS,
                              stream=f"{side}/entities")
        self.subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, 10)
        self.refresh = self.create_timer(1.0 / p["refresh_hz"], lambda: self.display.update(self.state))

    def _on_parameters(self, changed: Mapping[str, object]) -> None:
        if "refresh_hz" in changed:
            self.refresh.timer_period_ns = round(1e9 / float(changed["refresh_hz"]))
        if "line_period_s" in changed:
            self.display.line_period_s = float(changed["line_period_s"])

    def _on_degradation(self, msg: DegradationState) -> None:
        self.state.on_degradation(condition_of(msg))
        self.count("degradation", "processed")

    def _in_order(self, stream: str, frame_index: int) -> bool:
        """Whether the frame of `stream` is taken (else counted out_of_order)."""
        order = self.orders.setdefault(stream, StreamOrder())
        if not admit(self, order, stream, frame_index, "the view"):
            return False
        order.accept(frame_index)
        return True

    def _on_report(self, label: str, msg: ReliabilityReport) -> None:
        view = report_view(msg)
        if not self._in_order(label, view.frame_index):
            return
        self.state.on_report(label, view)
        if self.recorder is not None:
            self.recorder.add_report(label, view)
        self.count(label, "processed")

    def _on_action(self, msg: ActionEstimate) -> None:
        view = action_view(msg)
        if not self._in_order("action", view.frame_index):
            return
        self.state.on_action(view)
        if self.recorder is not None:
            self.recorder.add_action(view)
        self.count("action", "processed")

    def _on_ground_truth_action(self, msg: ActionEstimate) -> None:
        primitive = primitive_from_msg(msg)   # ValueError: counted malformed, before the order sees it
        if not self._in_order("ground_truth/action", msg.frame_index):
            return
        self.state.on_ground_truth_action(int(msg.frame_index), primitive)
        if self.recorder is not None:
            self.recorder.add_ground_truth_action(int(msg.frame_index), primitive)
        self.count("ground_truth/action", "processed")

    def _on_predicates(self, side: str, msg: PredicateArray) -> None:
        recorded = None
        if self.recorder is not None:                                     # ValueError: counted malformed
            recorded = (condition_of(msg.degradation),
                        predicates_from_msg(msg, self.params["max_predicates_per_message"]))
        if not self._in_order(f"{side}/predicates", msg.frame_index):
            return
        self.state.on_predicates(f"{side}/predicates", int(msg.frame_index))
        if recorded is not None:
            self.recorder.add_predicates(side, int(msg.frame_index), *recorded)
        self.count(f"{side}/predicates", "processed")

    def _on_entities(self, side: str, msg: EntityArray) -> None:
        entities = None
        if self.recorder is not None:                                     # ValueError: counted malformed
            entities = entities_from_msg(msg, decode_masks=False, max_entities=self.params["max_entities_per_message"])
        if not self._in_order(f"{side}/entities", msg.frame_index):
            return
        if entities is not None:
            self.recorder.add_entities(side, int(msg.frame_index), entities)
        self.count(f"{side}/entities", "processed")

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        own = self.get_fully_qualified_name()
        for status in msg.status:
            if status.name == own:
                continue
            view = node_status(status)
            if not view.counters:
                continue  # not a node's own status (e.g. the reliability node's per-group statuses)
            self.state.on_node_status(view)
            if self.recorder is not None:
                self.recorder.set_node_status(view)

    def write_summary(self) -> Path | None:
        """summary.json and sweep.png in summary_dir; returns the JSON path (None without summary_dir)."""
        if self.recorder is None:
            return None
        summary = self.recorder.summary(self.trust_config)
        path = self.summary_dir / SUMMARY_FILE
        path.write_text(json.dumps(summary, indent=1) + "\n")
        if summary["conditions"]:
            plot_summary(summary, self.summary_dir / PLOT_FILE, self.params["title"])
        return path

    def _close(self) -> None:
        try:
            self.display.close(self.state)
            path = self.write_summary()
            if path is not None:
                self.get_logger().info(f"summary written to {path}")
        except Exception as error:  # the summary must not hide the node's own shutdown
            self.get_logger().error(f"writing the summary failed: {error!r}")
            self.exit_code = 1


def main(args: list[str] | None = None) -> int:
    return run_node(DashboardNode, args)


if __name__ == "__main__":
    sys.exit(main())
