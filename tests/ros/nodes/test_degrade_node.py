"""degrade_node over DDS: a live camera (image + depth + camera_info) becomes clean and degraded twins,
numbered here, with FrameInfo for every frame, occlusion over the clean pipeline's boxes, and a
runtime schedule change."""
import numpy as np
import pytest
from ros_testing import require_ros

require_ros()

from node_graph import FAR_STAMP_NS, PROBE_QOS, Probe, run_until, with_far_future  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import CameraInfo, Image  # noqa: E402

from predrel_ros.core.entities import Entity  # noqa: E402
from predrel_ros.core.frame import CameraIntrinsics  # noqa: E402
from predrel_ros.msg import DegradationState, EntityArray, FrameInfo  # noqa: E402
from predrel_ros.ros.messages.camera_info import camera_info_to_intrinsics, intrinsics_to_camera_info  # noqa: E402
from predrel_ros.ros.messages.entities import entities_to_msg  # noqa: E402
from predrel_ros.ros.messages.fields import header_at, stamp_to_ns  # noqa: E402
from predrel_ros.ros.messages.frame_info import frame_info_from_msg  # noqa: E402
from predrel_ros.ros.messages.images import image_to_numpy, numpy_to_image  # noqa: E402
from predrel_ros.ros.nodes.degrade_node import CAMERA, DegradeNode  # noqa: E402
from predrel_ros.ros.replay.twin_degrader import TwinDegrader  # noqa: E402

pytestmark = pytest.mark.ros

SCHEDULE = "segments:0=frame_drop:5,8=occlusion:4"
SEED = 2
BOX = np.array([10.0, 8.0, 40.0, 30.0])


def test_camera_frames_become_twins(ros_context, ros_executor):
    node = DegradeNode(context=ros_context, parameter_overrides=[
        Parameter("schedule", value=SCHEDULE), Parameter("seed", value=SEED), Parameter("use_depth", value=True),
        Parameter("image_qos", value="reliable")])
    probe = Probe(ros_context)
    watched = {topic: probe.watch(msg_type, topic) for topic, msg_type in [
        ("clean/frame_info", FrameInfo), ("degraded/frame_info", FrameInfo), ("clean/image_raw", Image),
        ("degraded/image_raw", Image), ("degraded/depth/image_raw", Image), ("clean/camera_info", CameraInfo),
        ("degradation", DegradationState)]}
    publish = {topic: probe.node.create_publisher(msg_type, topic, PROBE_QOS) for topic, msg_type in [
        ("image_raw", Image), ("depth/image_raw", Image), ("camera_info", CameraInfo), ("clean/entities", EntityArray)]}
    for n in (node, probe.node):
        ros_executor.add_node(n)
    run_until(ros_executor, lambda: all(p.get_subscription_count() for p in publish.values()) and
              all(probe.node.count_publishers(t) for t in watched), 10, "the degrade node")
    publish["clean/entities"].publish(entities_to_msg(
        [Entity(id=1, label="cube", role="manipulated_object", box=BOX)], frame_index=0, image_width=64,
        image_height=48, source="perception"))
    run_until(ros_executor, lambda: node._targets is not None, 5, "the occlusion targets")

    rng = np.random.default_rng(0)
    camera = CameraIntrinsics(64, 48, 50.0, 50.0, 32.0, 24.0, frame_id="cam")
    images = []
    for k in range(16):
        if k == 12:
            assert node.set_parameters([Parameter("schedule", value="none")])[0].successful
        header = header_at(10**9 + k * 33_000_000, "cam")
        rgb = rng.integers(0, 256, (48, 64, 3), dtype=np.uint8)
        images.append(rgb)
        publish["camera_info"].publish(intrinsics_to_camera_info(camera, header))
        publish["depth/image_raw"].publish(numpy_to_image(np.full((48, 64), 1.5, np.float32), "32FC1", header))
        publish["image_raw"].publish(numpy_to_image(rgb, "rgb8", header))
        run_until(ros_executor, lambda: len(watched["degraded/frame_info"]) == k + 1, 10, f"frame {k}")
    run_until(ros_executor, lambda: len(watched["clean/image_raw"]) == len(watched["clean/camera_info"]) == 16,
              5, "the clean twin")

    clean = [frame_info_from_msg(m) for m in watched["clean/frame_info"]]
    degraded = [frame_info_from_msg(m) for m in watched["degraded/frame_info"]]
    assert [i.frame_index for i in clean] == list(range(16)) == [i.frame_index for i in degraded]
    assert [i.stamp_ns for i in clean] == [i.stamp_ns for i in degraded] == \
        [10**9 + k * 33_000_000 for k in range(16)]
    expected = TwinDegrader(SCHEDULE, SEED)
    twins = [expected.degrade(k, rgb, targets=BOX.reshape(1, 4)) for k, rgb in enumerate(images[:12])]
    assert [i.action for i in degraded[:12]] == [t.degraded.action.value for t in twins]
    assert [i.degradation.kind for i in degraded] == ["frame_drop"] * 8 + ["occlusion"] * 4 + ["none"] * 4
    received = {stamp_to_ns(m.header): image_to_numpy(m) for m in watched["degraded/image_raw"]}
    for info, twin in zip(degraded, twins):
        if twin.degraded.image is None:
            assert info.stamp_ns not in received
        else:
            np.testing.assert_array_equal(received[info.stamp_ns], twin.degraded.image)
    occluded = received[degraded[10].stamp_ns]
    assert not np.array_equal(occluded[8:30, 10:40], images[10][8:30, 10:40])  # the box is covered
    assert len(watched["degraded/depth/image_raw"]) == len(received)
    assert len(watched["clean/camera_info"]) == 16
    np.testing.assert_allclose(camera_info_to_intrinsics(watched["clean/camera_info"][0]), camera.K)
    assert [m.kind for m in watched["degradation"]] == ["frame_drop", "occlusion", "none"]
    assert node.counters.stream(CAMERA) == {"in": 16, "processed": 16}


