"""The layering rule: only `predrel_ros.ros` imports ROS (rclpy, message and service packages,
cv_bridge, message_filters, launch, tf2, rosbag2); everything else is plain Python + numpy and runs
without a ROS install."""
import ast
import subprocess
import sys
from pathlib import Path

import predrel_ros

PACKAGE = Path(predrel_ros.__file__).parent
ROS_MODULES = ("rclpy", "cv_bridge", "message_filters", "launch", "launch_ros", "launch_testing",
               "rosidl_runtime_py", "builtin_interfaces", "rosbag2_py", "tf2_ros", "tf2_py", "sensor_msgs_py",
               "predrel_ros.msg", "predrel_ros.srv")
ROS_SUFFIXES = ("_msgs", "_srvs", "_interfaces")


def is_ros(module: str) -> bool:
    return module.split(".")[0].endswith(ROS_SUFFIXES) or any(
        module == name or module.startswith(name + ".") for name in ROS_MODULES)


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module) of every import in `path`; `from X import name` also counts X.name
    (`from predrel_ros import msg`), relative imports are resolved against the file's package."""
    package = module_name(path).split(".") if path.name == "__init__.py" else module_name(path).split(".")[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            found.append((node.lineno, module))
            found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
    return found


def outside_ros(path: Path) -> bool:
    return path.relative_to(PACKAGE).parts[0] != "ros"


def test_is_ros_recognises_ros_modules():
    assert is_ros("rclpy.node") and is_ros("sensor_msgs.msg") and is_ros("predrel_ros.msg")
    assert is_ros("std_srvs.srv") and is_ros("rcl_interfaces.msg") and is_ros("tf2_ros")
    assert not is_ros("predrel_ros.messages_util") and not is_ros("numpy") and not is_ros("launchpad")


def test_relative_and_from_package_imports_are_resolved(tmp_path, monkeypatch):
    folder = tmp_path / "predrel_ros" / "tools" / "evaluation"
    folder.mkdir(parents=True)
    probe = folder / "probe.py"
    probe.write_text("from ...msg import Entity\nfrom predrel_ros import msg\nfrom . import tables\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", tmp_path / "predrel_ros")
    modules = [module for _, module in imported_modules(probe)]
    assert "predrel_ros.msg" in modules and "predrel_ros.msg.Entity" in modules
    assert "predrel_ros.tools.evaluation.tables" in modules
    assert sum(is_ros(module) for module in modules) == 3


def test_only_the_ros_subtree_imports_ros():
    offenders = [f"{path.relative_to(PACKAGE.parent)}:{line} imports {module}"
                 for path in sorted(PACKAGE.rglob("*.py")) if outside_ros(path)
                 for line, module in imported_modules(path) if is_ros(module)]
    assert not offenders, "\n".join(offenders)


BLOCK_ROS = """
import importlib, importlib.abc, sys
ROS, SUFFIXES = {ros!r}, {suffixes!r}

class BlockRos(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0].endswith(SUFFIXES) or any(name == r or name.startswith(r + ".") for r in ROS):
            raise ImportError("ROS module " + name + " imported outside predrel_ros.ros.nodes")
        return None

sys.meta_path.insert(0, BlockRos())
for name in {modules!r}:
    importlib.import_module(name)
"""


def test_every_module_outside_the_ros_subtree_imports_without_ros():
    """Also catches imports the source scan cannot see (dynamic ones, or through another module)."""
    modules = sorted(module_name(path) for path in PACKAGE.rglob("*.py") if outside_ros(path))
    script = BLOCK_ROS.format(ros=ROS_MODULES, suffixes=ROS_SUFFIXES, modules=modules)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
