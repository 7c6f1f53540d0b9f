"""Malformed messages on each input topic of the replay, degrade, perception and dashboard nodes,
the camera nodes with raw and with compressed transports (100 per topic in `make test`, 1,000
under `slow`; the predicate, reliability and action nodes' fuzz tests are in their own test
modules): the nodes stay alive, count every one, their resident memory grows under 50 MB, and they
still process a good frame afterwards."""
import itertools
import math

import numpy as np
import pytest
from ros_testing import require_ros

require_ros()

from node_graph import (  # noqa: E402
    PROBE_QOS,
    Probe,
    activated,
    assert_memory_bounded,
    frames_to_recover,
    fuzz,
    resident_bytes,
    run_until,
    scene_model,
)
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import CameraInfo, Image  # noqa: E402

from predrel_ros.core.frame import CameraIntrinsics  # noqa: E402
from predrel_ros.msg import DegradationState, EntityArray, FrameInfo, PredicateArray  # noqa: E402
from predrel_ros.msg import Entity as EntityMsg  # noqa: E402
from predrel_ros.ros.kit.frame_counters import FAILED, MALFORMED, OUT_OF_ORDER, PROCESSED  # noqa: E402
from predrel_ros.ros.messages.camera_info import intrinsics_to_camera_info  # noqa: E402
from predrel_ros.ros.messages.degradations import degradation_to_msg  # noqa: E402
from predrel_ros.ros.messages.fields import header_at  # noqa: E402
from predrel_ros.ros.messages.frame_info import frame_info_to_msg  # noqa: E402
from predrel_ros.ros.messages.images import numpy_to_image  # noqa: E402
from predrel_ros.ros.nodes.degrade_node import CAMERA, DegradeNode  # noqa: E402
from predrel_ros.ros.nodes.perception_node import FRAMES, PerceptionNode  # noqa: E402
from predrel_ros.ros.nodes.replay_node import ReplayNode  # noqa: E402

pytestmark = pytest.mark.ros

W, H = 32, 24
CAMERA_MODEL = CameraIntrinsics(W, H, 30.0, 30.0, 16.0, 12.0, frame_id="cam")


@pytest.fixture(params=[pytest.param(100, id="100"), pytest.param(1000, id="1000", marks=pytest.mark.slow)])
def per_topic(request) -> int:
    """Malformed messages per input topic."""
    return request.param


def header(k: int):
    return header_at(10**9 + k * 10**6, "cam")


def bad_images(stamp):
    good = np.zeros((H, W, 3), np.uint8).tobytes()
    yield Image(header=stamp, width=W, height=H, encoding="yuv422", step=W * 2, data=good[: W * H * 2])
    yield Image(header=stamp, width=W, height=H, encoding="rgb8", step=W * 3, data=good[:-7])          # short
    yield Image(header=stamp, width=W, height=H, encoding="rgb8", step=W, data=good[: W * H])          # step
    yield Image(header=stamp, width=W, height=H, encoding="32FC1", step=W * 4, data=good + good[: W * H])
    yield Image(header=stamp, width=0, height=0, encoding="rgb8", step=0, data=b"")                    # empty
    line = bytes(2000 * 3)
    yield Image(header=stamp, width=2000, height=1, encoding="rgb8", step=2000 * 3, data=line)        # degenerate
    yield Image(header=stamp, width=1, height=2000, encoding="rgb8", step=3, data=line)


def bad_depths(stamp):
    data = np.ones((H, W), np.float32).tobytes()
    yield Image(header=stamp, width=W, height=H, encoding="rgb8", step=W * 3, data=data[: W * H * 3])
    yield Image(header=stamp, width=W, height=H, encoding="32FC1", step=W * 4, data=data[:-4])
    yield Image(header=stamp, width=W, height=H, encoding="16UC1", step=W, data=data[: W * H])
    yield Image(header=stamp, width=W, height=H, encoding="depth", step=W * 4, data=data)


def bad_camera_infos(stamp):
    for k in ([math.nan] + [0.0] * 8, [0.0] * 9, [math.inf, 0, 16, 0, 30, 12, 0, 0, 1]):
        info = intrinsics_to_camera_info(CAMERA_MODEL, stamp)
        info.k = k
        yield info
    info = intrinsics_to_camera_info(CAMERA_MODEL, stamp)
    info.width = info.height = 0
    yield info


