"""The colcon build (make setup) installs the layout robots use: messages, the Python package,
one executable per node module, config/ and launch/ under share/."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
from ros_testing import require_ros

require_ros()

from ament_index_python.packages import get_package_prefix, get_package_share_directory  # noqa: E402

pytestmark = pytest.mark.ros

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "src" / "predrel_ros"


def installed_package() -> Path:
    prefix = Path(get_package_prefix("predrel_ros"))
    (package,) = prefix.glob("lib/python3*/site-packages/predrel_ros")
    return package


def test_every_node_module_has_an_executable():
    lib = Path(get_package_prefix("predrel_ros")) / "lib" / "predrel_ros"
    nodes = sorted(p.stem for p in (SOURCE / "ros" / "nodes").glob("*_node.py"))
    assert "perception_node" in nodes and not (lib / "echo_node").exists()
    for name in nodes:
        executable = lib / name
        assert executable.is_file() and os.access(executable, os.X_OK), f"{executable}: run make setup"
        assert f"from predrel_ros.ros.nodes.{name} import main" in executable.read_text()


def test_config_is_installed():
    share = Path(get_package_share_directory("predrel_ros"))
    assert (share / "config" / "fastdds_shm.xml").read_text() == (ROOT / "config" / "fastdds_shm.xml").read_text()


def test_installed_python_package_is_current():
    package = installed_package()
    stale = []
    for path in SOURCE.rglob("*.py"):
        installed = package / path.relative_to(SOURCE)
        if not installed.is_file() or installed.read_bytes() != path.read_bytes():
            stale.append(str(path.relative_to(SOURCE)))
    assert not stale, f"install/ is older than src/ for {stale[:5]}: run make setup"


def test_install_alone_imports_as_on_a_robot():
    """Without src/ on the path (a robot's colcon workspace) everything comes from install/."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in env.get("PYTHONPATH", "").split(os.pathsep)
                                        if p and Path(p).resolve() != (ROOT / "src").resolve())
    code = ("import predrel_ros.msg, predrel_ros.ros.messages.entities as c; "
            "from predrel_ros.msg import Entity, EntityArray, Predicate, PredicateArray, PredicateReliability, "
            "ReliabilityReport, DegradationState, ActionEstimate; print(c.__file__)")
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd="/", capture_output=True, text=True,
                         check=True).stdout
    assert Path(out.strip()).is_relative_to(installed_package())
