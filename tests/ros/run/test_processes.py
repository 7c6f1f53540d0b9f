import os
import subprocess
import sys
import time

import pytest
from ros_testing import require_ros

from predrel_ros.core.errors import UserError

require_ros()

from predrel_ros.ros.run import processes  # noqa: E402

pytestmark = pytest.mark.ros


def test_unknown_node_names_the_source_file():
    with pytest.raises(UserError, match=r"no node executable .*/lib/predrel_ros/no_such_node; colcon generates "
                                        r"it from src/predrel_ros/ros/nodes/no_such_node.py"):
        processes.node_executable("no_such_node")


def test_a_node_does_not_outlive_the_process_that_started_it():
    code = ("import time; from predrel_ros.ros.run import processes; "
            "print(processes.start_node('echo_relay').pid, flush=True); time.sleep(60)")
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    node_pid = int(parent.stdout.readline())
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(node_pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    os.kill(node_pid, 9)
    pytest.fail("echo_relay kept running after its parent was killed")
