"""dashboard_node over DDS: messages reach the view and the recorder; the summary is written at stop."""
import io
import json

import pytest
from ros_testing import require_ros

require_ros()

from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402

from predrel_ros.core.entities import Entity  # noqa: E402
from predrel_ros.msg import EntityArray, PredicateArray, PredicateReliability, ReliabilityReport  # noqa: E402
from predrel_ros.predicates.estimate import PredicateEstimate  # noqa: E402
from predrel_ros.ros.kit import diagnostics  # noqa: E402
from predrel_ros.ros.kit.qos import LATCHED_QOS, STREAM_QOS  # noqa: E402
from predrel_ros.ros.kit.runtime import spin_until  # noqa: E402
from predrel_ros.ros.messages.actions import action_to_msg  # noqa: E402
from predrel_ros.ros.messages.degradations import degradation_to_msg  # noqa: E402
from predrel_ros.ros.messages.entities import entities_to_msg  # noqa: E402
from predrel_ros.ros.messages.predicates import predicates_to_msg  # noqa: E402
from predrel_ros.ros.nodes.dashboard_node import DashboardNode  # noqa: E402

pytestmark = pytest.mark.ros


def report(frame: int, severity: int, trust: int) -> ReliabilityReport:
    msg = ReliabilityReport(frame_index=frame, window=30, reference_mode="clean_twin",
                            degradation=degradation_to_msg("occlusion", severity))
    msg.groups = [PredicateReliability(predicate="contact", group="contact", prs=0.5, tpc_s=0.9, mean_confidence=0.7,
                                       samples=30, trust=trust, reason="prs 0.50 < 0.60" if trust else "")]
    return msg


#: the degraded pipeline's track ids are the clean twin's + DEGRADED_IDS (the twins track independently)
DEGRADED_IDS = 10


def predicates(frame: int, severity: int, value: str, ids: int = 0) -> PredicateArray:
    kind = "occlusion" if severity else "none"
    estimate = PredicateEstimate("contact", 1 + ids, 2 + ids, value, 1.0, frame_index=frame)
    return predicates_to_msg([estimate], frame_index=frame, source="perception",
                             degradation=degradation_to_msg(kind, severity))


def entities(frame: int, ids: int = 0) -> EntityArray:
    hand = Entity(id=1 + ids, label="hand", role="right_hand", box=[0.0, 0.0, 20.0, 20.0])
    cube = Entity(id=2 + ids, label="cube", role="manipulated_object", box=[20.0, 0.0, 40.0, 20.0])
    return entities_to_msg([hand, cube], frame_index=frame, image_width=64, image_height=48, source="perception")


def test_the_dashboard_shows_and_summarises_what_it_receives(ros_context, ros_executor, tmp_path, monkeypatch):
    screen = io.StringIO()
    monkeypatch.setattr("sys.stdout", screen)
    node = DashboardNode(context=ros_context, parameter_overrides=[
        Parameter("summary_dir", value=str(tmp_path / "out")), Parameter("display", value="lines"),
        Parameter("line_period_s", value=0.1), Parameter("title", value="dashboard test")])
    ros_executor.add_node(node)
    from rclpy.node import Node
    source = Node("dashboard_source", context=ros_context)
    ros_executor.add_node(source)
    from predrel_ros.msg import ActionEstimate, DegradationState
    pubs = {name: source.create_publisher(kind, topic, qos) for name, kind, topic, qos in (
        ("degradation", DegradationState, "degradation", LATCHED_QOS),
        ("report", ReliabilityReport, "reliability", STREAM_QOS),
        ("action", ActionEstimate, "action", STREAM_QOS),
        ("truth", ActionEstimate, "ground_truth/action", STREAM_QOS),
        ("clean", PredicateArray, "clean/predicates", STREAM_QOS),
        ("degraded", PredicateArray, "degraded/predicates", STREAM_QOS),
        ("clean_entities", EntityArray, "clean/entities", STREAM_QOS),
        ("degraded_entities", EntityArray, "degraded/entities", STREAM_QOS),
        ("diagnostics", DiagnosticArray, "/diagnostics", 10))}
    assert spin_until(ros_executor, lambda: all(p.get_subscription_count() for p in pubs.values()), 10)
    pubs["degradation"].publish(degradation_to_msg("occlusion", 5))
    for frame in range(4):
        severity = 1 if frame < 2 else 5
        pubs["clean"].publish(predicates(frame, 0, "T"))
        pubs["clean_entities"].publish(entities(frame))
        pubs["degraded"].publish(predicates(frame, severity, "T" if severity == 1 else "N", DEGRADED_IDS))
        pubs["degraded_entities"].publish(entities(frame, DEGRADED_IDS))
        pubs["report"].publish(report(frame, severity, 0 if severity == 1 else 2))
        pubs["truth"].publish(action_to_msg(frame, ["grasp", "idle"], [1.0, 0.0]))
        action = action_to_msg(frame, ["grasp", "idle"], [0.8, 0.2], trusted=severity == 1,
                               reason="" if severity == 1 else "contact ERROR")
        pubs["action"].publish(action)
    pubs["diagnostics"].publish(DiagnosticArray(status=[diagnostics.status(
        "/degraded/perception", 1, "stale frames", {"image_raw.processed": 4, "image_raw.dropped_stale": 1,
                                                    "rate.image_raw.processed": 3.5})]))
    state = node.state
    assert spin_until(ros_executor, lambda: state.frames.get("action") == 4 and "/degraded/perception" in state.nodes
                      and state.frames.get("degraded/predicates") == 4
                      and len(node.recorder.entities["degraded"]) == len(node.recorder.entities["clean"]) == 4, 10)
    spin_until(ros_executor, lambda: False, 0.3)  # the line display prints at least once
    assert state.condition.text == "occlusion 5"
    assert state.reports["reliability"].groups["contact"].trust == "ERROR"
    assert state.nodes["/degraded/perception"].counters == {"image_raw.processed": 4, "image_raw.dropped_stale": 1}
    assert "frame 3 | occlusion 5 | reliability: contact ERROR 0.50 | action grasp 0.80 UNTRUSTED (truth grasp)" \
        in screen.getvalue()
    ros_executor.remove_node(node)
    node.destroy_node()
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    rows = {(row["kind"], row["severity"]): row for row in summary["conditions"]}
    # the twins' entities are associated, so the differently numbered streams meet
    assert rows[("occlusion", 1)]["prs"]["contact"] == 1.0 and rows[("occlusion", 5)]["prs"]["contact"] == 0.0
    assert rows[("occlusion", 1)]["agreement"]["contact"] == 1.0
    assert rows[("occlusion", 1)]["frames"] == {"degraded": 2, "matched": 2, "without_clean_twin": 0,
                                                "without_entities": 0}
    assert rows[("occlusion", 5)]["trust"]["reliability"]["contact"]["ERROR"] == 2
    assert rows[("occlusion", 1)]["action"]["accuracy_trusted"] == 1.0
    assert rows[("occlusion", 5)]["action"]["trusted_fraction"] == 0.0
    assert summary["frame_accounting"]["nodes"]["/degraded/perception"]["image_raw.dropped_stale"] == 1
    assert (tmp_path / "out" / "sweep.png").stat().st_size > 10_000


