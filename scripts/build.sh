#!/usr/bin/env bash
# Build the predrel_ros ROS package (messages, Python package, node executables) with colcon into
# install/. `make setup` runs it after scripts/bootstrap.sh; extra arguments go to colcon build.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck disable=SC1091
source scripts/predrel-env.sh

exec 9>"$ROOT/.setup.lock"
flock 9

T0=$SECONDS
# colcon-ros identifies the package by package.xml (ament_cmake); setup.py is for pip only.
if ! colcon --log-base log build --base-paths "$ROOT" --build-base build --install-base install \
    --event-handlers console_direct- \
    --cmake-args -DPython3_EXECUTABLE="$VIRTUAL_ENV/bin/python" -Wno-dev "$@"; then
  echo "[build] colcon build failed; the end of log/latest_build/predrel_ros/stdout_stderr.log:" >&2
  tail -n 40 log/latest_build/predrel_ros/stdout_stderr.log >&2 || true
  exit 1
fi
echo "[build] colcon build of predrel_ros: $((SECONDS - T0)) s"
