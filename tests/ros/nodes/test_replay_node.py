"""replay_node over DDS: twins with FrameInfo for every frame, ground truth, runtime schedule changes,
pacing by the pipeline, looping, and refused parameters."""
import numpy as np
import pytest
from ros_testing import require_ros

require_ros()

from node_graph import Probe, run_until  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import CameraInfo, Image  # noqa: E402

from predrel_ros.core.errors import UserError  # noqa: E402
from predrel_ros.degradations import Degrader  # noqa: E402
from predrel_ros.msg import (  # noqa: E402
    ActionEstimate,
    DegradationState,
    EntityArray,
    FrameInfo,
    PredicateArray,
    ReliabilityReport,
)
from predrel_ros.ros.kit.frame_counters import DROPPED_BUSY  # noqa: E402
from predrel_ros.ros.messages.camera_info import camera_info_to_intrinsics  # noqa: E402
from predrel_ros.ros.messages.fields import stamp_to_ns  # noqa: E402
from predrel_ros.ros.messages.frame_info import frame_info_from_msg  # noqa: E402
from predrel_ros.ros.messages.images import depth_image_to_metres, image_to_numpy  # noqa: E402
from predrel_ros.ros.nodes.replay_node import ReplayNode  # noqa: E402
from predrel_ros.ros.replay.twin_degrader import TwinDegrader  # noqa: E402
from predrel_ros.sources.open_source import open_frames  # noqa: E402

pytestmark = pytest.mark.ros

SCHEDULE = "segments:0=frame_drop:5,18=blur:3"
SEED = 4


def replay(ros_context, **params):
    params = {"image_qos": "reliable", "image_qos_depth": 100, "wait_for_subscribers": 1, **params}
    return ReplayNode(context=ros_context, parameter_overrides=[Parameter(k, value=v) for k, v in params.items()])


def test_every_frame_goes_out_as_twins_with_frame_info_and_ground_truth(ros_context, ros_executor, tiny_bag):
    frames = list(open_frames(tiny_bag))
    probe = Probe(ros_context)
    watched = {topic: probe.watch(msg_type, topic) for topic, msg_type in [
        ("clean/frame_info", FrameInfo), ("degraded/frame_info", FrameInfo), ("clean/image_raw", Image),
        ("degraded/image_raw", Image), ("degraded/depth/image_raw", Image), ("degraded/camera_info", CameraInfo),
        ("ground_truth/entities", EntityArray), ("ground_truth/predicates", PredicateArray),
        ("ground_truth/action", ActionEstimate), ("degradation", DegradationState)]}
    ros_executor.add_node(probe.node)
    node = replay(ros_context, source=str(tiny_bag), rate=20.0, schedule=SCHEDULE, seed=SEED, stamps="source",
                  shutdown_when_done=True)
    ros_executor.add_node(node)
    run_until(ros_executor, lambda: node.exit_code is not None, 30, "the replay to finish")
    assert node.exit_code == 0
    run_until(ros_executor, lambda: len(watched["degraded/frame_info"]) == len(frames) and
              len(watched["ground_truth/action"]) == len(frames), 5, "the last messages")

    clean = [frame_info_from_msg(m) for m in watched["clean/frame_info"]]
    degraded = [frame_info_from_msg(m) for m in watched["degraded/frame_info"]]
    indices = list(range(len(frames)))
    assert [i.frame_index for i in clean] == indices == [i.frame_index for i in degraded]
    assert {(i.action, i.degradation.kind) for i in clean} == {("deliver", "none")}
    assert [i.stamp_ns for i in clean] == [i.stamp_ns for i in degraded] == [f.stamp_ns for f in frames]

    # the degraded twin is exactly the library's: frame decisions, repeats, pixels
    expected = TwinDegrader(SCHEDULE, SEED)
    twins = [expected.degrade(f.index, f.rgb, targets=f.entities) for f in frames]
    assert [i.action for i in degraded] == [t.degraded.action.value for t in twins]
    assert {"drop", "repeat"} <= {i.action for i in degraded[:18]}
    assert {(i.degradation.kind, i.degradation.severity) for i in degraded[18:]} == {("blur", 3)}
    images = {stamp_to_ns(m.header): m for m in watched["degraded/image_raw"]}
    assert sorted(images) == [i.stamp_ns for i in degraded if i.action != "drop"]
    for info, twin in zip(degraded, twins):
        if info.action == "drop":
            continue
        pixels = image_to_numpy(images[info.stamp_ns])
        np.testing.assert_array_equal(pixels, twin.degraded.image)
        if info.action == "repeat":
            np.testing.assert_array_equal(pixels, frames[info.source_index].rgb)
    blurred = Degrader("blur", 3, SEED).apply_image(frames[20].rgb, 20)
    np.testing.assert_array_equal(image_to_numpy(images[frames[20].stamp_ns]), blurred)
    assert [(m.kind, m.severity) for m in watched["degradation"]] == [("frame_drop", 5), ("blur", 3)]

    # depth and camera info with each published image; the clean twin has every frame
    assert len(watched["degraded/depth/image_raw"]) == len(images) == len(watched["degraded/camera_info"])
    np.testing.assert_allclose(camera_info_to_intrinsics(watched["degraded/camera_info"][0]),
                               frames[0].camera.K)
    assert len(watched["clean/image_raw"]) == len(frames)

    # ground truth of every frame, under the replay's frame_index
    entities = watched["ground_truth/entities"]
    assert [m.frame_index for m in entities] == indices and {m.source for m in entities} == {"ground_truth"}
    assert [len(m.entities) for m in entities] == [len(f.entities) for f in frames]
    assert [len(m.predicates) for m in watched["ground_truth/predicates"]] == [len(f.predicates) for f in frames]
    assert [m.primitive for m in watched["ground_truth/action"]] == [f.primitive for f in frames]

    drops = sum(i.action == "drop" for i in degraded)
    assert node.counters.snapshot() == {"degraded.dropped_by_degradation": drops,
                                        "degraded.repeated": sum(i.action == "repeat" for i in degraded),
                                        "source.processed": len(frames)}


