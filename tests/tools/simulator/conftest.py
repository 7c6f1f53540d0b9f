"""Fixtures of the controlled-set tests: short simulated episodes, generated once per session."""
from __future__ import annotations

import pytest

SHORT = {"width": 128, "height": 96, "frames": 48}


@pytest.fixture(scope="session")
def short_episode():
    """short_episode(template, seed) -> Episode at 128x96, 48 frames (cached per session)."""
    from predrel_ros.tools.simulator.config import GenerationConfig
    from predrel_ros.tools.simulator.episode import generate_episode

    cache = {}

    def get(template: str, seed: int = 0):
        if (template, seed) not in cache:
            cache[(template, seed)] = generate_episode(template, seed, GenerationConfig(**SHORT))
        return cache[(template, seed)]
    return get
