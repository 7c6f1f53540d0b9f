# Source me (bash): `source scripts/predrel-env.sh` makes the venv and the colcon build of
# predrel_ros active in this shell. Every make target runs its commands with it.
#
# - activates .venv (ROS 2 Kilted from PyPI, colcon, the project's packages; `make setup`)
# - sources install/local_setup.bash when the package was built (predrel_ros.msg, lib/predrel_ros/*)
# - puts src/ first on PYTHONPATH, so edits to src/predrel_ros take effect without a rebuild while
#   the generated predrel_ros.msg still comes from install/ (see src/predrel_ros/__init__.py)
# - keeps DDS on this machine unless you chose otherwise before sourcing:
#   ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST and FASTDDS_DEFAULT_PROFILES_FILE=config/fastdds_shm.xml
#   (shared memory with large segments + UDP on loopback). A robot whose nodes span several
#   machines sets both before sourcing this file.
# Sourcing it twice changes nothing.

_predrel_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
_predrel_venv=${PREDREL_VENV:-$_predrel_root/.venv}

_predrel_prepend() {  # _predrel_prepend VAR DIR: put DIR first in the ':' list VAR (once)
  local current=":${!1:-}:"
  current=${current//:$2:/:}
  current=${current#:}
  current=${current%:}
  export "$1=$2${current:+:$current}"
}
_predrel_add() {  # _predrel_add VAR DIR: prepend DIR to the ':' list VAR unless it is there already
  case ":${!1:-}:" in *":$2:"*) ;; *) export "$1=$2${!1:+:${!1}}" ;; esac
}

if [ ! -x "$_predrel_venv/bin/python" ]; then
  echo "predrel-env: no venv at $_predrel_venv; run 'make setup' in $_predrel_root first" >&2
  unset _predrel_root _predrel_venv
  unset -f _predrel_prepend _predrel_add
  return 1 2>/dev/null || exit 1
fi

# shellcheck disable=SC1091
source "$_predrel_venv/bin/activate"
_predrel_add AMENT_PREFIX_PATH "$_predrel_venv"
_predrel_add CMAKE_PREFIX_PATH "$_predrel_venv"
if [ -f "$_predrel_root/install/local_setup.bash" ]; then
  # colcon's setup scripts read unset variables: allow that even in `set -u` callers
  case $- in *u*) _predrel_nounset=1; set +u ;; *) _predrel_nounset= ;; esac
  # shellcheck disable=SC1091
  source "$_predrel_root/install/local_setup.bash"
  [ -n "$_predrel_nounset" ] && set -u
  unset _predrel_nounset
fi
_predrel_prepend PYTHONPATH "$_predrel_root/src"
# colcon leaves a trailing ':' (an empty entry means the current directory): drop it
if [ -n "${LD_LIBRARY_PATH:-}" ]; then export LD_LIBRARY_PATH=${LD_LIBRARY_PATH%:}; fi

export ROS_DISTRO=kilted ROS_VERSION=2 ROS_PYTHON_VERSION=3
export RMW_IMPLEMENTATION=${RMW_IMPLEMENTATION:-rmw_fastrtps_cpp}
export ROS_AUTOMATIC_DISCOVERY_RANGE=${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}
export FASTDDS_DEFAULT_PROFILES_FILE=${FASTDDS_DEFAULT_PROFILES_FILE:-$_predrel_root/config/fastdds_shm.xml}
export PREDREL_ROOT=$_predrel_root

unset _predrel_root _predrel_venv
unset -f _predrel_prepend _predrel_add
