"""launch/replay_eval.launch.py with launch_testing: a tiny controlled bag looped through both
pipelines; every node comes up, predicates, reliability reports and actions flow, and every node
exits cleanly on shutdown.  Run: `launch_test tests/launch/test_replay_eval_launch.py` (colcon test
registers it where launch_testing_ament_cmake exists)."""
import sys
import time
import unittest
from pathlib import Path

import launch_testing
import launch_testing.asserts
import pytest
import rclpy
from launch.actions import IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource

from launch import LaunchDescription

sys.path.insert(0, str(Path(__file__).resolve().parent))  # launch_test loads this file by path
from launch_fixtures import launch_file, stand_in_model, tiny_bag, workspace  # noqa: E402

from predrel_ros.msg import ActionEstimate, PredicateArray, ReliabilityReport
from predrel_ros.ros.kit.qos import STREAM_QOS

NAMESPACE = "launch_test"


@pytest.mark.launch_test
def generate_test_description():
    root = workspace()
    graph = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(str(launch_file("replay_eval.launch.py"))),
        launch_arguments={"bag": str(tiny_bag(root)), "model": str(stand_in_model(root)), "rate": "0",
                          "loop": "true", "schedule": "sweep:occlusion:12:1,5", "namespace": NAMESPACE}.items())
    return LaunchDescription([graph, launch_testing.actions.ReadyToTest()])


class TestGraph(unittest.TestCase):
    def test_predicates_reports_and_actions_flow(self):
        rclpy.init()
        node = rclpy.create_node("replay_eval_launch_probe", namespace=NAMESPACE)
        received = {"degraded/predicates": [], "clean/predicates": [], "reliability": [], "degraded/action": []}
        types = {"reliability": ReliabilityReport, "degraded/action": ActionEstimate}
        for topic, messages in received.items():
            node.create_subscription(types.get(topic, PredicateArray), topic, messages.append, STREAM_QOS)
        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and min(len(m) for m in received.values()) < 20:
                rclpy.spin_once(node, timeout_sec=0.1)
        finally:
            node.destroy_node()
            rclpy.shutdown()
        self.assertGreaterEqual(min(len(m) for m in received.values()), 20, {k: len(v) for k, v in received.items()})
        self.assertEqual(received["reliability"][-1].reference_mode, "clean_twin")
        severities = {m.degradation.severity for m in received["degraded/predicates"]}
        self.assertTrue(severities <= {1, 5} and severities, severities)


@launch_testing.post_shutdown_test()
class TestShutdown(unittest.TestCase):
    def test_every_node_exits_cleanly(self, proc_info):
        launch_testing.asserts.assertExitCodes(proc_info)
