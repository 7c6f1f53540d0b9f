"""action_node over DDS: the same primitives as ActionRecognizer run directly with the reports' trust,
untrusted under severe occlusion, no fresh report = untrusted, and 1,000 malformed messages per
input topic each counted."""
import copy
import time
from types import SimpleNamespace

import numpy as np
import pytest
from ros_testing import require_ros

require_ros()

from node_graph import (  # noqa: E402
    FAR_INDEX,
    PROBE_QOS,
    Probe,
    assert_memory_bounded,
    fuzz,
    resident_bytes,
    run_until,
    with_far_future,
)
from rclpy.parameter import Parameter  # noqa: E402
from rclpy.serialization import deserialize_message, serialize_message  # noqa: E402
from reliability_scenarios import occlusion_run, oracle_profile  # noqa: E402

from predrel_ros.action import ActionConfig, ActionRecognizer, PrimitiveModel  # noqa: E402
from predrel_ros.action.model import DEFAULT_MODEL, NO_CONFIDENCE_MODEL  # noqa: E402
from predrel_ros.core.errors import UserError  # noqa: E402
from predrel_ros.core.package_files import config_file  # noqa: E402
from predrel_ros.msg import ActionEstimate, PredicateArray, ReliabilityReport  # noqa: E402
from predrel_ros.predicates import PredicateExtractor  # noqa: E402
from predrel_ros.reliability.monitor import MonitorConfig, ReliabilityMonitor  # noqa: E402
from predrel_ros.ros.kit.frame_counters import MALFORMED, OUT_OF_ORDER, PROCESSED  # noqa: E402
from predrel_ros.ros.kit.frame_order import RESTARTS  # noqa: E402
from predrel_ros.ros.messages.degradations import degradation_to_msg  # noqa: E402
from predrel_ros.ros.messages.predicates import predicates_from_msg, predicates_to_msg  # noqa: E402
from predrel_ros.ros.messages.reliability import reliability_report_from_msg, reliability_report_to_msg  # noqa: E402
from predrel_ros.ros.nodes.action_node import PREDICATES, RELIABILITY, UNTRUSTED, ActionNode, model_file  # noqa: E402
from predrel_ros.sources.dataset import open_dataset  # noqa: E402

pytestmark = pytest.mark.ros


def delivered(msg):
    return deserialize_message(serialize_message(msg), type(msg))


@pytest.fixture(scope="module")
def scenario(controlled_dataset):
    """(degraded PredicateArray, ReliabilityReport after that frame) per frame of the stack episode looped
    5 times, the middle loop under severe occlusion; reports from the clean twin with a clean profile."""
    episodes = open_dataset(controlled_dataset).episodes()
    monitor = ReliabilityMonitor(MonitorConfig(reference_mode="clean_twin", window=30),
                                 profile=oracle_profile(episodes[1:]))
    clean_extractor, degraded_extractor = PredicateExtractor(), PredicateExtractor()
    frames = []
    for frame in occlusion_run(episodes[0], loops=5, occluded=(2,), severity=5):
        clean = clean_extractor.update(frame.frame_index, frame.clean)
        degraded = degraded_extractor.update(frame.frame_index, frame.degraded)
        monitor.add_reference(frame.frame_index, clean)
        monitor.add_reference_entities(frame.frame_index, frame.clean)
        monitor.add_evaluated_entities(frame.frame_index, frame.degraded)
        monitor.add_evaluated(frame.frame_index, degraded, frame.kind, frame.severity)
        frames.append((predicates_to_msg(degraded, frame_index=frame.frame_index, source="perception",
                                         degradation=degradation_to_msg(frame.kind,
                                                                        frame.severity)),
                       reliability_report_to_msg(monitor.report(streams=False))))
    return frames, len(episodes[0])


def start(ros_context, ros_executor, **params):
    node = ActionNode(context=ros_context, parameter_overrides=[Parameter(k, value=v) for k, v in params.items()])
    probe = Probe(ros_context)
    actions = probe.watch(ActionEstimate, "action")
    publishers = {"predicates": probe.node.create_publisher(PredicateArray, "predicates", PROBE_QOS),
                  "reliability": probe.node.create_publisher(ReliabilityReport, "reliability", PROBE_QOS)}
    ros_executor.add_node(node)
    ros_executor.add_node(probe.node)
    needed = [publishers["predicates"]] + ([publishers["reliability"]] if params.get("use_reliability", True) else [])
    run_until(ros_executor, lambda: all(p.get_subscription_count() > 0 for p in needed) and
              node.action_publisher.get_subscription_count() > 0, 10, "discovery")
    return node, publishers, actions


