"""perception_node over DDS, fed by a replay_node: entities per delivered frame with the stream's
frame_index and degradation, detection noise from FrameInfo, depth, every frame accounted for,
newest-frame processing under overload, live numbering, lazy overlay, clear start errors."""
import time

import numpy as np
import pytest
from ros_testing import require_ros

require_ros()

from node_graph import FAR_STAMP_NS, PROBE_QOS, Probe, activated, run_until, scene_model, with_far_future  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import Image  # noqa: E402

from predrel_ros.core.errors import UserError  # noqa: E402
from predrel_ros.degradations import Degrader  # noqa: E402
from predrel_ros.msg import EntityArray, FrameInfo  # noqa: E402
from predrel_ros.perception.config import PerceptionConfig  # noqa: E402
from predrel_ros.perception.perceiver import Perceiver  # noqa: E402
from predrel_ros.ros.kit.frame_counters import OUTCOMES, PROCESSED  # noqa: E402
from predrel_ros.ros.messages.degradations import degradation_to_msg  # noqa: E402
from predrel_ros.ros.messages.entities import entities_from_msg  # noqa: E402
from predrel_ros.ros.messages.fields import header_at, stamp_to_ns  # noqa: E402
from predrel_ros.ros.messages.frame_info import frame_info_from_msg, frame_info_to_msg  # noqa: E402
from predrel_ros.ros.messages.images import numpy_to_image  # noqa: E402
from predrel_ros.ros.nodes.perception_node import FRAMES, PerceptionNode  # noqa: E402
from predrel_ros.ros.nodes.replay_node import ReplayNode  # noqa: E402
from predrel_ros.sources.open_source import open_frames  # noqa: E402

pytestmark = pytest.mark.ros

SCHEDULE = "segments:0=frame_drop:5,20=detection_noise:5"
SEED = 11


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return scene_model(tmp_path_factory.mktemp("scene_model"))


def make(node_class, ros_context, namespace="", **params):
    return node_class(context=ros_context, namespace=namespace,
                      parameter_overrides=[Parameter(k, value=v) for k, v in params.items()])


def perception(ros_context, ros_executor, model_dir, **params):
    """An active perception node (autostart: configured and activated once spun)."""
    return activated(make(PerceptionNode, ros_context, "degraded", model_path=str(model_dir), **params), ros_executor)


def frames_accounted(node) -> bool:
    return node.counters.get(FRAMES, "in") == node.counters.total(FRAMES, OUTCOMES)


def test_entities_of_replayed_frames(ros_context, ros_executor, tiny_bag, model_dir):
    node = perception(ros_context, ros_executor, model_dir, use_depth=True, image_qos="reliable")
    probe = Probe(ros_context)
    entities = probe.watch(EntityArray, "degraded/entities")
    infos = probe.watch(FrameInfo, "degraded/frame_info")
    overlays = probe.watch(Image, "degraded/debug/overlay")
    replay = make(ReplayNode, ros_context, source=str(tiny_bag), rate=0.0, pace_topic="degraded/entities",
                  pace_type="entities", schedule=SCHEDULE, seed=SEED, publish_clean=False, shutdown_when_done=True,
                  wait_for_subscribers=1, image_qos="reliable", image_qos_depth=50)
    for n in (node, probe.node, replay):
        ros_executor.add_node(n)
    run_until(ros_executor, lambda: replay.exit_code is not None, 60, "the replay to finish")
    frames = list(open_frames(tiny_bag))
    run_until(ros_executor, lambda: len(infos) == len(frames) and frames_accounted(node)
              and node.counters.get(FRAMES, "in") == len(frames), 10, "every frame to be accounted for")

    delivered = [frame_info_from_msg(m) for m in infos if m.action != "drop"]
    # the overlay of the last frame may still be on its way when its entities have arrived
    run_until(ros_executor, lambda: len(overlays) >= len(delivered), 10, "the overlay of every delivered frame")
    assert [m.frame_index for m in entities] == [i.frame_index for i in delivered]
    assert [(m.degradation.kind, m.degradation.severity) for m in entities] == \
        [(i.degradation.kind, i.degradation.severity) for i in delivered]
    assert [stamp_to_ns(m.header) for m in entities] == [i.stamp_ns for i in delivered]
    assert {m.source for m in entities} == {"perception"}
    counts = node.counters.stream(FRAMES)
    assert counts == {"in": len(frames), PROCESSED: len(delivered),
                      "dropped_by_degradation": len(frames) - len(delivered)}
    assert len(overlays) == len(delivered) and overlays[0].encoding == "bgr8"

    # the same frames through the library: same tracks, boxes and 3-D points; then detection noise
    offline = Perceiver(PerceptionConfig(model=str(model_dir)))
    for msg, info in zip(entities, delivered):
        content = frames[info.source_index]
        expected = offline.process(content.rgb, info.frame_index, depth=content.depth, camera=content.camera,
                                   bgr=False)
        if info.degradation.kind == "detection_noise":
            expected = Degrader("detection_noise", 5, SEED).apply_entities(expected, info.frame_index,
                                                                           content.rgb.shape)
        got = entities_from_msg(msg)
        assert [(e.id, e.label, e.role) for e in got] == [(e.id, e.label, e.role) for e in expected]
        np.testing.assert_allclose([e.box for e in got], [e.box for e in expected], atol=1e-3)
        assert [e.point3d is not None for e in got] == [e.point3d is not None for e in expected]
    assert any(m.entities[0].has_point3d for m in entities)
    noisy = [len(m.entities) for m in entities if m.degradation.kind == "detection_noise"]
    assert len(set(noisy)) > 1  # detection noise at severity 5 misses and adds detections


