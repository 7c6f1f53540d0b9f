"""DDS settings for everything that starts predrel_ros nodes.

By default nodes stay on this machine and move images through shared memory: the shipped Fast DDS
profile `config/fastdds_shm.xml` (large SHM segments + UDP on loopback) and
`ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`. Both are defaults only: a robot whose nodes span several
machines sets FASTDDS_DEFAULT_PROFILES_FILE (or the launch argument `fastdds_profile`) and the
discovery range itself, and `node_environment` keeps them.

Launch files apply the same settings with
`SetEnvironmentVariable("FASTDDS_DEFAULT_PROFILES_FILE", LaunchConfiguration("fastdds_profile"))`,
the argument defaulting to `str(shipped_profile())`.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping

from predrel_ros.core.errors import UserError

PACKAGE = "predrel_ros"
PROFILE_FILE = "fastdds_shm.xml"
PROFILE_VARIABLE = "FASTDDS_DEFAULT_PROFILES_FILE"
DISCOVERY_VARIABLE = "ROS_AUTOMATIC_DISCOVERY_RANGE"


def shipped_profile() -> Path:
    """The Fast DDS profile shipped with the package (the source checkout's, else the installed one)."""
    candidates = [Path(__file__).resolve().parents[4] / "config" / PROFILE_FILE]  # src/predrel_ros/ros/run
    try:
        from ament_index_python.packages import PackageNotFoundError, get_package_share_directory
        try:
            candidates.append(Path(get_package_share_directory(PACKAGE)) / "config" / PROFILE_FILE)
        except (PackageNotFoundError, OSError):  # OSError: no AMENT_PREFIX_PATH (env script not sourced)
            pass
    except ImportError:
        pass
    for path in candidates:
        if path.is_file():
            return path
    raise UserError(f"the Fast DDS profile {PROFILE_FILE} was not found (looked in "
                    f"{', '.join(map(str, candidates))}); build the package (make setup) or set "
                    f"{PROFILE_VARIABLE}")


def node_environment(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """Environment for node processes: `base` (default os.environ) plus the local DDS defaults.

    Values already in `base` win, so a robot's own profile and discovery range are kept.
    """
    env = dict(os.environ if base is None else base)
    env.setdefault(DISCOVERY_VARIABLE, "LOCALHOST")
    if not env.get(PROFILE_VARIABLE):
        env[PROFILE_VARIABLE] = str(shipped_profile())
    return env