def test_pipeline_pace_runtime_schedule_change_and_loop(ros_context, ros_executor, tiny_bag):
    probe = Probe(ros_context)
    pace = probe.node.create_publisher(PredicateArray, "degraded/predicates", 10)
    node = replay(ros_context, source=str(tiny_bag), rate=0.0, loop=True, max_frames=8, pace_timeout_s=10.0,
                  publish_clean=False)
    changed = []

    def on_image(msg):
        """Acts as the degraded pipeline: releases each frame after 'processing' it."""
        index = len(probe.messages["degraded/image_raw"]) - 1
        if index == 9:  # while the replay waits for frame 9: change the schedule
            changed.append(node.set_parameters([Parameter("schedule", value="occlusion:3")])[0].successful)
            refused = node.set_parameters([Parameter("schedule", value="blur:9")])[0]
            changed.append((refused.successful, refused.reason))
        pace.publish(PredicateArray(header=msg.header, frame_index=index))

    infos = probe.watch(FrameInfo, "degraded/frame_info")
    probe.watch(Image, "degraded/image_raw", on_image)
    ros_executor.add_node(probe.node)
    ros_executor.add_node(node)
    run_until(ros_executor, lambda: len(infos) >= 20, 30, "20 paced frames")
    assert changed[0] is True
    assert changed[1][0] is False and "severity" in changed[1][1]
    frames = [frame_info_from_msg(m) for m in infos[:20]]
    assert [f.frame_index for f in frames] == list(range(20))  # indices keep increasing over loops of 8
    stamps = [f.stamp_ns for f in frames]
    assert stamps == sorted(stamps) and len(set(stamps)) == 20
    assert [f.degradation.kind for f in frames] == ["none"] * 10 + ["occlusion"] * 10
    assert node.loop_count >= 2 and node.counters.get(None, "pace_timeout") == 0