def test_an_overloaded_node_processes_the_newest_frame_and_accounts_for_every_frame(
        ros_context, ros_executor, tiny_bag, model_dir):
    node = perception(ros_context, ros_executor, model_dir, frame_info_timeout_s=0.5)
    slow_process, drawn = node.perceiver.process, []

    def slow(*args, **kwargs):
        time.sleep(0.1)  # a model ten times slower than the 30 Hz stream
        return slow_process(*args, **kwargs)
    node.perceiver.process = slow
    node._draw_entities = lambda *args: drawn.append(args)
    probe = Probe(ros_context)
    entities = probe.watch(EntityArray, "degraded/entities")
    replay = make(ReplayNode, ros_context, source=str(tiny_bag), rate=1.0, publish_clean=False,
                  shutdown_when_done=True, wait_for_subscribers=1)
    for n in (node, probe.node, replay):
        ros_executor.add_node(n)
    run_until(ros_executor, lambda: replay.exit_code is not None, 30, "the replay to finish")
    # the last EntityArray may still be on its way to the probe when the worker turns idle
    run_until(ros_executor, lambda: node.counters.get(FRAMES, "in") == 36 and frames_accounted(node)
              and node.worker.idle and len(entities) == node.counters.get(FRAMES, PROCESSED), 10,
              "every frame to be accounted for and every published EntityArray to arrive")
    counts = node.counters.stream(FRAMES)
    assert 0 < counts[PROCESSED] < 36 and len(entities) == counts[PROCESSED]
    assert counts.get("dropped_stale", 0) + counts.get("image_lost", 0) == 36 - counts[PROCESSED]
    assert counts.get("dropped_stale", 0) > 0
    indices = [m.frame_index for m in entities]
    assert indices == sorted(set(indices))
    assert drawn == []  # nobody subscribes to the overlay: it is never drawn


def test_live_images_without_frame_info_are_numbered_here(ros_context, ros_executor, model_dir):
    node = perception(ros_context, ros_executor, model_dir, image_qos="reliable")
    probe = Probe(ros_context, namespace="degraded")
    entities = probe.watch(EntityArray, "entities")
    camera = probe.node.create_publisher(Image, "image_raw", 10)
    for n in (node, probe.node):
        ros_executor.add_node(n)
    run_until(ros_executor, lambda: camera.get_subscription_count() > 0 and
              probe.node.count_publishers("entities") > 0, 10, "the perception node")
    rgb = np.zeros((240, 320, 3), np.uint8)
    for k in range(4):
        camera.publish(numpy_to_image(rgb, "rgb8", header_at(10**9 * (k + 1), "cam")))
        run_until(ros_executor, lambda: len(entities) == k + 1, 10, f"entities of image {k}")
    assert [m.frame_index for m in entities] == [0, 1, 2, 3]
    assert {m.degradation.kind for m in entities} == {"none"}
    assert [len(m.entities) for m in entities] == [3] * 4  # cube, bowl, hand