def bad_frame_infos(stamp):
    good = degradation_to_msg("blur", 2)
    yield frame_info_to_msg(stamp, 1, "fuzz", "deliver", 1, good)  # out of order (stamp too old)
    msg = frame_info_to_msg(stamp, 1, "fuzz", "deliver", 1, good)
    msg.action = "teleport"
    yield msg
    for kind, severity in (("rain", 2), ("blur", 9), ("none", 3)):
        yield frame_info_to_msg(stamp, 1, "fuzz", "deliver", 1, DegradationState(
            kind=kind, severity=severity))
    yield frame_info_to_msg(stamp, 1, "fuzz", "deliver", 1, DegradationState(
        kind="blur", severity=1, parameter_names=["sigma", "extra"], parameter_values=[1.0]))


def bad_entities(stamp):
    entity = EntityMsg(id=1, label="cube", role="manipulated_object")
    entity.box = np.array([math.nan, 0, 10, 10], np.float32)
    yield EntityArray(header=stamp, entities=[entity])
    entity = EntityMsg(id=2, label="cube", role="manipulated_object")
    entity.box = np.array([0, math.inf, 10, 10], np.float32)
    yield EntityArray(header=stamp, entities=[entity])


def cycle(generator, n):
    """n messages cycling through the generator's kinds of bad input (stamps 1 ms apart)."""
    kinds = list(generator(header(0)))
    return [next(itertools.islice(generator(header(k)), k % len(kinds), None)) for k in range(n)]


def rejected(node, stream):
    return lambda: node.counters.get(stream, MALFORMED) + node.counters.get(stream, OUT_OF_ORDER)


def publish_good_frame(publishers, k):
    stamp = header(k)
    publishers["camera_info"].publish(intrinsics_to_camera_info(CAMERA_MODEL, stamp))
    publishers["depth/image_raw"].publish(numpy_to_image(np.ones((H, W), np.float32), "32FC1", stamp))
    publishers["image_raw"].publish(numpy_to_image(np.zeros((H, W, 3), np.uint8), "rgb8", stamp))


def assert_nothing_failed(node):
    assert not [key for key in node.counters.snapshot() if key.endswith(FAILED)], node.counters.snapshot()


def camera_publishers(probe, extra=()):
    topics = [("image_raw", Image), ("depth/image_raw", Image), ("camera_info", CameraInfo), *extra]
    return {topic: probe.node.create_publisher(msg_type, topic, PROBE_QOS) for topic, msg_type in topics}


def fuzz_camera_topics(executor, node, publishers, topics, per_topic, what, good_frame=None, processed=None):
    """Each (topic, generator, burst) of `topics`: per_topic malformed messages, every one counted
    rejected, and the resident memory bounded over them all; with `good_frame(k)` (publishes a good
    camera frame, stamps growing with k) and `processed()`, a good frame is processed within
    FUZZ_RECOVERY_FRAMES after each topic's burst."""
    bursts = [(topic, cycle(generator, per_topic), burst) for topic, generator, burst in topics]
    before = resident_bytes()
    for number, (topic, messages, burst) in enumerate(bursts):
        assert fuzz(executor, publishers[topic], messages, rejected(node, topic), burst=burst) == per_topic
        assert rejected(node, topic)() == per_topic, topic
        if good_frame is not None:
            frames_to_recover(executor, lambda n, base=10_000 * (number + 1): good_frame(base + n), processed,
                              f"{what} after {per_topic} malformed on {topic}")
    assert_memory_bounded(before, f"{what}, {per_topic} malformed messages on each of {len(topics)} topics")


