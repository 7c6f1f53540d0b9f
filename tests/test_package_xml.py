"""package.xml names every third-party module the package imports (its rosdep key, or the comment
that says why it is installed apart)."""
import ast
import sys
from pathlib import Path

import predrel_ros

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = Path(predrel_ros.__file__).parent

#: import name -> rosdep key in package.xml (None: named in the "not resolvable by rosdep" comment)
ROSDEP_KEYS = {
    "ament_index_python": "ament_index_python", "cv2": "python3-opencv", "diagnostic_msgs": "diagnostic_msgs",
    "launch": "launch", "launch_ros": "launch_ros", "lifecycle_msgs": "lifecycle_msgs",
    "matplotlib": "python3-matplotlib",
    "message_filters": "message_filters", "numpy": "python3-numpy", "onnx": "python3-onnx",
    "onnxruntime": "python3-onnxruntime-pip", "rcl_interfaces": "rcl_interfaces", "rclpy": "rclpy",
    "rosbags": "python3-rosbags-pip", "scipy": "python3-scipy", "sensor_msgs": "sensor_msgs",
    "std_msgs": "std_msgs", "tf2_ros": "tf2_ros", "threadpoolctl": "python3-threadpoolctl", "torch": "python3-torch",
    "tqdm": "python3-tqdm", "yaml": "python3-yaml", "mujoco": None, "tensorrt": None,
    "dask": None, "distributed": None,
}


def third_party_imports() -> set[str]:
    found = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return {name for name in found if name not in sys.stdlib_module_names and name != "predrel_ros"}


def test_every_imported_module_is_a_dependency():
    text = (ROOT / "package.xml").read_text()
    unknown = sorted(third_party_imports() - set(ROSDEP_KEYS))
    assert not unknown, f"imported but not mapped to a package.xml key here: {unknown}"
    for module in sorted(third_party_imports()):
        key = ROSDEP_KEYS[module]
        assert (f"<exec_depend>{key}</exec_depend>" in text or f"<depend>{key}</depend>" in text
                if key else f"{module} (" in text), f"package.xml does not name {module} ({key or 'comment'})"
