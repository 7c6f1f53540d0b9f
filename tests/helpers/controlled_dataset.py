"""A tiny controlled dataset for tests (a pytest fixture other test folders can import).

    # in a conftest.py
    from controlled_dataset import controlled_dataset  # noqa: F401

    def test_something(controlled_dataset):          # Path of a dataset folder
        dataset = open_dataset(controlled_dataset)  # 3 episodes (insert, handover, stack), 36 frames,
                                                    # 128x96, folders + MCAP bags (bags/<name>)

It is generated once per test session (about 5-10 s on two cores) into a temporary folder.
"""
from __future__ import annotations

from pathlib import Path

import pytest

TINY_TEMPLATES = ("insert", "handover", "stack")
TINY_SIZE = (128, 96)
TINY_FRAMES = 36


def build_tiny_dataset(root: Path, seed: int = 0) -> Path:
    """Generate the tiny dataset into `root` (new or empty); returns `root`."""
    from predrel_ros.tools.simulator.config import GenerationConfig
    from predrel_ros.tools.simulator.generate import generate_dataset

    config = GenerationConfig(width=TINY_SIZE[0], height=TINY_SIZE[1], frames=TINY_FRAMES,
                              formats=("mcap", "folder"))
    generate_dataset(root, len(TINY_TEMPLATES), seed, config, templates=TINY_TEMPLATES, progress=False)
    return Path(root)


@pytest.fixture(scope="session")
def controlled_dataset(tmp_path_factory) -> Path:
    """Path of a 3-episode controlled dataset (see the module docstring)."""
    return build_tiny_dataset(tmp_path_factory.mktemp("controlled") / "dataset")