def test_perception_node_survives_and_counts_malformed_input(ros_context, ros_executor, tmp_path, per_topic):
    node = PerceptionNode(context=ros_context, parameter_overrides=[
        Parameter("model_path", value=str(scene_model(tmp_path / "model"))), Parameter("use_depth", value=True),
        Parameter("image_qos", value="reliable")])
    activated(node, ros_executor)
    probe = Probe(ros_context)
    publishers = camera_publishers(probe, [("frame_info", FrameInfo)])
    for n in (node, probe.node):
        ros_executor.add_node(n)
    run_until(ros_executor, lambda: all(p.get_subscription_count() for p in publishers.values()), 10, "the node")
    # a valid dropped frame far ahead, so that the FrameInfos below come out of order where intended
    publishers["frame_info"].publish(frame_info_to_msg(
        header(10**6), 0, "fuzz", "drop", 0, degradation_to_msg("frame_drop", 5)))
    run_until(ros_executor, lambda: node.counters.get(FRAMES, "dropped_by_degradation") == 1, 5, "the FrameInfo")
    indices = itertools.count(1)

    def good_frame(k):
        """A good frame with its FrameInfo, after the far-ahead one (stamps from 10**6 ms on)."""
        index = next(indices)
        publishers["frame_info"].publish(frame_info_to_msg(
            header(10**6 + k), index, "fuzz", "deliver", index, degradation_to_msg("none", 0)))
        publish_good_frame(publishers, 10**6 + k)
    fuzz_camera_topics(ros_executor, node, publishers, [
        ("image_raw", bad_images, 2), ("depth/image_raw", bad_depths, 2), ("camera_info", bad_camera_infos, 2),
        ("frame_info", bad_frame_infos, 20)], per_topic, "perception node", good_frame,
        lambda: node.counters.get(FRAMES, PROCESSED))
    assert node.counters.get("frame_info", OUT_OF_ORDER) == per_topic // 6 + 1
    assert_nothing_failed(node)


def test_degrade_node_survives_and_counts_malformed_input(ros_context, ros_executor, per_topic):
    node = DegradeNode(context=ros_context, parameter_overrides=[
        Parameter("use_depth", value=True), Parameter("image_qos", value="reliable"),
        Parameter("schedule", value="occlusion:3")])
    probe = Probe(ros_context)
    publishers = camera_publishers(probe, [("clean/entities", EntityArray)])
    infos = probe.watch(FrameInfo, "degraded/frame_info")
    for n in (node, probe.node):
        ros_executor.add_node(n)
    run_until(ros_executor, lambda: all(p.get_subscription_count() for p in publishers.values()), 10, "the node")
    fuzz_camera_topics(ros_executor, node, publishers, [
        ("image_raw", bad_images, 2), ("depth/image_raw", bad_depths, 2), ("camera_info", bad_camera_infos, 2),
        ("clean/entities", bad_entities, 20)], per_topic, "degrade node",
        lambda k: publish_good_frame(publishers, k), lambda: node.counters.get(CAMERA, PROCESSED))
    assert node.counters.get(CAMERA, MALFORMED) == per_topic  # each bad image is also a lost camera frame
    recovered = node.counters.get(CAMERA, PROCESSED)
    good = EntityArray(header=header(0), image_width=W, image_height=H,
                       entities=[EntityMsg(id=1, label="cube", role="manipulated_object")])
    assert fuzz(ros_executor, publishers["clean/entities"], [good] * 20,
                lambda: node.counters.get("clean/entities", PROCESSED), burst=20) == 20  # valid ones counted too
    assert_nothing_failed(node)
    publish_good_frame(publishers, 50_000)
    run_until(ros_executor, lambda: len(infos) == recovered + 1 and node.counters.get(CAMERA, PROCESSED) ==
              recovered + 1, 10, "a good frame to be degraded")


def test_predicate_node_with_depth_survives_and_counts_malformed_depth_and_camera_info(ros_context, ros_executor,
                                                                                     per_topic):
    from predrel_ros.ros.nodes.predicate_node import ENTITIES, PredicateNode

    node = PredicateNode(context=ros_context, parameter_overrides=[
        Parameter("use_depth", value=True), Parameter("image_qos", value="reliable"), Parameter("lazy", value=False)])
    probe = Probe(ros_context)
    publishers = camera_publishers(probe, [("entities", EntityArray)])
    del publishers["image_raw"]
    for n in (node, probe.node):
        ros_executor.add_node(n)
    run_until(ros_executor, lambda: all(p.get_subscription_count() for p in publishers.values()), 10, "the node")
    for topic, generator in [("depth/image_raw", bad_depths), ("camera_info", bad_camera_infos)]:
        assert fuzz(ros_executor, publishers[topic], cycle(generator, per_topic), rejected(node, topic),
                    burst=2) == per_topic
        assert rejected(node, topic)() == per_topic, topic
    assert_nothing_failed(node)
    stamp = header(10**6)                # still alive: a good set is processed
    publishers["camera_info"].publish(intrinsics_to_camera_info(CAMERA_MODEL, stamp))
    publishers["depth/image_raw"].publish(numpy_to_image(np.ones((H, W), np.float32), "32FC1", stamp))
    publishers["entities"].publish(EntityArray(header=stamp, frame_index=1, image_width=W, image_height=H,
                                               entities=[EntityMsg(id=1, label="cube", role="manipulated_object")]))
    run_until(ros_executor, lambda: node.counters.get(ENTITIES, PROCESSED) == 1, 10, "a good set to be processed")