@pytest.mark.parametrize("use_depth, first", [(False, False), (False, True), (True, False), (True, True)],
                         ids=["after_frames", "first", "depth_after_frames", "depth_first"])
def test_a_frame_stamped_far_in_the_future_does_not_block_the_camera(ros_context, ros_executor, use_depth, first):
    node = DegradeNode(context=ros_context, parameter_overrides=[
        Parameter("use_depth", value=use_depth), Parameter("image_qos", value="reliable")])
    probe = Probe(ros_context)
    infos = probe.watch(FrameInfo, "degraded/frame_info")
    publish = {topic: probe.node.create_publisher(msg_type, topic, PROBE_QOS) for topic, msg_type in [
        ("image_raw", Image), ("depth/image_raw", Image), ("camera_info", CameraInfo)]}
    for n in (node, probe.node):
        ros_executor.add_node(n)
    needed = [publish["image_raw"]] + ([publish["depth/image_raw"], publish["camera_info"]] if use_depth else [])
    run_until(ros_executor, lambda: all(p.get_subscription_count() for p in needed) and
              probe.node.count_publishers("degraded/frame_info"), 10, "the degrade node")
    camera = CameraIntrinsics(64, 48, 50.0, 50.0, 32.0, 24.0, frame_id="cam")
    stamps, taken = with_far_future([10**9 + k * 33_000_000 for k in range(10)], FAR_STAMP_NS, first)
    rgb = np.zeros((48, 64, 3), np.uint8)
    for k, stamp in enumerate(stamps):
        header = header_at(stamp, "cam")
        publish["camera_info"].publish(intrinsics_to_camera_info(camera, header))
        publish["depth/image_raw"].publish(numpy_to_image(np.ones((48, 64), np.float32), "32FC1", header))
        publish["image_raw"].publish(numpy_to_image(rgb, "rgb8", header))
        # one frame at a time: the node degrades the newest frame only
        run_until(ros_executor, lambda: node.counters.get("image_raw", "unsynchronised") +
                  node.counters.total(CAMERA) == k + 1, 10, f"frame {k}")
    expected = ([FAR_STAMP_NS] if first else []) + taken    # a far first frame has nothing to be judged by
    run_until(ros_executor, lambda: len(infos) == len(expected), 5, "the frame infos")
    assert [stamp_to_ns(m.header) for m in infos] == expected
    assert [m.frame_index for m in infos] == list(range(len(expected)))