def test_start_errors_name_what_to_fix(ros_context, tmp_path):
    with pytest.raises(UserError, match=r"model .*does not exist.*set model_path:=MODEL_DIR"):
        make(PerceptionNode, ros_context, model_path=str(tmp_path / "missing"))
    with pytest.raises(UserError, match="parameter config: /no/such.yaml does not exist"):
        make(PerceptionNode, ros_context, config="/no/such.yaml")
    with pytest.raises(UserError, match="parameter backend"):
        make(PerceptionNode, ros_context, backend="openvino")


def test_a_restarted_stream_resets_tracks_and_old_frames_are_skipped(ros_context, ros_executor, model_dir):
    from predrel_ros.ros.inputs.camera_inputs import CameraFrame
    from predrel_ros.ros.nodes.perception_node import PendingFrame

    node = perception(ros_context, ros_executor, model_dir)
    resets = []
    reset = node.perceiver.reset
    node.perceiver.reset = lambda: (resets.append(True), reset())
    rgb = np.zeros((96, 128, 3), np.uint8)
    header = header_at(0, "cam")

    def frame(index, stamp):
        return PendingFrame(CameraFrame(stamp, Image(header=header), rgb, None, None, None, time.monotonic()),
                            index, None)
    try:
        for index, stamp in [(10, 100), (11, 200), (3, 150), (0, 300), (1, 400)]:
            node._process(frame(index, stamp))
        counts = node.counters.stream(FRAMES)
        assert counts == {PROCESSED: 4, "out_of_order": 1}  # frame 3 is older than frame 11
        assert resets == [True]  # frame 0 with a newer stamp: the source restarted
    finally:
        node.destroy_node()


@pytest.mark.parametrize("frame_info, first", [(False, False), (False, True), (True, False), (True, True)],
                         ids=["after_frames", "first", "frame_info_after_frames", "frame_info_first"])
def test_a_frame_stamped_far_in_the_future_does_not_block_the_stream(ros_context, ros_executor, model_dir,
                                                                    frame_info, first):
    node = perception(ros_context, ros_executor, model_dir, image_qos="reliable")
    probe = Probe(ros_context, namespace="degraded")
    entities = probe.watch(EntityArray, "entities")
    camera = probe.node.create_publisher(Image, "image_raw", PROBE_QOS)
    infos = probe.node.create_publisher(FrameInfo, "frame_info", PROBE_QOS)
    for n in (node, probe.node):
        ros_executor.add_node(n)
    run_until(ros_executor, lambda: camera.get_subscription_count() > 0 and infos.get_subscription_count() > 0 and
              probe.node.count_publishers("entities") > 0, 10, "the perception node")
    if frame_info:
        run_until(ros_executor, node._expects_frame_info, 10, "the FrameInfo publisher")
    else:
        probe.node.destroy_publisher(infos)
        run_until(ros_executor, lambda: not node._expects_frame_info(), 10, "no FrameInfo publisher")
    stamps, taken = with_far_future([10**9 + k * 33_000_000 for k in range(10)], FAR_STAMP_NS, first)
    rgb = np.zeros((96, 128, 3), np.uint8)
    refused = lambda: sum(node.counters.get(stream, "out_of_order") for stream in (FRAMES, "image_raw"))  # noqa: E731
    for k, stamp in enumerate(stamps):
        header = header_at(stamp, "cam")
        if frame_info:
            infos.publish(frame_info_to_msg(header, k, "test", "deliver", k,
                                                        degradation_to_msg("none", 0)))
        camera.publish(numpy_to_image(rgb, "rgb8", header))
        # one frame at a time: the node processes the newest frame only
        run_until(ros_executor, lambda: len(entities) + refused() == k + 1, 10, f"frame {k}")
    expected = ([FAR_STAMP_NS] if first else []) + taken    # a far first frame has nothing to be judged by
    assert [stamp_to_ns(m.header) for m in entities] == expected
    assert [m.frame_index for m in entities] == [stamps.index(stamp) for stamp in expected]
    assert node.counters.get(FRAMES, PROCESSED) == len(expected)