def test_replay_node_counts_stale_pace_messages(ros_context, ros_executor, tiny_bag, per_topic):
    node = ReplayNode(context=ros_context, parameter_overrides=[
        Parameter("source", value=str(tiny_bag)), Parameter("max_frames", value=1)])
    probe = Probe(ros_context)
    pace = probe.node.create_publisher(PredicateArray, "degraded/predicates", PROBE_QOS)
    for n in (node, probe.node):
        ros_executor.add_node(n)
    run_until(ros_executor, lambda: pace.get_subscription_count() > 0 and node.finished.is_set(), 10, "the replay")
    pace.publish(PredicateArray(frame_index=5))
    stale = [PredicateArray(frame_index=k % 6) for k in range(per_topic)]  # none newer than 5
    before = resident_bytes()
    assert fuzz(ros_executor, pace, stale, lambda: node.counters.get("pace", OUT_OF_ORDER), burst=20) == per_topic
    assert_memory_bounded(before, f"replay node, {per_topic} stale pace messages")
    assert_nothing_failed(node)


def bad_degradations(stamp):
    yield DegradationState(kind="rain", severity=2)
    yield DegradationState(kind="blur", severity=9)
    yield DegradationState(kind="blur", severity=1, parameter_names=["sigma", "extra"], parameter_values=[1.0])


def bad_actions(stamp):
    from predrel_ros.ros.messages.actions import ground_truth_action_to_msg

    teleport = ground_truth_action_to_msg("grasp", 1, stamp)
    teleport.primitive, teleport.probability = "teleport", 5.0          # the fuzzer's `teleport 5.00 trusted`
    yield teleport
    nan = ground_truth_action_to_msg("grasp", 1, stamp)
    nan.probabilities = [math.nan] * len(nan.class_names)
    yield nan
    far = ground_truth_action_to_msg("grasp", 2**64 - 1, stamp)         # far ahead: out of order
    yield far


def bad_ground_truth_actions(stamp):
    from predrel_ros.ros.messages.actions import ground_truth_action_to_msg

    unknown = ground_truth_action_to_msg("grasp", 1, stamp)
    unknown.primitive = "teleport"
    yield unknown
    yield ground_truth_action_to_msg("grasp", 2**64 - 1, stamp)


def bad_predicate_arrays(stamp):
    from predrel_ros.predicates.estimate import PredicateEstimate
    from predrel_ros.ros.messages.predicates import predicates_to_msg

    def array(**changes):
        msg = predicates_to_msg([PredicateEstimate("contact", 1, 3, "T", 0.9)], frame_index=1, source="fuzz",
                                header=stamp)
        for name, value in changes.items():
            setattr(msg.predicates[0], name, value)
        return msg

    yield array(q_det=math.nan)
    yield array(q_vis=-1.0)
    yield array(code=7)
    crowd = array()
    crowd.predicates = list(crowd.predicates) * 20_000                   # beyond max_predicates_per_message
    yield crowd


def bad_entity_arrays(stamp):
    def array(**changes):
        entity = EntityMsg(id=1, label="cube", role="manipulated_object")
        for name, value in changes.items():
            setattr(entity, name, value)
        return EntityArray(header=stamp, frame_index=1, image_width=W, image_height=H, entities=[entity])

    yield array(label="")
    yield array(box=np.float32([0, 0, 1e9, 10]))
    yield array(depth=-math.inf)
    yield EntityArray(header=stamp, frame_index=1, image_width=W, image_height=H,
                      entities=[EntityMsg(id=k, label="cube", role="manipulated_object") for k in range(300)])


