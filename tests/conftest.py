"""Session-wide test setup: a private ROS domain per test session, and rclpy fixtures.

Every test session holds its own ROS_DOMAIN_ID (tests/helpers/ros_testing.py: PrivateDomain), set in
os.environ before any test runs, so node processes the tests start inherit it and two sessions on
one machine (or a robot on domain 0) never see each other's topics. Discovery stays on localhost and
the shipped Fast DDS profile applies unless the shell chose others (predrel_ros.ros.run.dds).

`controlled_dataset` (session-scoped): Path of a 3-episode controlled dataset (insert, handover,
stack; 36 frames at 128x96; folders and MCAP bags), see controlled_dataset.

Fixtures for tests marked `ros`: `ros_context` (an initialised rclpy Context, shut down afterwards)
and `ros_executor` (a SingleThreadedExecutor on it; nodes added to it are destroyed afterwards).
"""
from __future__ import annotations

import os

import pytest
from controlled_dataset import controlled_dataset  # noqa: F401  (tiny controlled dataset)
from ros_testing import PrivateDomain

from predrel_ros.core.errors import UserError
from predrel_ros.ros.run import dds

# tests/launch/test_*_launch.py are launch_testing tests: `launch_test FILE` or `colcon test` runs
# them where launch_testing is installed (CMakeLists.txt registers them); pytest does not collect them.
collect_ignore = ["launch"]

_domain: PrivateDomain | None = None


def pytest_configure(config: pytest.Config) -> None:
    global _domain
    _domain = PrivateDomain()
    os.environ["ROS_DOMAIN_ID"] = str(_domain.domain_id)
    try:
        os.environ.update(dds.node_environment())
    except UserError:
        os.environ.setdefault(dds.DISCOVERY_VARIABLE, "LOCALHOST")  # no profile without a checkout


def pytest_unconfigure(config: pytest.Config) -> None:
    if _domain is not None:
        _domain.release()


def pytest_report_header(config: pytest.Config) -> str:
    return (f"ROS_DOMAIN_ID={os.environ.get('ROS_DOMAIN_ID')} (private to this session), "
            f"{dds.DISCOVERY_VARIABLE}={os.environ.get(dds.DISCOVERY_VARIABLE)}, "
            f"{dds.PROFILE_VARIABLE}={os.environ.get(dds.PROFILE_VARIABLE, '(Fast DDS defaults)')}")


@pytest.fixture
def ros_context():
    import rclpy

    context = rclpy.Context()
    rclpy.init(context=context)
    yield context
    rclpy.try_shutdown(context=context)


@pytest.fixture
def ros_executor(ros_context):
    from rclpy.executors import SingleThreadedExecutor

    executor = SingleThreadedExecutor(context=ros_context)
    yield executor
    for node in list(executor.get_nodes()):
        executor.remove_node(node)
        node.destroy_node()
    executor.shutdown()