def test_a_compressed_transport_subscribes_after_the_remapped_base_name(ros_context, ros_executor):
    """As image_transport: -r image_raw:=/camera/image_raw with image_transport compressed subscribes
    /camera/image_raw/compressed, and a png there is degraded like a raw image."""
    from sensor_msgs.msg import CompressedImage

    from predrel_ros.ros.messages.images import numpy_to_compressed_image

    node = DegradeNode(context=ros_context, cli_args=["--ros-args", "-r", "image_raw:=/camera/image_raw"],
                       parameter_overrides=[Parameter("image_transport", value="compressed"),
                                            Parameter("image_qos", value="reliable")])
    subscribed = {s.topic_name for s in node.subscriptions}
    assert "/camera/image_raw/compressed" in subscribed and "/camera/image_raw" not in subscribed
    probe = Probe(ros_context)
    images = probe.watch(Image, "degraded/image_raw")
    camera = probe.node.create_publisher(CompressedImage, "/camera/image_raw/compressed", PROBE_QOS)
    for n in (node, probe.node):
        ros_executor.add_node(n)
    run_until(ros_executor, lambda: camera.get_subscription_count() > 0, 10, "the degrade node")
    rgb = np.random.default_rng(1).integers(0, 256, (24, 32, 3), dtype=np.uint8)
    camera.publish(numpy_to_compressed_image(rgb, "png", header_at(10**9, "cam")))
    run_until(ros_executor, lambda: len(images) == 1, 10, "the degraded image")
    assert image_to_numpy(images[0]).shape == (24, 32, 3) and node.counters.get(CAMERA, "processed") == 1


@pytest.mark.parametrize("compression", ["png", "rvl"])
def test_a_live_compressed_depth_topic_is_decoded_png_or_rvl(ros_context, ros_executor, compression):
    """depth_transport compressedDepth subscribes depth/image_raw/compressedDepth; the clean twin's
    depth is the camera's (16UC1 millimetres) whichever compression the publisher chose."""
    from sensor_msgs.msg import CompressedImage

    from predrel_ros.ros.messages.images import depth_image_to_metres, numpy_to_compressed_depth

    node = DegradeNode(context=ros_context, parameter_overrides=[
        Parameter("use_depth", value=True), Parameter("depth_transport", value="compressedDepth"),
        Parameter("image_qos", value="reliable")])
    probe = Probe(ros_context)
    depths = probe.watch(Image, "clean/depth/image_raw")
    camera = {topic: probe.node.create_publisher(kind, topic, PROBE_QOS) for topic, kind in (
        ("image_raw", Image), ("depth/image_raw/compressedDepth", CompressedImage), ("camera_info", CameraInfo))}
    for n in (node, probe.node):
        ros_executor.add_node(n)
    run_until(ros_executor, lambda: all(p.get_subscription_count() for p in camera.values()), 10, "the degrade node")
    metres = np.random.default_rng(2).uniform(0.3, 4.0, (24, 32)).astype(np.float32).round(3)
    metres[:5, :7] = np.nan                                         # a hole the sensor did not see
    stamp = header_at(10**9, "cam")
    camera["camera_info"].publish(intrinsics_to_camera_info(CameraIntrinsics(32, 24, 30.0, 30.0, 16.0, 12.0), stamp))
    camera["depth/image_raw/compressedDepth"].publish(numpy_to_compressed_depth(metres, "16UC1", stamp,
                                                                                compression=compression))
    camera["image_raw"].publish(numpy_to_image(np.zeros((24, 32, 3), np.uint8), "rgb8", stamp))
    run_until(ros_executor, lambda: len(depths) == 1, 10, "the clean depth")
    np.testing.assert_allclose(depth_image_to_metres(depths[0]), metres, atol=0.0006, equal_nan=True)