def test_dashboard_survives_and_counts_malformed_input(ros_context, ros_executor, tmp_path, monkeypatch, per_topic):
    """Every input of the dashboard; with summary_dir it decodes predicates and entities too."""
    import io

    from predrel_ros.msg import ActionEstimate, ReliabilityReport
    from predrel_ros.ros.kit.frame_counters import TOO_LARGE
    from predrel_ros.ros.kit.qos import LATCHED_QOS, STREAM_QOS
    from predrel_ros.ros.messages.actions import ground_truth_action_to_msg
    from predrel_ros.ros.nodes.dashboard_node import DashboardNode

    monkeypatch.setattr("sys.stdout", io.StringIO())
    node = DashboardNode(context=ros_context, parameter_overrides=[
        Parameter("summary_dir", value=str(tmp_path / "summary")), Parameter("display", value="lines")])
    probe = Probe(ros_context)
    topics = [("degradation", DegradationState, bad_degradations, LATCHED_QOS, 1),
              ("action", ActionEstimate, bad_actions, STREAM_QOS, 20),
              ("ground_truth/action", ActionEstimate, bad_ground_truth_actions, STREAM_QOS, 20),
              ("clean/predicates", PredicateArray, bad_predicate_arrays, STREAM_QOS, 2),
              ("degraded/entities", EntityArray, bad_entity_arrays, STREAM_QOS, 2)]
    publishers = {topic: probe.node.create_publisher(kind, topic, qos) for topic, kind, _, qos, _ in topics}
    reports = probe.node.create_publisher(ReliabilityReport, "reliability", STREAM_QOS)
    for n in (node, probe.node):
        ros_executor.add_node(n)
    run_until(ros_executor, lambda: all(p.get_subscription_count() for p in [*publishers.values(), reports]), 10,
              "the dashboard")

    def refused(topic):
        return lambda: sum(node.counters.get(topic, outcome) for outcome in (MALFORMED, OUT_OF_ORDER, TOO_LARGE))

    # a valid first frame on each indexed stream: far-ahead indices are then judged against it
    for topic in ("action", "ground_truth/action"):
        publishers[topic].publish(ground_truth_action_to_msg("idle", 0))
    reports.publish(ReliabilityReport(frame_index=0, reference_mode="clean_twin"))
    run_until(ros_executor, lambda: all(node.counters.get(t, PROCESSED) == 1 for t in (
        "action", "ground_truth/action", "reliability")), 10, "the first valid frames")

    bursts = [(topic, cycle(generator, per_topic), burst) for topic, _, generator, _, burst in topics]
    far = ReliabilityReport(frame_index=2**64 - 1, reference_mode="clean_twin")
    before = resident_bytes()
    for topic, messages, burst in bursts:
        assert fuzz(ros_executor, publishers[topic], messages, refused(topic), burst=burst) == per_topic
        assert refused(topic)() == per_topic, (topic, node.counters.stream(topic))
    assert fuzz(ros_executor, reports, [far] * per_topic, refused("reliability"), burst=20) == per_topic
    assert_memory_bounded(before, f"dashboard node, {per_topic} malformed messages on each of 6 topics")
    assert node.counters.get("clean/predicates", TOO_LARGE) == per_topic // 4
    assert_nothing_failed(node)
    # still alive: valid input is processed
    publishers["action"].publish(ground_truth_action_to_msg("grasp", 3))
    publishers["degradation"].publish(degradation_to_msg("blur", 2))
    run_until(ros_executor, lambda: node.counters.get("action", PROCESSED) == 2 and
              node.counters.get("degradation", PROCESSED) == 1, 10, "valid input to be processed")
    assert node.state.action.primitive == "grasp"


