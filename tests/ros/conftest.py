"""Fixtures of the ROS tests: a bag of the tiny controlled dataset."""
from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def tiny_bag(controlled_dataset) -> Path:
    """A 36-frame 128x96 MCAP bag with depth, camera info and ground truth (the insert episode)."""
    return next(path for path in sorted((controlled_dataset / "bags").iterdir()) if "insert" in path.name)
