"""Evaluate perception on a rosbag2 bag: config/replay_eval.run.yaml (also `predrel run replay_eval`).
The bag is replayed as clean and degraded twins under a degradation schedule through both pipelines;
the reliability node compares the degraded predicates with the reference of `reference_mode`.

    ros2 launch predrel_ros replay_eval.launch.py bag:=/path/to/bag schedule:=sweep:blur:30
    ros2 launch predrel_ros replay_eval.launch.py bag:=/path/to/bag reference_mode:=ground_truth
    ros2 launch predrel_ros replay_eval.launch.py --show-args
"""
from predrel_ros.ros.run.launch_support import run_file_launch_description


def generate_launch_description():
    return run_file_launch_description("replay_eval.run.yaml")
