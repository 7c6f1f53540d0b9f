"""scripts/predrel-env.sh: sourcing it activates the venv and the build; twice is the same as once."""
import os
import subprocess
from pathlib import Path

import pytest
from ros_testing import require_ros

ROOT = Path(__file__).resolve().parents[2]
PRINT_ENV = ('python -c "import os, sys; print(sys.prefix); '
             'print(*[os.environ.get(k, \'\') for k in (\'PYTHONPATH\', \'AMENT_PREFIX_PATH\', '
             '\'ROS_AUTOMATIC_DISCOVERY_RANGE\', \'FASTDDS_DEFAULT_PROFILES_FILE\')], sep=chr(10))"')


def sourced(command: str, **env) -> str:
    clean = {k: v for k, v in os.environ.items()
             if k not in ("PYTHONPATH", "AMENT_PREFIX_PATH", "CMAKE_PREFIX_PATH", "VIRTUAL_ENV",
                          "ROS_AUTOMATIC_DISCOVERY_RANGE", "FASTDDS_DEFAULT_PROFILES_FILE")}
    clean.update(env)
    return subprocess.run(["bash", "-c", command], env=clean, cwd="/", capture_output=True, text=True,
                          check=True).stdout


def test_sourcing_twice_changes_nothing():
    once = sourced(f"source {ROOT}/scripts/predrel-env.sh && {PRINT_ENV}")
    twice = sourced(f"source {ROOT}/scripts/predrel-env.sh && source {ROOT}/scripts/predrel-env.sh && {PRINT_ENV}")
    assert once == twice
    prefix, pythonpath, _, discovery, profile = once.splitlines()
    assert Path(prefix) == Path(os.environ.get("PREDREL_VENV", ROOT / ".venv"))
    assert pythonpath.split(os.pathsep)[0] == str(ROOT / "src")
    assert discovery == "LOCALHOST"
    assert profile == str(ROOT / "config" / "fastdds_shm.xml")


def test_a_robots_own_dds_settings_are_kept():
    out = sourced(f"source {ROOT}/scripts/predrel-env.sh && {PRINT_ENV}",
                  ROS_AUTOMATIC_DISCOVERY_RANGE="SUBNET", FASTDDS_DEFAULT_PROFILES_FILE="/etc/robot.xml")
    assert out.splitlines()[-2:] == ["SUBNET", "/etc/robot.xml"]


@pytest.mark.ros
def test_messages_import_after_sourcing():
    require_ros()
    out = sourced(f"source {ROOT}/scripts/predrel-env.sh && python -c 'from predrel_ros.msg import Entity, "
                  "EntityArray, Predicate, PredicateArray, PredicateReliability, ReliabilityReport, "
                  "DegradationState, ActionEstimate; print(PredicateArray.__module__)'")
    assert out.strip() == "predrel_ros.msg._predicate_array"