def recognizer():
    return ActionRecognizer(PrimitiveModel.load(), ActionConfig.load(config_file("action.yaml"), section="action"))


def test_output_equals_the_recognizer_with_the_reports_trust(ros_context, ros_executor, scenario):
    frames, n = scenario
    node, publishers, actions = start(ros_context, ros_executor)
    expected_recognizer = recognizer()
    for i, (predicates, _report) in enumerate(frames):
        if i:                                        # the report of the previous frame comes first
            publishers["reliability"].publish(frames[i - 1][1])
            run_until(ros_executor, lambda: node.counters.total(RELIABILITY) == i, 5, f"report {i - 1}")
        publishers["predicates"].publish(predicates)
        run_until(ros_executor, lambda: len(actions) == i + 1, 5, f"action {i}")
    trusted = {}
    for i, ((predicates, _), action) in enumerate(zip(frames, actions)):
        trust = reliability_report_from_msg(delivered(frames[i - 1][1])).trust() if i else None
        expected = expected_recognizer.update(predicates.frame_index,
                                              predicates_from_msg(delivered(predicates)), trust)
        assert action.frame_index == predicates.frame_index
        assert action.primitive == expected.primitive and list(action.class_names) == list(expected.class_names)
        np.testing.assert_allclose(action.probabilities, expected.probabilities, atol=1e-6)
        if i == 0:
            assert not action.trusted and action.reason.startswith("no reliability report received")
        else:
            assert (action.trusted, action.reason) == (expected.trusted, expected.reason)
        trusted.setdefault(i // n, []).append(action.trusted)
    share = {loop: np.mean(values) for loop, values in trusted.items()}
    # the occluded loop: mostly untrusted once the 30-frame window holds mostly occluded frames (the
    # trust judges the agreement with the clean twin over the window, so it falls over some frames)
    occluded_late = np.mean(trusted[2][n // 2:])
    assert occluded_late < 0.5 < share[1] and share[2] < share[1] and share[4] > 0.8, (occluded_late, share)
    assert any("relies on" in a.reason and "ERROR" in a.reason for a in actions[2 * n:3 * n])
    assert node.counters.stream(PREDICATES) == {PROCESSED: len(frames)}
    assert node.counters.get(None, UNTRUSTED) == sum(not a.trusted for a in actions)


def test_without_a_fresh_report_every_estimate_is_untrusted(ros_context, ros_executor, scenario):
    frames, n = scenario
    node, publishers, actions = start(ros_context, ros_executor, reliability_timeout_s=0.2)
    publishers["reliability"].publish(frames[0][1])
    run_until(ros_executor, lambda: node.counters.total(RELIABILITY) == 1, 5, "the report")
    publishers["predicates"].publish(frames[1][0])
    run_until(ros_executor, lambda: len(actions) == 1, 5, "the first action")
    time.sleep(0.3)                                  # the report gets older than reliability_timeout_s
    publishers["predicates"].publish(frames[2][0])
    run_until(ros_executor, lambda: len(actions) == 2, 5, "the second action")
    assert "no reliability report" not in actions[0].reason
    assert not actions[1].trusted and actions[1].reason.startswith("no reliability report for")


def test_probability_gate_only_without_reliability_and_bad_parameters(ros_context, ros_executor, scenario, tmp_path):
    frames, _ = scenario
    node, publishers, actions = start(ros_context, ros_executor, use_reliability=False, use_confidence=False,
                                      model=str(DEFAULT_MODEL))   # the ablation on the model trained with them
    for predicates, _ in frames[:20]:
        publishers["predicates"].publish(predicates)
    run_until(ros_executor, lambda: len(actions) == 20, 5, "actions")
    assert all(a.trusted == (a.probability >= 0.5) for a in actions)
    assert all("reliability" not in a.reason for a in actions)
    assert not node.recognizer.model.confidence_weighted
    config = ActionConfig()
    assert model_file("", config, "action.yaml", True) == DEFAULT_MODEL
    assert model_file("", config, "action.yaml", False) == NO_CONFIDENCE_MODEL
    assert model_file(str(DEFAULT_MODEL), config, "action.yaml", False) == DEFAULT_MODEL
    with pytest.raises(UserError, match=r"config \(mine.yaml: action.model\): config/x.json was not found"):
        model_file("", ActionConfig(model="x.json"), "mine.yaml", True)
    with pytest.raises(UserError, match="parameter model: .*nope.json is not a file"):
        ActionNode(context=ros_context, parameter_overrides=[Parameter("model", value="/nope.json")])
    bad = tmp_path / "action.yaml"
    bad.write_text("action:\n  min_probability: 2\n")
    with pytest.raises(UserError, match="min_probability"):
        ActionNode(context=ros_context, parameter_overrides=[Parameter("config", value=str(bad))])


def malformed_predicates(template, count, first_index):
    def unknown_value(msg):
        msg.predicates[0].value = "sometimes"

    def confidence_below_zero(msg):
        msg.predicates[0].confidence = -0.2

    def code_mismatch(msg):
        msg.predicates[0].code = 9

    def unknown_name(msg):
        msg.predicates[1].name = "hover"

    kinds = [unknown_value, confidence_below_zero, code_mismatch, unknown_name]
    for i in range(count):
        msg = copy.deepcopy(template)
        msg.frame_index = first_index + i
        kinds[i % len(kinds)](msg)
        yield msg


def malformed_reports(template, count, first_index):
    def trust_code(msg):
        msg.groups[0].trust = 9

    def unknown_group(msg):
        msg.groups[0].group = "kinematic"

    def predicate_outside_its_group(msg):
        msg.predicates[0].predicate = "grasp"

    def unknown_predicate(msg):
        msg.predicates[0].predicate = "hover"

    def severity(msg):
        msg.degradation.severity = 11

    def parameter_lists(msg):
        msg.degradation.parameter_values = [1.0, 2.0]

    kinds = [trust_code, unknown_group, predicate_outside_its_group, unknown_predicate, severity, parameter_lists]
    for i in range(count):
        msg = copy.deepcopy(template)
        msg.frame_index = first_index + i
        kinds[i % len(kinds)](msg)
        yield msg


@pytest.mark.parametrize("topic", ["predicates", "reliability"])
def test_fuzz_every_malformed_message_is_counted_and_the_node_lives(ros_context, ros_executor, scenario, topic):
    frames, _ = scenario
    node, publishers, actions = start(ros_context, ros_executor, restart_after=0)
    predicates, report = (copy.deepcopy(msg) for msg in frames[40])
    predicates.frame_index = report.frame_index = 5000
    assert report.predicates[0].predicate == "contact" and report.groups[0].predicate == "contact"
    publishers["reliability"].publish(report)
    run_until(ros_executor, lambda: node.counters.total(RELIABILITY) == 1, 5, "the first report")
    publishers["predicates"].publish(predicates)
    run_until(ros_executor, lambda: len(actions) == 1, 5, "the first action")
    stream = PREDICATES if topic == "predicates" else RELIABILITY
    counted = lambda: node.counters.total(stream)  # noqa: E731
    if topic == "predicates":
        bad = list(malformed_predicates(predicates, 900, 10_000))
        old = [PredicateArray(frame_index=i, predicates=list(predicates.predicates)) for i in range(100)]
    else:
        bad = list(malformed_reports(report, 900, 10_000))
        old = [ReliabilityReport(frame_index=i) for i in range(100)]
    before = resident_bytes()
    assert fuzz(ros_executor, publishers[topic], bad, counted, burst=20) + \
        fuzz(ros_executor, publishers[topic], old, counted, burst=20) == 1000
    assert_memory_bounded(before, f"action node, 1000 malformed or stale messages on {topic}")
    later = copy.deepcopy(predicates)
    later.frame_index = 20_000
    publishers["predicates"].publish(later)
    run_until(ros_executor, lambda: len(actions) == 2, 5, "an action after the fuzz")
    assert node.counters.stream(stream) == {PROCESSED: 1 if topic == "reliability" else 2, MALFORMED: 900,
                                            OUT_OF_ORDER: 100}
    assert [a.frame_index for a in actions] == [predicates.frame_index, 20_000]


@pytest.mark.parametrize("first", [False, True], ids=["after_frames", "first"])
def test_a_frame_indexed_far_in_the_future_blocks_neither_stream(ros_context, ros_executor, scenario, first):
    frames, _ = scenario
    node, publishers, actions = start(ros_context, ros_executor)
    sent, taken = with_far_future(range(10), FAR_INDEX, first)
    for k, index in enumerate(sent):
        predicates, report = (copy.deepcopy(msg) for msg in frames[40 + k])
        predicates.frame_index = report.frame_index = index
        publishers["reliability"].publish(report)
        publishers["predicates"].publish(predicates)
    expected = ([FAR_INDEX] if first else []) + taken        # a far first frame has nothing to be judged by
    run_until(ros_executor, lambda: len(actions) == len(expected) and node.counters.total(PREDICATES) ==
              node.counters.total(RELIABILITY) == len(sent), 10, "every frame counted")
    assert [a.frame_index for a in actions] == expected
    assert node.report.frame_index == 9 and node.order.last == 9
    for stream in (PREDICATES, RELIABILITY):
        assert node.counters.get(stream, OUT_OF_ORDER) == len(sent) - len(expected)
        assert node.counters.get(stream, RESTARTS) == int(first)


def test_restarts_of_the_report_stream_are_counted_and_logged_rate_limited(ros_context, ros_executor):
    """Issue 15: a report numbered 2**64-1, then reports whose numbering keeps starting over."""
    node, publishers, _ = start(ros_context, ros_executor)
    warnings = []
    logger = node.get_logger()
    node.get_logger = lambda: SimpleNamespace(warning=warnings.append, error=logger.error, info=logger.info)
    reports = [ReliabilityReport(frame_index=FAR_INDEX)] + [ReliabilityReport(frame_index=i) for i in range(10)] * 10
    assert fuzz(ros_executor, publishers["reliability"], reports, lambda: node.counters.total(RELIABILITY),
                burst=20) == len(reports)
    assert node.counters.stream(RELIABILITY) == {PROCESSED: 1 + 10 * 6, OUT_OF_ORDER: 10 * 4, RESTARTS: 10}
    assert node.report.frame_index == 9
    restart_lines = [text for text in warnings if "restarted" in text]
    assert 1 <= len(restart_lines) <= 2, warnings     # at most one per 5 s, saying how many were held back


def test_a_new_config_or_model_at_runtime_loads_the_recognizer_anew_and_a_broken_one_is_refused(
        ros_context, ros_executor, scenario, tmp_path):
    """SetParameters over DDS: a config with another min_probability gives, from the next frame, what a
    fresh recognizer of it gives; a model file that does not exist is refused and changes nothing."""
    import dataclasses

    from node_graph import set_parameters

    from predrel_ros.core.config_io import write_data

    frames, _ = scenario
    node, publishers, actions = start(ros_context, ros_executor, use_reliability=False)
    probe = Probe(ros_context, name="setter")
    ros_executor.add_node(probe.node)
    tuned = dataclasses.replace(ActionConfig.load(config_file("action.yaml"), section="action"), min_probability=0.9)
    path = write_data(tmp_path / "strict.yaml", {"action": tuned.to_dict()})
    for k, (predicates, _) in enumerate(frames[:5]):
        publishers["predicates"].publish(predicates)
        run_until(ros_executor, lambda: len(actions) == k + 1, 5, f"action {k}")
    before = node.recognizer
    refused, = set_parameters(ros_executor, probe, "/action", {"model": str(tmp_path / "missing.json")})
    assert not refused.successful and "missing.json" in refused.reason and node.recognizer is before
    accepted, = set_parameters(ros_executor, probe, "/action", {"config": str(path)})
    assert accepted.successful and node.recognizer.config.min_probability == 0.9
    fresh = ActionRecognizer(PrimitiveModel.load(), tuned)
    for k, (predicates, _) in enumerate(frames[5:40], start=5):
        publishers["predicates"].publish(predicates)
        run_until(ros_executor, lambda: len(actions) == k + 1, 5, f"action {k}")
        expected = fresh.update(predicates.frame_index, predicates_from_msg(delivered(predicates)), None)
        assert (actions[k].primitive, actions[k].trusted, actions[k].reason) == (
            expected.primitive, expected.trusted, expected.reason)
    assert any("probability" in a.reason for a in actions[5:])            # the stricter gate shows
