"""Measurement probes of `predrel bench nodes` and `predrel bench predicate-nodes`: real nodes built
in this process on a context of their own (one SingleThreadedExecutor, real DDS), their callbacks
and publishers timed. Each probe returns raw durations in seconds; the benchmarks
(tools/benchmarks/nodes.py, predicate_nodes.py) summarise them against their baselines.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

#: the reliability node's callbacks of one frame in clean_twin mode with association
RELIABILITY_CALLBACKS = ("_on_predicates", "_on_reference", "_on_entities", "_on_reference_entities")


@dataclass
class ReplayPerceptionTimes:
    """One schedule's pass of `time_replay_and_perception`: seconds per frame."""
    frames_published: int
    entity_arrays: int
    replay_frame: list[float]        # the replay node's publishing of a frame (both twins + ground truth)
    inference: list[float]           # Perceiver.process inside the perception node
    worker: list[float]              # the perception worker's whole step (inference included)
    receive_to_publish: list[float]  # frame received -> EntityArray published (inference included)


def time_replay_and_perception(bag: Path, model_dir: Path, schedules: list[str], frames: int, width: int,
                               height: int) -> tuple[list[float], list[ReplayPerceptionTimes]]:
    """In one context: the baseline (seconds of a bare width x height rgb8 `numpy_to_image` +
    `publish` to one subscriber), then per schedule a replay node playing `bag` paced by a degraded
    perception node with model `model_dir`, every twin image subscribed to."""
    from predrel_ros.ros.kit.runtime import fresh_context

    with fresh_context() as (context, executor):
        baseline = _bare_image_publish(context, executor, width, height)
        return baseline, [_replay_and_perception(context, executor, bag, model_dir, schedule, frames)
                          for schedule in schedules]


def _bare_image_publish(context, executor, width: int, height: int, repeats: int = 200) -> list[float]:
    import numpy as np
    import rclpy
    from sensor_msgs.msg import Image

    from predrel_ros.ros.kit.qos import image_qos
    from predrel_ros.ros.kit.runtime import spin_until
    from predrel_ros.ros.messages.fields import header_at
    from predrel_ros.ros.messages.images import numpy_to_image

    node = rclpy.create_node("bare_publish", context=context)
    qos = image_qos("reliable", 50)
    publisher = node.create_publisher(Image, "bare", qos)
    received = []
    node.create_subscription(Image, "bare", received.append, qos)
    executor.add_node(node)
    spin_until(executor, lambda: publisher.get_subscription_count() > 0, 10)
    rgb = np.random.default_rng(1).integers(0, 256, (height, width, 3), dtype=np.uint8)
    header = header_at(1, "cam")
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        publisher.publish(numpy_to_image(rgb, "rgb8", header))
        seconds.append(time.perf_counter() - start)
        executor.spin_once(timeout_sec=0.01)
    executor.remove_node(node)
    node.destroy_node()
    return seconds


def _replay_and_perception(context, executor, bag: Path, model_dir: Path, schedule: str,
                           frames: int) -> ReplayPerceptionTimes:
    import rclpy
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import Image

    from predrel_ros.msg import EntityArray
    from predrel_ros.ros.kit.runtime import spin_until
    from predrel_ros.ros.nodes.perception_node import PerceptionNode
    from predrel_ros.ros.nodes.replay_node import ReplayNode

    def params(**values):
        return [Parameter(k, value=v) for k, v in values.items()]
    perception = PerceptionNode(context=context, namespace="degraded", parameter_overrides=params(
        model_path=str(model_dir), use_depth=True, image_qos="reliable"))
    executor.add_node(perception)   # a managed node: configured and activated once spun (autostart)
    spin_until(executor, lambda: perception.lifecycle_state == "active" or perception.last_transition_error, 60)
    if perception.lifecycle_state != "active":
        raise RuntimeError(f"the perception node did not become active: {perception.last_transition_error}")
    process, inference, worker = perception.perceiver.process, [], []

    def timed_process(*args, **kwargs):
        start = time.perf_counter()
        try:
            return process(*args, **kwargs)
        finally:
            inference.append(time.perf_counter() - start)
    perception.perceiver.process = timed_process
    node_process = perception._process

    def timed_worker(item):
        start = time.perf_counter()
        node_process(item)
        worker.append(time.perf_counter() - start)
    perception.worker._process = timed_worker
    latency: list[float] = []
    publish = perception.entities_publisher.publish

    def stamped_publish(msg):
        publish(msg)
        latency.append(time.monotonic())
    perception.entities_publisher.publish = stamped_publish
    received_at: dict[int, float] = {}
    on_frame = perception.inputs._on_frame

    def note_received(frame):
        received_at[frame.stamp_ns] = frame.received
        on_frame(frame)
    perception.inputs._on_frame = note_received

    sink = rclpy.create_node("sink", context=context)
    for topic in ("clean/image_raw", "clean/depth/image_raw", "degraded/image_raw", "degraded/depth/image_raw"):
        sink.create_subscription(Image, topic, lambda msg: None, 10)
    entities = []
    sink.create_subscription(EntityArray, "degraded/entities", entities.append, 50)
    replay = ReplayNode(context=context, parameter_overrides=params(
        source=str(bag), rate=0.0, pace_topic="degraded/entities", pace_type="entities", schedule=schedule,
        shutdown_when_done=True, wait_for_subscribers=1, image_qos="reliable", image_qos_depth=10))
    replay_seconds: list[float] = []
    replay_publish = replay._publish

    def timed_publish(item):
        start = time.perf_counter()
        try:
            return replay_publish(item)
        finally:
            replay_seconds.append(time.perf_counter() - start)
    replay._publish = timed_publish
    nodes = (perception, sink, replay)
    for node in nodes:
        executor.add_node(node)
    try:
        spin_until(executor, lambda: replay.exit_code is not None, 60 + frames)
        spin_until(executor, lambda: len(entities) >= frames, 10)
    finally:
        for node in nodes:
            executor.remove_node(node)
            node.destroy_node()
    stamps = [m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for m in entities]
    receive_to_publish = [done - received_at[stamp] for stamp, done in zip(stamps, latency, strict=False)
                          if stamp in received_at]
    return ReplayPerceptionTimes(replay.next_index, len(entities), replay_seconds, inference, worker,
                                 receive_to_publish)


