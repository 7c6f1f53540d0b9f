"""Fixtures of the node tests: the node-graph helpers (node_graph.py) and a bag of the tiny
controlled dataset."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # node_graph.py, for the tests here


@pytest.fixture(scope="session")
def tiny_bag(controlled_dataset) -> Path:
    """A 36-frame 128x96 MCAP bag with depth, camera info and ground truth (the insert episode)."""
    return next(path for path in sorted((controlled_dataset / "bags").iterdir()) if "insert" in path.name)
