"""The layering rule: only `predrel_ros.nodes` imports ROS (rclpy, message packages, cv_bridge,
message_filters, launch); everything else is plain Python + numpy and runs without a ROS install."""
import ast
from pathlib import Path

import predrel_ros

PACKAGE = Path(predrel_ros.__file__).parent
ROS_MODULES = ("rclpy", "cv_bridge", "message_filters", "launch", "launch_ros", "launch_testing",
               "rosidl_runtime_py", "builtin_interfaces", "predrel_ros.msg")


def is_ros(module: str) -> bool:
    return module.endswith("_msgs") or module.split(".")[0].endswith("_msgs") or any(
        module == name or module.startswith(name + ".") for name in ROS_MODULES)


def imported_modules(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
    return found


def test_is_ros_recognises_ros_modules():
    assert is_ros("rclpy.node") and is_ros("sensor_msgs.msg") and is_ros("predrel_ros.msg")
    assert not is_ros("predrel_ros.messages_util") and not is_ros("numpy") and not is_ros("launchpad")


def test_only_the_nodes_package_imports_ros():
    offenders = [f"{path.relative_to(PACKAGE.parent)}:{line} imports {module}"
                 for path in sorted(PACKAGE.rglob("*.py")) if "nodes" not in path.relative_to(PACKAGE).parts
                 for line, module in imported_modules(path) if is_ros(module)]
    assert not offenders, "\n".join(offenders)
