import os
import signal
import subprocess
import sys

import pytest
from ros_testing import require_ros

require_ros()

import rclpy  # noqa: E402
from sensor_msgs.msg import Image  # noqa: E402

from predrel_ros.ros.kit.runtime import fresh_context, spin_until  # noqa: E402
from predrel_ros.ros.run import processes  # noqa: E402
from predrel_ros.ros.run.echo_relay import ECHO_QOS  # noqa: E402

pytestmark = pytest.mark.ros

BAD_NODE = """
import sys
from predrel_ros.core.errors import UserError
from predrel_ros.ros.kit.runtime import run_node

def make_bad_node():
    raise UserError("parameter rate must be > 0, got -1")

sys.exit(run_node(make_bad_node))
"""


def test_a_bad_parameter_is_reported_without_a_traceback():
    result = subprocess.run([sys.executable, "-c", BAD_NODE], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert result.stderr.strip() == "make_bad_node: error: parameter rate must be > 0, got -1"


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_node_shuts_down_in_order_on_sigint_and_sigterm(signum, ros_context, ros_executor):
    namespace = f"/test_runtime_{os.getpid()}_{signum}"
    node = processes.start_node("echo_relay", ["-r", f"__ns:={namespace}"], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
    try:
        probe = rclpy.create_node("probe", namespace=namespace, context=ros_context)
        ros_executor.add_node(probe)
        subscription = probe.create_subscription(Image, "image_echo", lambda msg: None, ECHO_QOS)
        # the node is built (and run_node's handlers are installed) once its publisher is seen
        assert spin_until(ros_executor, lambda: subscription.get_publisher_count() > 0, 30)
        node.send_signal(signum)
        assert node.wait(15) == 0
    finally:
        processes.stop_node(node)
    assert "Traceback" not in node.stdout.read()


def test_a_fresh_context_is_its_own_and_is_shut_down_on_leaving():
    with fresh_context() as (context, executor):
        assert context.ok() and context is not rclpy.get_default_context() and executor.context is context
    assert not context.ok()
