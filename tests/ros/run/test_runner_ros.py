"""`predrel run` with a real node over DDS: name, namespace and remappings reach it; Ctrl-C stops it."""
import signal
import subprocess
import sys

import numpy as np
import pytest
from ros_testing import require_ros

require_ros()

from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import Image  # noqa: E402

from predrel_ros.ros.kit.runtime import spin_until  # noqa: E402
from predrel_ros.ros.messages.images import image_to_numpy, numpy_to_image  # noqa: E402

pytestmark = pytest.mark.ros

RUN_FILE = """
arguments:
  camera: {default: /cam/image}
nodes:
  - name: echo
    executable: echo_relay
    namespace: probe
    remappings: {image: $(var camera)}
"""


def test_predrel_run_starts_a_named_remapped_node_and_stops_it_on_sigint(tmp_path, ros_context, ros_executor):
    from rclpy.node import Node

    path = tmp_path / "echo.run.yaml"
    path.write_text(RUN_FILE)
    runner = subprocess.Popen([sys.executable, "-m", "predrel_ros.tools.cli.main", "run", str(path), "camera:=/cam/rgb",
                               "--log-dir", str(tmp_path / "logs")],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        node = Node("runner_probe", context=ros_context)
        ros_executor.add_node(node)
        qos = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        echoes = []
        node.create_subscription(Image, "/probe/image_echo", echoes.append, qos)
        publisher = node.create_publisher(Image, "/cam/rgb", qos)
        assert spin_until(ros_executor, lambda: publisher.get_subscription_count() > 0, 30), \
            "the node did not subscribe to the remapped /cam/rgb"
        assert spin_until(ros_executor, lambda: ("echo", "/probe") in node.get_node_names_and_namespaces(), 10)
        pixels = np.arange(48, dtype=np.uint8).reshape(4, 4, 3)
        publisher.publish(numpy_to_image(pixels, "rgb8"))
        assert spin_until(ros_executor, lambda: bool(echoes), 10)
        np.testing.assert_array_equal(image_to_numpy(echoes[0]), pixels)
    finally:
        runner.send_signal(signal.SIGINT)
        out, err = runner.communicate(timeout=30)
    assert runner.returncode == 128 + signal.SIGINT, err
    assert "SIGINT: stopping probe/echo" in err
    assert (tmp_path / "logs" / "probe_echo.log").exists()
