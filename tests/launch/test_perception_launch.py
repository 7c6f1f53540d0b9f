"""launch/perception.launch.py with launch_testing: camera topics remapped to this test's, the graph
in a namespace; images published here come back as entities, predicates, reference-free
reliability reports and actions, and every node exits cleanly on shutdown.
Run: `launch_test tests/launch/test_perception_launch.py`."""
import sys
import time
import unittest
from pathlib import Path

import launch_testing
import launch_testing.asserts
import numpy as np
import pytest
import rclpy
from launch.actions import IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from sensor_msgs.msg import CameraInfo, Image

from launch import LaunchDescription

sys.path.insert(0, str(Path(__file__).resolve().parent))  # launch_test loads this file by path
from launch_fixtures import launch_file, stand_in_model, workspace  # noqa: E402

from predrel_ros.core.frame import CameraIntrinsics  # noqa: E402
from predrel_ros.msg import ActionEstimate, EntityArray, PredicateArray, ReliabilityReport  # noqa: E402
from predrel_ros.ros.kit.qos import STREAM_QOS, image_qos  # noqa: E402
from predrel_ros.ros.messages.camera_info import intrinsics_to_camera_info  # noqa: E402
from predrel_ros.ros.messages.fields import header_at  # noqa: E402
from predrel_ros.ros.messages.images import numpy_to_image  # noqa: E402

NAMESPACE = "robot_under_test"
CAMERA = "/launch_test_camera"


@pytest.mark.launch_test
def generate_test_description():
    graph = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(str(launch_file("perception.launch.py"))),
        launch_arguments={"namespace": NAMESPACE, "model": str(stand_in_model(workspace())),
                          "image": f"{CAMERA}/image", "camera_info": f"{CAMERA}/info"}.items())
    return LaunchDescription([graph, launch_testing.actions.ReadyToTest()])


class TestGraph(unittest.TestCase):
    def test_images_become_entities_predicates_reports_and_actions(self):
        rclpy.init()
        node = rclpy.create_node("perception_launch_probe")
        received = {"entities": [], "predicates": [], "reliability": [], "action": []}
        types = {"entities": EntityArray, "predicates": PredicateArray, "reliability": ReliabilityReport,
                 "action": ActionEstimate}
        for topic, messages in received.items():
            node.create_subscription(types[topic], f"/{NAMESPACE}/{topic}", messages.append, STREAM_QOS)
        images = node.create_publisher(Image, f"{CAMERA}/image", image_qos("sensor_data", 5))
        infos = node.create_publisher(CameraInfo, f"{CAMERA}/info", image_qos("sensor_data", 5))
        camera = CameraIntrinsics(fx=300.0, fy=300.0, cx=160.0, cy=120.0, width=320, height=240)
        frame = np.random.default_rng(0).integers(0, 256, (240, 320, 3), dtype=np.uint8)
        try:
            deadline = time.monotonic() + 120
            next_frame = time.monotonic()
            while time.monotonic() < deadline and min(len(m) for m in received.values()) < 15:
                if time.monotonic() >= next_frame:
                    header = header_at(node.get_clock().now().nanoseconds, "camera")
                    images.publish(numpy_to_image(frame, "rgb8", header=header))
                    infos.publish(intrinsics_to_camera_info(camera, header=header))
                    next_frame += 1 / 15
                rclpy.spin_once(node, timeout_sec=0.01)
        finally:
            node.destroy_node()
            rclpy.shutdown()
        self.assertGreaterEqual(min(len(m) for m in received.values()), 15, {k: len(v) for k, v in received.items()})
        self.assertEqual({e.label for e in received["entities"][-1].entities}, {"cube", "bowl", "hand"})
        self.assertEqual(received["reliability"][-1].reference_mode, "self")
        indices = [m.frame_index for m in received["predicates"]]
        self.assertEqual(indices, sorted(indices))


@launch_testing.post_shutdown_test()
class TestShutdown(unittest.TestCase):
    def test_every_node_exits_cleanly(self, proc_info):
        launch_testing.asserts.assertExitCodes(proc_info)
