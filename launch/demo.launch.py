"""The demo graph of config/demo.run.yaml (the same file `predrel run demo` and `make demo` start):
a controlled-set bag replayed as clean and degraded twins under a severity sweep, two perception ->
predicate pipelines, clean-twin reliability, trust-gated action recognition and the dashboard.

    ros2 launch predrel_ros demo.launch.py bag:=/path/to/episode_bag summary_dir:=/tmp/demo
    ros2 launch predrel_ros demo.launch.py --show-args
"""
from predrel_ros.ros.run.launch_support import run_file_launch_description


def generate_launch_description():
    return run_file_launch_description("demo.run.yaml")
