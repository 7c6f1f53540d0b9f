"""Helpers for tests of ROS code (the fixtures in tests/conftest.py build on them).

A test module that needs rclpy and the built messages starts with

    from ros_testing import require_ros
    require_ros()
    pytestmark = pytest.mark.ros

and imports ROS modules after that call.
"""
from __future__ import annotations

import fcntl
import os
import tempfile
from pathlib import Path

#: set by `make test` and CI: ROS tests must run, a missing build is an error and not a skip
REQUIRE_ROS_VARIABLE = "PREDREL_REQUIRE_ROS"

#: domain ids handed out to test sessions; 0 (the default of robots) is never used. Above 101 the
#: DDS ports of a domain may collide with Linux's ephemeral port range.
TEST_DOMAIN_IDS = range(1, 102)


def require_ros() -> None:
    """Skip the calling test module unless rclpy and predrel_ros.msg import.

    Where PREDREL_REQUIRE_ROS=1 (make test, CI) the import error is raised instead, so a broken
    build cannot pass as skipped tests.
    """
    try:
        import rclpy  # noqa: F401
        import sensor_msgs.msg  # noqa: F401

        import predrel_ros.msg  # noqa: F401
    except ImportError as error:
        message = (f"needs rclpy and the predrel_ros messages built with colcon (make setup, then "
                   f"source scripts/predrel-env.sh); a plain `pip install -e .` has neither: {error}")
        if os.environ.get(REQUIRE_ROS_VARIABLE) == "1":
            raise ImportError(f"{message} [{REQUIRE_ROS_VARIABLE}=1]") from error
        import pytest
        pytest.skip(message, allow_module_level=True)


class PrivateDomain:
    """A ROS_DOMAIN_ID that no other process on this machine holds, until `release()`.

    Test sessions that run at the same time (two developers, CI) would otherwise see each other's
    topics. Holding is an exclusive lock on a file per domain id, dropped by the kernel when the
    process ends, so a crashed session leaves nothing behind.
    """

    def __init__(self, lock_dir: Path | None = None, domain_ids: range = TEST_DOMAIN_IDS) -> None:
        self._lock_dir = Path(lock_dir or tempfile.gettempdir())
        self._file = None
        start = os.getpid() % len(domain_ids)
        for offset in range(len(domain_ids)):
            domain_id = domain_ids[(start + offset) % len(domain_ids)]
            handle = open(self._lock_dir / f"predrel_ros-domain-{domain_id}.lock", "w")
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                handle.close()
                continue
            self._file = handle
            self.domain_id = domain_id
            return
        raise RuntimeError(f"all ROS domain ids {domain_ids.start}..{domain_ids.stop - 1} are held by "
                           f"other processes (lock files in {self._lock_dir})")

    def release(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> "PrivateDomain":
        return self

    def __exit__(self, *exc) -> None:
        self.release()