def test_a_live_compressed_camera_with_compressed_depth_runs_through_perception(ros_context, ros_executor, model_dir):
    """image_transport compressed (jpeg on image_raw/compressed), depth_transport compressedDepth:
    entities with 3D points; garbage on the compressed topic is counted malformed and the next frame
    is processed."""
    from sensor_msgs.msg import CameraInfo, CompressedImage

    from predrel_ros.core.frame import CameraIntrinsics
    from predrel_ros.ros.messages.camera_info import intrinsics_to_camera_info
    from predrel_ros.ros.messages.images import numpy_to_compressed_depth, numpy_to_compressed_image

    node = perception(ros_context, ros_executor, model_dir, image_qos="reliable", use_depth=True,
                      image_transport="compressed", depth_transport="compressedDepth")
    probe = Probe(ros_context, namespace="degraded")
    entities = probe.watch(EntityArray, "entities")
    camera = probe.node.create_publisher(CompressedImage, "image_raw/compressed", 10)
    depth = probe.node.create_publisher(CompressedImage, "depth/image_raw/compressedDepth", 10)
    info = probe.node.create_publisher(CameraInfo, "camera_info", 10)
    for n in (node, probe.node):
        ros_executor.add_node(n)
    run_until(ros_executor, lambda: min(p.get_subscription_count() for p in (camera, depth, info)) > 0 and
              probe.node.count_publishers("entities") > 0, 10, "the perception node")
    intrinsics = CameraIntrinsics(width=320, height=240, fx=300.0, fy=300.0, cx=159.5, cy=119.5)
    rgb = np.zeros((240, 320, 3), np.uint8)
    metres = np.full((240, 320), 0.9, np.float32)
    for k in range(3):
        header = header_at(10**9 * (k + 1), "cam")
        if k == 1:
            camera.publish(CompressedImage(header=header, format="jpeg", data=b"\xff\xd8\xff not a jpeg"))
        else:
            camera.publish(numpy_to_compressed_image(rgb, "jpeg", header))
        depth.publish(numpy_to_compressed_depth(metres, "16UC1", header))
        info.publish(intrinsics_to_camera_info(intrinsics, header))
        if k != 1:
            run_until(ros_executor, lambda: len(entities) == (1 if k == 0 else 2), 10, f"entities of frame {k}")
    run_until(ros_executor, lambda: node.counters.get("image_raw", "malformed") == 1, 5, "the malformed count")
    assert [len(m.entities) for m in entities] == [3, 3]
    points = [e.point3d for e in entities_from_msg(entities[-1]) if e.point3d is not None]
    assert points and all(p[2] == pytest.approx(0.9, abs=0.01) for p in points)


def test_without_a_trained_model_depth_objects_come_from_an_rgbd_camera(ros_context, ros_executor):
    """config:=perceiver_rgbd.yaml (model: none, objects from depth): the node starts, says it has no
    model, and publishes the table and the block standing on it from depth alone."""
    from sensor_msgs.msg import CameraInfo
    from tabletop_depth import HEIGHT, WIDTH, region, tabletop_depth

    from predrel_ros.core.entities import SURFACE
    from predrel_ros.core.frame import CameraIntrinsics
    from predrel_ros.core.package_files import config_file
    from predrel_ros.perception.config import NO_MODEL
    from predrel_ros.ros.messages.camera_info import intrinsics_to_camera_info

    node = activated(make(PerceptionNode, ros_context, "degraded", config=str(config_file("perceiver_rgbd.yaml")),
                          image_qos="reliable", use_depth=True), ros_executor)
    assert node.backend_name == NO_MODEL
    probe = Probe(ros_context, namespace="degraded")
    entities = probe.watch(EntityArray, "entities")
    camera = probe.node.create_publisher(Image, "image_raw", 10)
    depth = probe.node.create_publisher(Image, "depth/image_raw", 10)
    info = probe.node.create_publisher(CameraInfo, "camera_info", 10)
    for n in (node, probe.node):
        ros_executor.add_node(n)
    run_until(ros_executor, lambda: min(p.get_subscription_count() for p in (camera, depth, info)) > 0 and
              probe.node.count_publishers("entities") > 0, 10, "the perception node")
    metres, K = tabletop_depth({"block": (region(140, 100, 180, 140), 0.05)})
    intrinsics = CameraIntrinsics(width=WIDTH, height=HEIGHT, fx=K[0, 0], fy=K[1, 1], cx=K[0, 2], cy=K[1, 2])
    header = header_at(10**9, "cam")
    camera.publish(numpy_to_image(np.full((HEIGHT, WIDTH, 3), 128, np.uint8), "rgb8", header))
    depth.publish(numpy_to_image(metres, "32FC1", header))
    info.publish(intrinsics_to_camera_info(intrinsics, header))
    run_until(ros_executor, lambda: len(entities) == 1, 10, "entities from depth")
    found = entities_from_msg(entities[0])
    assert [e.role for e in found].count(SURFACE) == 1 and len(found) == 2