@pytest.mark.parametrize("params, message", [
    ({}, "parameter source is empty"),
    ({"source": "/no/such/bag.mcap"}, "no such file or folder"),
    ({"source": "BAG", "schedule": "blur:x"}, "parameter schedule"),
    ({"source": "BAG", "rate": -1.0}, "below the minimum"),
    ({"source": "BAG", "wait_for_topics": "a:0"}, r"wait_for_topics: 'a:0' is not TOPIC or TOPIC:COUNT"),
])
def test_bad_parameters_are_refused_at_start(ros_context, tiny_bag, params, message):
    params = {k: str(tiny_bag) if v == "BAG" else v for k, v in params.items()}
    with pytest.raises(UserError, match=message):
        replay(ros_context, **params)


def test_wait_for_topics_names_topics_and_endpoint_counts():
    from predrel_ros.ros.nodes.replay_node import parse_wait_for_topics
    assert parse_wait_for_topics(" degraded/predicates:4, degraded/action ,") == {"degraded/predicates": 4,
                                                                                 "degraded/action": 1}
    assert parse_wait_for_topics("") == {}
    for bad in ("x:-1", ":3", "x:y"):
        with pytest.raises(ValueError, match="is not TOPIC or TOPIC:COUNT"):
            parse_wait_for_topics(bad)


def test_an_image_folder_plays_without_camera_info_or_ground_truth(ros_context, ros_executor, tmp_path):
    import cv2

    rng = np.random.default_rng(5)
    images = [rng.integers(0, 256, (24, 32, 3), dtype=np.uint8) for _ in range(3)]
    for k, rgb in enumerate(images):
        cv2.imwrite(str(tmp_path / f"{k:03d}.png"), rgb[:, :, ::-1])
    probe = Probe(ros_context)
    infos = probe.watch(FrameInfo, "degraded/frame_info")
    received = probe.watch(Image, "clean/image_raw")
    camera_infos = probe.watch(CameraInfo, "clean/camera_info")
    ros_executor.add_node(probe.node)
    node = replay(ros_context, source=str(tmp_path), rate=50.0, shutdown_when_done=True, publish_clean=True)
    ros_executor.add_node(node)
    run_until(ros_executor, lambda: node.exit_code is not None and len(received) == 3 and len(infos) == 3, 20,
              "three frames and their FrameInfo")
    assert node.exit_code == 0 and len(infos) == 3 and camera_infos == []
    for msg, rgb in zip(received, images):
        np.testing.assert_array_equal(image_to_numpy(msg), rgb)
    assert not any(p.topic_name.startswith("/ground_truth") for p in node.publishers)


def test_a_compressed_bag_on_camera_image_raw_plays_with_its_camera_info(ros_context, ros_executor, tmp_path):
    """A png CompressedImage bag on /camera/image_raw/compressed with /camera/camera_info and
    compressedDepth: found by message type, played with depth and intrinsics."""
    from predrel_ros.core.frame import CameraIntrinsics, Frame
    from predrel_ros.sources.bag import BagTopics, BagWriter

    rng = np.random.default_rng(6)
    camera = CameraIntrinsics(width=32, height=24, fx=30.0, fy=30.0, cx=15.5, cy=11.5)
    frames = [Frame(index=k, stamp_ns=(k + 1) * 50_000_000, rgb=rng.integers(0, 256, (24, 32, 3), dtype=np.uint8),
                    depth=np.full((24, 32), 0.5 + k, np.float32), camera=camera) for k in range(3)]
    topics = BagTopics(color="/camera/image_raw/compressed", depth="/camera/depth/image_raw/compressedDepth",
                       color_info="/camera/camera_info", depth_info="/camera/depth/camera_info")
    with BagWriter(tmp_path / "bag", topics=topics, image_codec="png", compressed_depth="png") as writer:
        for frame in frames:
            writer.write(frame)
    probe = Probe(ros_context)
    received = probe.watch(Image, "clean/image_raw")
    depths = probe.watch(Image, "clean/depth/image_raw")
    camera_infos = probe.watch(CameraInfo, "clean/camera_info")
    ros_executor.add_node(probe.node)
    node = replay(ros_context, source=str(tmp_path / "bag"), rate=50.0, shutdown_when_done=True)
    ros_executor.add_node(node)
    run_until(ros_executor, lambda: node.exit_code is not None and len(received) == 3 and len(depths) == 3, 20,
              "three frames with depth")
    assert node.exit_code == 0 and camera_infos
    np.testing.assert_allclose(camera_info_to_intrinsics(camera_infos[0]), [[30, 0, 15.5], [0, 30, 11.5], [0, 0, 1]])
    for msg, depth, frame in zip(received, depths, frames):
        np.testing.assert_array_equal(image_to_numpy(msg), frame.rgb)
        np.testing.assert_allclose(depth_image_to_metres(depth), frame.depth, atol=1e-6)


