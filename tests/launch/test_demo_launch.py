"""launch/demo.launch.py with launch_testing: a tiny bag played twice (occlusion 1, then 5) ends the
launch by itself (the replay is exit_ok: Shutdown after finish_grace_s), every node exits cleanly and
the dashboard's summary accounts for every frame.  Run: `launch_test tests/launch/test_demo_launch.py`."""
import json
import sys
import time
import unittest
from pathlib import Path

import launch_testing
import launch_testing.asserts
import pytest
from launch.actions import IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource

from launch import LaunchDescription

sys.path.insert(0, str(Path(__file__).resolve().parent))  # launch_test loads this file by path
from launch_fixtures import launch_file, stand_in_model, tiny_bag, workspace  # noqa: E402

ROOT = workspace()
SUMMARY = ROOT / "out" / "summary.json"
FRAMES = 72  # 36-frame bag, 2 passes


@pytest.mark.launch_test
def generate_test_description():
    graph = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(str(launch_file("demo.launch.py"))),
        launch_arguments={"bag": str(tiny_bag(ROOT)), "model": str(stand_in_model(ROOT)), "passes": "2",
                          "schedule": "sweep:occlusion:36:1,5", "summary_dir": str(SUMMARY.parent),
                          "namespace": "demo_launch_test"}.items())
    return LaunchDescription([graph, launch_testing.actions.ReadyToTest()])


class TestDemo(unittest.TestCase):
    def test_the_demo_ends_by_itself_with_a_summary(self):
        deadline = time.monotonic() + 180
        while not SUMMARY.is_file() and time.monotonic() < deadline:
            time.sleep(0.5)
        self.assertTrue(SUMMARY.is_file(), f"no {SUMMARY} within 180 s")


@launch_testing.post_shutdown_test()
class TestShutdown(unittest.TestCase):
    def test_every_node_exits_cleanly(self, proc_info):
        launch_testing.asserts.assertExitCodes(proc_info)

    def test_the_summary_accounts_for_every_frame(self):
        summary = json.loads(SUMMARY.read_text())
        rows = {(row["kind"], row["severity"]): row["frames"] for row in summary["conditions"]}
        self.assertEqual(set(rows), {("occlusion", 1), ("occlusion", 5)})
        nodes = summary["frame_accounting"]["nodes"]
        for side in ("clean", "degraded"):
            self.assertEqual(nodes[f"/demo_launch_test/{side}/perception"]["frames.in"], FRAMES)
        self.assertEqual(summary["frame_accounting"]["dashboard"]["ground_truth_actions"], FRAMES)
