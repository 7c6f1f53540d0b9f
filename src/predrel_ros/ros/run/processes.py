"""Starting and stopping predrel_ros node executables as processes.

colcon generates one executable `lib/predrel_ros/<name>` per `predrel_ros/ros/nodes/<name>.py` whose
name ends in `_node` (CMakeLists.txt); `ros2 run predrel_ros <name>` and launch files start the same
files. Diagnostic tools that are not product nodes (the echo relay of `predrel transport-check` and
`predrel bench pipeline`) are not installed as executables: they start as `python -m MODULE`.
"""
from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Mapping, Sequence

from predrel_ros.core.errors import UserError
from predrel_ros.ros.run.dds import PACKAGE, node_environment

#: tool name -> module run with `python -m` (not installed as a node executable)
TOOL_MODULES = {"echo_relay": "predrel_ros.ros.run.echo_relay"}


def node_executable(name: str) -> Path:
    """Path of the installed executable of node `name` (e.g. "perception_node")."""
    try:
        from ament_index_python.packages import PackageNotFoundError, get_package_prefix
        prefix = Path(get_package_prefix(PACKAGE))
    except (ImportError, PackageNotFoundError) as error:
        raise UserError(f"the {PACKAGE} ROS package is not installed ({error}); run `make setup` and "
                        f"`source scripts/predrel-env.sh`, or source your colcon workspace") from None
    path = prefix / "lib" / PACKAGE / name
    if not path.is_file():
        raise UserError(f"no node executable {path}; colcon generates it from "
                        f"src/{PACKAGE}/ros/nodes/{name}.py: rebuild with `make setup`")
    return path


def installed_executable(package: str, executable: str) -> Path:
    """lib/<package>/<executable> of an installed ROS package: what `ros2 run` and launch_ros start."""
    if package == PACKAGE:
        return node_executable(executable)
    try:
        from ament_index_python.packages import PackageNotFoundError, get_package_prefix
        prefix = Path(get_package_prefix(package))
    except (ImportError, PackageNotFoundError) as error:
        raise UserError(f"package {package!r} is not installed ({error}); source its workspace") from None
    path = prefix / "lib" / package / executable
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise UserError(f"no executable {path}")
    return path


def terminate_with_parent() -> None:
    """In the child before exec: Linux sends it SIGTERM when the process that started it dies."""
    libc = ctypes.CDLL(None, use_errno=True)
    PR_SET_PDEATHSIG = 1
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def start_node(name: str, ros_args: Sequence[str] = (), env: Mapping[str, str] | None = None,
               **popen_kwargs) -> subprocess.Popen:
    """Start node `name` (an installed node executable or one of `TOOL_MODULES`) with
    `--ros-args *ros_args` and the local DDS defaults (`node_environment`).

    The node is terminated when the calling thread's process dies (Linux sends SIGTERM when the
    thread that started it ends: call this from a thread that lives as long as the node should), so
    a killed test run or tool leaves no node behind.
    """
    command = ([sys.executable, "-m", TOOL_MODULES[name]] if name in TOOL_MODULES
               else [str(node_executable(name))])
    if ros_args:
        command += ["--ros-args", *ros_args]
    if sys.platform.startswith("linux"):
        popen_kwargs.setdefault("preexec_fn", terminate_with_parent)
    return subprocess.Popen(command, env=node_environment(env), **popen_kwargs)


def stop_node(process: subprocess.Popen, timeout_s: float = 10.0) -> int:
    """Interrupt `process` (SIGINT, as Ctrl-C and ros2 launch do), kill it after `timeout_s`."""
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return process.returncode
