"""Launch descriptions built from run files, so `ros2 launch` and `predrel run` start the same graph.

Each launch file of the package is three lines:

    from predrel_ros.ros.run.launch_support import run_file_launch_description
    def generate_launch_description():
        return run_file_launch_description("demo.run.yaml")

The run file's arguments become launch arguments (same names, defaults and descriptions), plus
`namespace` (put in front of every node's namespace), `fastdds_profile` (default: the shipped
shared-memory profile) and `discovery_range` (ROS_AUTOMATIC_DISCOVERY_RANGE, default LOCALHOST
unless the shell sets it). When the launch runs, the run file is resolved with the arguments'
values and each node becomes a launch_ros `Node`: params files then inline parameters, remappings,
the run file's and the node's env; `required` nodes shut the launch down when they exit, as do
`exit_ok` nodes (a replay that played its bag). `output: log` nodes log to files only.
Imports launch and launch_ros, which ROS 2 provides (not installable from PyPI).
"""
from __future__ import annotations

import os
from pathlib import Path

from predrel_ros.core.errors import UserError
from predrel_ros.core.package_files import config_file
from predrel_ros.ros.run.dds import DISCOVERY_VARIABLE, PROFILE_VARIABLE, shipped_profile
from predrel_ros.ros.run.processes import installed_executable
from predrel_ros.ros.run.run_file import NodeSpec, RunFile, load_run_file, read_arguments

#: launch arguments every run-file launch adds to the run file's own
COMMON_ARGUMENTS = ("namespace", "fastdds_profile", "discovery_range")


def _launch_output(spec: NodeSpec) -> str:
    return "log" if spec.output == "log" else "screen"


def node_actions(run: RunFile) -> list:
    """launch_ros Node actions of a resolved run file (with Shutdown on the exits that end the run)."""
    from launch.actions import Shutdown, TimerAction
    from launch_ros.actions import Node

    for spec in run.nodes:  # refuse a missing executable before anything starts
        try:
            installed_executable(spec.package, spec.executable)
        except UserError as error:
            raise UserError(f"{run.path}: node {spec.label}: {error}") from None
    actions = []
    for spec in run.nodes:
        on_exit = None
        if spec.exit_ok:  # the others drain for finish_grace_s first, as with predrel run
            finished = Shutdown(reason=f"{spec.label} finished")
            on_exit = [TimerAction(period=run.finish_grace_s, actions=[finished]) if run.finish_grace_s else finished]
        elif spec.required:
            on_exit = [Shutdown(reason=f"required node {spec.label} exited")]
        parameters = [str(path) for path in spec.params_files]
        if spec.parameters:
            parameters.append(dict(spec.parameters))
        actions.append(Node(
            package=spec.package, executable=spec.executable, name=spec.name,
            namespace=spec.namespace or "", parameters=parameters or None,
            remappings=list(spec.remappings) or None, additional_env={**run.env, **spec.env} or None,
            output=_launch_output(spec), on_exit=on_exit))
    return actions


def run_file_launch_description(run_file: str | Path):
    """A LaunchDescription starting `run_file` (a path, or a file name in the package's config/)."""
    from launch.actions import DeclareLaunchArgument, OpaqueFunction, SetEnvironmentVariable
    from launch.substitutions import LaunchConfiguration

    from launch import LaunchDescription

    path = Path(run_file)
    if not path.is_file():
        path = config_file(str(run_file))
    arguments = read_arguments(path)
    clash = [a.name for a in arguments if a.name in COMMON_ARGUMENTS]
    if clash:
        raise ValueError(f"{path}: arguments {clash} are reserved for the launch file")
    actions = []
    for argument in arguments:
        kwargs = {"description": argument.description}
        if argument.default is not None:
            kwargs["default_value"] = argument.default
        actions.append(DeclareLaunchArgument(argument.name, **kwargs))
    actions += [
        DeclareLaunchArgument("namespace", default_value="",
                              description="namespace put in front of every node's (one robot's graph)"),
        DeclareLaunchArgument("fastdds_profile",
                              default_value=os.environ.get(PROFILE_VARIABLE) or str(shipped_profile()),
                              description="Fast DDS profile XML (default: the shipped shared-memory profile, "
                                          "UDP on loopback; a robot spanning machines gives its own)"),
        DeclareLaunchArgument("discovery_range", default_value=os.environ.get(DISCOVERY_VARIABLE) or "LOCALHOST",
                              description="ROS_AUTOMATIC_DISCOVERY_RANGE: LOCALHOST, SUBNET, OFF or SYSTEM_DEFAULT"),
        SetEnvironmentVariable(PROFILE_VARIABLE, LaunchConfiguration("fastdds_profile")),
        SetEnvironmentVariable(DISCOVERY_VARIABLE, LaunchConfiguration("discovery_range")),
    ]

    def resolve(context):
        values = {argument.name: LaunchConfiguration(argument.name).perform(context) for argument in arguments}
        namespace = LaunchConfiguration("namespace").perform(context)
        return node_actions(load_run_file(path, values, namespace=namespace))

    actions.append(OpaqueFunction(function=resolve))
    return LaunchDescription(actions)
