#!/usr/bin/env bash
# Entrypoint of the predrel_ros images: ROS 2 and the package's install on the environment, then the
# command (default: ros2 launch predrel_ros perception.launch.py). Extra `docker run IMAGE ARGS`
# replace the command, e.g. `ros2 launch predrel_ros perception.launch.py image:=/camera/image_raw`.
set -euo pipefail
# shellcheck disable=SC1090,SC1091
source "${ROS_SETUP:-/opt/ros/${ROS_DISTRO}/setup.bash}"
# shellcheck disable=SC1091
source /opt/predrel_ros/install/setup.bash
exec "$@"
