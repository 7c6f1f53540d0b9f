"""What the launch tests share: the launch files of this checkout (else the installed ones), a tiny
controlled bag and a stand-in perception model (fixed detections: the graph's plumbing is under
test here, not the model), all in one temporary folder per test file."""
from __future__ import annotations

import importlib.util
import sys
import tempfile
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS / "helpers"))  # controlled_dataset (pytest.ini's pythonpath, for launch_test)


def launch_file(name: str) -> Path:
    path = TESTS.parent / "launch" / name
    if path.is_file():
        return path
    from ament_index_python.packages import get_package_share_directory
    return Path(get_package_share_directory("predrel_ros")) / "launch" / name


def workspace() -> Path:
    return Path(tempfile.mkdtemp(prefix="predrel_launch_test_"))


def tiny_bag(root: Path) -> Path:
    from controlled_dataset import build_tiny_dataset
    dataset = build_tiny_dataset(root / "dataset")
    return next(path for path in sorted((dataset / "bags").iterdir()) if "insert" in path.name)


def stand_in_model(root: Path) -> Path:
    spec = importlib.util.spec_from_file_location("node_graph", TESTS / "nodes" / "node_graph.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.scene_model(root / "model")