def test_a_pace_message_indexed_far_in_the_future_releases_nothing(ros_context, ros_executor, tiny_bag):
    from node_graph import FAR_INDEX

    from predrel_ros.ros.kit.frame_counters import OUT_OF_ORDER

    probe = Probe(ros_context)
    pace = probe.node.create_publisher(PredicateArray, "degraded/predicates", 10)
    node = replay(ros_context, source=str(tiny_bag), rate=0.0, max_frames=6, pace_timeout_s=10.0,
                  publish_clean=False)

    def on_image(msg):
        """Acts as the degraded pipeline; a bogus frame_index before frame 0's and frame 3's message."""
        index = len(probe.messages["degraded/image_raw"]) - 1
        if index in (0, 3):
            pace.publish(PredicateArray(header=msg.header, frame_index=FAR_INDEX))
        pace.publish(PredicateArray(header=msg.header, frame_index=index))

    infos = probe.watch(FrameInfo, "degraded/frame_info")
    probe.watch(Image, "degraded/image_raw", on_image)
    ros_executor.add_node(probe.node)
    ros_executor.add_node(node)
    run_until(ros_executor, lambda: node.finished.is_set() and len(infos) == 6, 30, "6 paced frames")
    run_until(ros_executor, lambda: node._pace_order.last == 5, 5, "the last pace message")
    assert node.counters.get("pace", OUT_OF_ORDER) == 2 and node.counters.get(None, "pace_timeout") == 0


def test_lockstep_skips_a_frame_for_both_twins_while_the_pipelines_are_busy(ros_context, ros_executor, tiny_bag):
    """Real time, one frame in flight: while frame 0 is unacknowledged the frames due are skipped at the
    replay (counted dropped_busy, no FrameInfo), so both twins get exactly the same frames."""
    probe = Probe(ros_context)
    pace = probe.node.create_publisher(ReliabilityReport, "reliability", 10)
    node = replay(ros_context, source=str(tiny_bag), rate=1.0, lockstep_in_flight=1, pace_topic="reliability",
                  pace_type="reliability", pace_timeout_s=10.0, shutdown_when_done=True)
    held = []

    def release(index: int) -> None:
        pace.publish(ReliabilityReport(frame_index=index))

    def on_frame(msg):
        """The pipelines: frame 0 takes 0.3 s, every other frame is through at once."""
        if not held:
            held.append(probe.node.create_timer(0.3, lambda: (release(msg.frame_index), held[0].cancel())))
        else:
            release(msg.frame_index)

    degraded = probe.watch(FrameInfo, "degraded/frame_info", on_frame)
    clean = probe.watch(FrameInfo, "clean/frame_info")
    for twin in ("clean", "degraded"):
        probe.watch(Image, f"{twin}/image_raw")
    ros_executor.add_node(probe.node)
    ros_executor.add_node(node)
    run_until(ros_executor, lambda: node.finished.is_set(), 30, "the replay to finish")
    run_until(ros_executor, lambda: len(clean) == len(degraded), 5, "the clean twin's last FrameInfo")
    played = [m.frame_index for m in degraded]
    assert played == [m.frame_index for m in clean]          # the twins got the same frames
    assert played[0] == 0 and played[1] >= 5                  # about 9 frames were due in 0.3 s at 30 Hz
    assert played[1:] == list(range(played[1], 36))           # then every frame went out
    skipped = node.counters.get("source", DROPPED_BUSY)
    assert skipped == 36 - len(played) and node.counters.get("source", "processed") == len(played)
    assert node.counters.get(None, "pace_timeout") == 0