def bad_compressed_images(stamp):
    import cv2
    from sensor_msgs.msg import CompressedImage

    _, jpeg = cv2.imencode(".jpg", np.zeros((H, W, 3), np.uint8))
    _, line = cv2.imencode(".png", np.zeros((8, 2000, 3), np.uint8))
    yield CompressedImage(header=stamp, format="jpeg", data=b"not an image at all")
    yield CompressedImage(header=stamp, format="rgb8; jpeg compressed bgr8", data=jpeg.tobytes()[:40])  # truncated
    yield CompressedImage(header=stamp, format="png", data=line.tobytes())                               # degenerate
    yield CompressedImage(header=stamp, format="h264", data=jpeg.tobytes())                              # unsupported
    yield CompressedImage(header=stamp, format="16UC1; compressedDepth png", data=jpeg.tobytes())        # depth


def bad_compressed_depths(stamp):
    import struct

    import cv2
    from sensor_msgs.msg import CompressedImage

    def rvl(width, height, stream):
        return CompressedImage(header=stamp, format="16UC1; compressedDepth rvl",
                               data=struct.pack("<iffII", 0, 0, 0, width, height) + stream)
    _, colour = cv2.imencode(".png", np.zeros((H, W, 3), np.uint8))
    yield rvl(16384, 16384, bytes(64))                                       # a 512 MB image from 84 bytes
    yield rvl(W, H, bytes(4))                                                # runs of no pixels
    yield rvl(W, H, np.array([0x08100000], "<u4").tobytes())                 # ends inside a run
    yield CompressedImage(header=stamp, format="16UC1; compressedDepth png",
                          data=struct.pack("<iff", 0, 0, 0) + colour.tobytes())   # a colour png
    yield CompressedImage(header=stamp, format="16UC1; compressedDepth zstd", data=bytes(40))


@pytest.mark.parametrize("node_kind", ["degrade", "perception"])
def test_compressed_transports_survive_and_count_malformed_input(ros_context, ros_executor, tmp_path, per_topic,
                                                                 node_kind):
    """image_transport compressed and depth_transport compressedDepth: corrupt, truncated,
    degenerate and unsupported CompressedImages, and RVL streams that would make the reference
    decoder read past its end, all counted malformed; a good png + rvl frame is processed after."""
    from sensor_msgs.msg import CompressedImage

    from predrel_ros.ros.messages.images import numpy_to_compressed_depth, numpy_to_compressed_image

    transports = [Parameter("use_depth", value=True), Parameter("image_qos", value="reliable"),
                  Parameter("image_transport", value="compressed"),
                  Parameter("depth_transport", value="compressedDepth")]
    if node_kind == "degrade":
        node, processed = DegradeNode(context=ros_context, parameter_overrides=transports), (CAMERA, PROCESSED)
    else:
        node = activated(PerceptionNode(context=ros_context, parameter_overrides=transports + [
            Parameter("model_path", value=str(scene_model(tmp_path / "model"))),
            Parameter("use_frame_info", value=False)]), ros_executor)
        processed = (FRAMES, PROCESSED)
    probe = Probe(ros_context)
    publishers = {stream: probe.node.create_publisher(kind, topic, PROBE_QOS) for stream, kind, topic in (
        ("image_raw", CompressedImage, "image_raw/compressed"),
        ("depth/image_raw", CompressedImage, "depth/image_raw/compressedDepth"), ("camera_info", CameraInfo,
                                                                                  "camera_info"))}
    for n in {node, probe.node}:
        if n not in ros_executor.get_nodes():
            ros_executor.add_node(n)
    run_until(ros_executor, lambda: all(p.get_subscription_count() for p in publishers.values()), 10, "the node")
    def good_frame(k):
        """A good png + rvl frame."""
        stamp = header(k)
        publishers["camera_info"].publish(intrinsics_to_camera_info(CAMERA_MODEL, stamp))
        publishers["depth/image_raw"].publish(numpy_to_compressed_depth(np.ones((H, W), np.float32), "16UC1",
                                                                        stamp, compression="rvl"))
        publishers["image_raw"].publish(numpy_to_compressed_image(np.zeros((H, W, 3), np.uint8), "png", stamp))
    fuzz_camera_topics(ros_executor, node, publishers, [("image_raw", bad_compressed_images, 2),
                                                        ("depth/image_raw", bad_compressed_depths, 2)],
                       per_topic, f"{node_kind} node (compressed transports)", good_frame,
                       lambda: node.counters.get(*processed))
    assert_nothing_failed(node)
