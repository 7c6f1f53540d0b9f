"""Two real processes (this test and echo_relay) exchange a 640x480 Image, a padded big-endian depth
Image and a PredicateArray over DDS; the echoes must equal what was sent."""
import os
import subprocess

import numpy as np
import pytest
from ros_testing import require_ros

from predrel_ros.ros.kit.runtime import spin_until

require_ros()

import rclpy  # noqa: E402
from sensor_msgs.msg import Image  # noqa: E402
from std_msgs.msg import Header  # noqa: E402

from predrel_ros.msg import PredicateArray  # noqa: E402
from predrel_ros.predicates.estimate import PredicateEstimate  # noqa: E402
from predrel_ros.ros.messages.degradations import DegradationInfo, degradation_from_msg, degradation_to_msg  # noqa: E402
from predrel_ros.ros.messages.images import image_to_numpy, numpy_to_image  # noqa: E402
from predrel_ros.ros.messages.predicates import predicates_from_msg, predicates_to_msg  # noqa: E402
from predrel_ros.ros.run import processes  # noqa: E402
from predrel_ros.ros.run.echo_relay import ECHO_QOS  # noqa: E402

pytestmark = pytest.mark.ros

TIMEOUT_S = 30.0


def padded_big_endian_depth(depth_mm: np.ndarray, padding: int) -> Image:
    rows = np.ascontiguousarray(depth_mm, dtype=">u2").view(np.uint8).reshape(depth_mm.shape[0], -1)
    msg = Image(height=depth_mm.shape[0], width=depth_mm.shape[1], encoding="16UC1", is_bigendian=1,
                step=rows.shape[1] + padding)
    msg.data = np.hstack([rows, np.full((rows.shape[0], padding), 0xEE, np.uint8)]).tobytes()
    return msg


def test_two_processes_exchange_images_and_predicates(ros_context, ros_executor):
    namespace = f"/test_dds_exchange_{os.getpid()}"
    echo = processes.start_node("echo_relay", ["-r", f"__ns:={namespace}"], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
    try:
        node = rclpy.create_node("exchange_test", namespace=namespace, context=ros_context)
        ros_executor.add_node(node)
        images, predicate_arrays = [], []
        image_pub = node.create_publisher(Image, "image", ECHO_QOS)
        predicate_pub = node.create_publisher(PredicateArray, "predicates", ECHO_QOS)
        image_sub = node.create_subscription(Image, "image_echo", images.append, ECHO_QOS)
        predicate_sub = node.create_subscription(PredicateArray, "predicates_echo", predicate_arrays.append, ECHO_QOS)
        assert spin_until(ros_executor, lambda: min(
            image_pub.get_subscription_count(), predicate_pub.get_subscription_count(),
            image_sub.get_publisher_count(), predicate_sub.get_publisher_count()) > 0, TIMEOUT_S), \
            "echo_relay did not connect"

        rng = np.random.default_rng(7)
        rgb = rng.integers(0, 256, (480, 640, 3), dtype=np.uint8)
        depth = rng.integers(0, 65536, (480, 640), dtype=np.uint16)
        header = Header(frame_id="camera_optical")
        header.stamp.sec, header.stamp.nanosec = 1234, 5678
        estimates = [PredicateEstimate("contact", 1, 4, "T", 0.8125,
                                       {"det": 0.5, "seg": 0.25, "trk": 1.0, "vis": 0.75, "sp": 0.125, "tmp": 1.0}),
                     PredicateEstimate("static", 4, 7, "In", 0.5),
                     PredicateEstimate("dynamic", 1, 4, "UNK", 0.0),
                     PredicateEstimate("active_hand", 1, -1, "T", 0.9375)]
        degradation = degradation_to_msg("occlusion", 4, seed=11, parameters={"fraction": 0.5})
        image_pub.publish(numpy_to_image(rgb, "rgb8", header=header))
        image_pub.publish(padded_big_endian_depth(depth, padding=96))
        predicate_pub.publish(predicates_to_msg(estimates, frame_index=17, source="perception",
                                                header=header, degradation=degradation))
        assert spin_until(ros_executor, lambda: len(images) >= 2 and len(predicate_arrays) >= 1, TIMEOUT_S), \
            f"echoes missing: {len(images)} images, {len(predicate_arrays)} predicate arrays"

        rgb_echo, depth_echo = images
        assert (rgb_echo.width, rgb_echo.height, rgb_echo.encoding) == (640, 480, "rgb8")
        assert (rgb_echo.header.frame_id, rgb_echo.header.stamp.sec, rgb_echo.header.stamp.nanosec) == \
            ("camera_optical", 1234, 5678)
        np.testing.assert_array_equal(image_to_numpy(rgb_echo), rgb)
        # echo_relay decoded the padded big-endian rows and re-encoded them packed, in its byte order
        assert (depth_echo.encoding, depth_echo.step) == ("16UC1", 640 * 2)
        np.testing.assert_array_equal(image_to_numpy(depth_echo), depth)

        (predicate_echo,) = predicate_arrays
        assert (predicate_echo.frame_index, predicate_echo.source, predicate_echo.header.frame_id) == \
            (17, "perception", "camera_optical")
        for estimate in estimates:
            estimate.frame_index = 17
        assert predicates_from_msg(predicate_echo) == estimates
        assert degradation_from_msg(predicate_echo.degradation) == DegradationInfo(
            "occlusion", 4, 11, {"fraction": 0.5})
    finally:
        returncode = processes.stop_node(echo)
        output = echo.stdout.read()
    assert returncode == 0, output
    assert "XMLPARSER" not in output, f"Fast DDS rejected the profile: {output}"
    assert "echoed 2 images and 1 predicate arrays" in output