def _timed(cls, name: str, methods: tuple[str, ...], times: dict[str, list[float]]):
    """A subclass of node class `cls` whose callbacks `methods` add their durations to times[name]
    (per frame: the durations of one frame's callbacks are summed by the caller)."""
    def wrap(method_name):
        method = getattr(cls, method_name)

        def timed(self, msg):
            start = time.perf_counter()
            try:
                return method(self, msg)
            finally:
                times[name].append(time.perf_counter() - start)
        return timed
    return type(f"Timed{cls.__name__}", (cls,), {m: wrap(m) for m in methods})


def time_predicate_nodes(scene, width: int, height: int, window: int) -> tuple[dict[str, list[float]], dict]:
    """Per frame of `scene` ((clean entities, occluded entities, clean predicates) per frame), the
    seconds of the callbacks of a predicate node fed the occluded entities, a reliability node in
    clean_twin mode (window `window`; the clean predicates and entities are its reference, summed
    over the frame's four callbacks) and an action node, under "predicates", "reliability" and
    "action"; each frame is sent after the previous frame's action came out. Also the counts of
    actions, reports and the last report's entries."""
    import rclpy
    from rclpy.parameter import Parameter

    from predrel_ros.msg import ActionEstimate, EntityArray, PredicateArray, ReliabilityReport
    from predrel_ros.ros.kit.qos import STREAM_QOS
    from predrel_ros.ros.kit.runtime import fresh_context, spin_until
    from predrel_ros.ros.messages.entities import entities_to_msg
    from predrel_ros.ros.messages.predicates import predicates_to_msg
    from predrel_ros.ros.nodes.action_node import ActionNode
    from predrel_ros.ros.nodes.predicate_node import PredicateNode
    from predrel_ros.ros.nodes.reliability_node import ReliabilityNode

    times: dict[str, list[float]] = {"predicates": [], "reliability": [], "action": []}
    with fresh_context() as (context, executor):
        nodes = []
        try:
            predicates = _timed(PredicateNode, "predicates", ("_on_entities",), times)(context=context)
            reliability = _timed(ReliabilityNode, "reliability", RELIABILITY_CALLBACKS, times)(
                context=context, parameter_overrides=[Parameter("reference_mode", value="clean_twin"),
                                                      Parameter("window", value=window)])
            action = _timed(ActionNode, "action", ("_on_predicates",), times)(context=context)
            sink = rclpy.create_node("sink", context=context)
            actions, reports = [], []
            sink.create_subscription(ActionEstimate, "action", actions.append, STREAM_QOS)
            sink.create_subscription(ReliabilityReport, "reliability", reports.append, STREAM_QOS)
            entities_pub = sink.create_publisher(EntityArray, "entities", STREAM_QOS)
            reference_pub = sink.create_publisher(PredicateArray, "reference", STREAM_QOS)
            reference_entities_pub = sink.create_publisher(EntityArray, "reference_entities", STREAM_QOS)
            nodes = [predicates, reliability, action, sink]
            for node in nodes:
                executor.add_node(node)
            # every subscription matched before the first frame: entities go to the predicate and the
            # reliability node, predicates to the reliability and the action node
            spin_until(executor, lambda: entities_pub.get_subscription_count() >= 2
                       and reference_pub.get_subscription_count() and reference_entities_pub.get_subscription_count()
                       and predicates.predicates_publisher.get_subscription_count() >= 2, 10)
            for t, (entities, occluded, clean) in enumerate(scene):
                reference_pub.publish(predicates_to_msg(clean, frame_index=t, source="clean"))
                reference_entities_pub.publish(entities_to_msg(
                    entities, frame_index=t, image_width=width, image_height=height, source="clean"))
                spin_until(executor, lambda: _reference_waiting(reliability.monitor.snapshot_counters()), 5)
                entities_pub.publish(entities_to_msg(occluded, frame_index=t, image_width=width,
                                                                 image_height=height, source="perception"))
                spin_until(executor, lambda t=t: len(actions) > t and len(reports) > t, 5)
            counts = {"actions": len(actions), "reports": len(reports),
                      "report_entries_last_frame": len(reports[-1].predicates) + len(reports[-1].groups)}
        finally:
            for node in nodes:
                executor.remove_node(node)
                node.destroy_node()
    frames = len(scene)
    # the reliability node runs four callbacks per frame (one per part): sum them
    parts = len(RELIABILITY_CALLBACKS)
    calls = times["reliability"]
    times["reliability"] = [sum(calls[i:i + parts]) for i in range(0, parts * frames, parts)]
    return times, counts


def _reference_waiting(counters: dict) -> bool:
    """Both reference parts of the frame have reached the reliability node."""
    return counters["pending_reference"] >= 1 and counters["pending_reference_entities"] >= 1