@pytest.mark.parametrize("first", [False, True], ids=["after_frames", "first"])
def test_a_frame_indexed_far_in_the_future_is_not_the_frame_shown(ros_context, ros_executor, monkeypatch, first):
    from node_graph import FAR_INDEX, PROBE_QOS, with_far_future

    from predrel_ros.ros.kit.frame_counters import OUT_OF_ORDER

    screen = io.StringIO()
    monkeypatch.setattr("sys.stdout", screen)
    node = DashboardNode(context=ros_context, parameter_overrides=[
        Parameter("display", value="lines"), Parameter("line_period_s", value=0.1)])
    ros_executor.add_node(node)
    from rclpy.node import Node
    source = Node("dashboard_source", context=ros_context)
    ros_executor.add_node(source)
    reports = source.create_publisher(ReliabilityReport, "reliability", PROBE_QOS)
    assert spin_until(ros_executor, lambda: reports.get_subscription_count() > 0, 10)
    sent, taken = with_far_future(range(10), FAR_INDEX, first)
    for index in sent:
        reports.publish(report(index, 2, 0))
    assert spin_until(ros_executor, lambda: node.counters.total("reliability") == len(sent), 10)
    assert node.state.reports["reliability"].frame_index == node.state.newest_frame == 9
    assert node.counters.get("reliability", OUT_OF_ORDER) == len(sent) - len(taken) - int(first)
    spin_until(ros_executor, lambda: False, 0.3)  # the line display prints
    assert screen.getvalue().rstrip().splitlines()[-1].startswith("frame 9 |")


def test_a_failed_start_logs_no_error_at_shutdown(ros_context, tmp_path, capfd):
    from predrel_ros.core.errors import UserError

    (tmp_path / "file").write_text("")
    node = DashboardNode.__new__(DashboardNode)
    with pytest.raises(UserError, match="summary_dir"):
        node.__init__(context=ros_context, parameter_overrides=[
            Parameter("summary_dir", value=str(tmp_path / "file" / "out")), Parameter("display", value="lines")])
    node.destroy_node()   # what rclpy does at shutdown with a node whose constructor failed
    err = capfd.readouterr().err
    assert "AttributeError" not in err and "while shutting down" not in err, err


def test_inconsistent_actions_are_refused_and_every_input_is_counted(ros_context, ros_executor, monkeypatch):
    from rclpy.node import Node

    from predrel_ros.msg import ActionEstimate, DegradationState
    from predrel_ros.ros.messages.actions import ground_truth_action_to_msg

    monkeypatch.setattr("sys.stdout", io.StringIO())
    node = DashboardNode(context=ros_context, parameter_overrides=[Parameter("display", value="lines")])
    source = Node("dashboard_hostile_source", context=ros_context)
    for n in (node, source):
        ros_executor.add_node(n)
    action = source.create_publisher(ActionEstimate, "action", STREAM_QOS)
    degradation = source.create_publisher(DegradationState, "degradation", LATCHED_QOS)
    spin_until(ros_executor, lambda: action.get_subscription_count() and degradation.get_subscription_count(), 10)
    teleport = ground_truth_action_to_msg("grasp", 1)
    teleport.primitive, teleport.probability = "teleport", 5.0
    action.publish(teleport)
    action.publish(ground_truth_action_to_msg("grasp", 2))
    for k in range(3):   # latched, depth 1: one at a time
        degradation.publish(degradation_to_msg("blur", k + 1))
        spin_until(ros_executor, lambda: node.counters.total("degradation") == k + 1, 10)
    spin_until(ros_executor, lambda: node.counters.total("action") == 2, 10)
    assert node.counters.stream("action") == {"malformed": 1, "processed": 1}
    assert node.counters.stream("degradation") == {"processed": 3}
    assert node.state.action.primitive == "grasp"
