"""Depth discontinuities (perception/depth.py, `depth_edges`) against a per-pixel reading of their definition."""
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from predrel_ros.perception.depth import depth_edges


def edges_by_definition(depth: np.ndarray, jump: float, far_side_only: bool) -> np.ndarray:
    """Each pixel against each 4-neighbour, written out."""
    height, width = depth.shape
    edges = np.zeros(depth.shape, bool)
    for y in range(height):
        for x in range(width):
            for ny, nx in ((y - 1, x), (y + 1, x), (y, x - 1), (y, x + 1)):
                if not (0 <= ny < height and 0 <= nx < width):
                    continue
                here, there = float(depth[y, x]), float(depth[ny, nx])
                if math.isfinite(here) and math.isfinite(there):
                    if abs(here - there) > jump * min(here, there) and (not far_side_only or here > there):
                        edges[y, x] = True
                elif not far_side_only and math.isfinite(here) != math.isfinite(there):
                    edges[y, x] = True
    return edges


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), height=st.integers(1, 9), width=st.integers(1, 9),
       far_side_only=st.booleans())
def test_edges_are_the_pixels_with_a_neighbour_across_a_jump(seed, height, width, far_side_only):
    rng = np.random.default_rng(seed)
    depth = rng.choice(np.array([0.5, 0.51, 0.8, 1.0, 2.0], np.float32), size=(height, width))
    depth[rng.random(depth.shape) < 0.2] = np.nan
    np.testing.assert_array_equal(depth_edges(depth, 0.04, far_side_only),
                                  edges_by_definition(depth, 0.04, far_side_only))


def test_a_step_marks_both_sides_or_the_far_side_only():
    depth = np.full((4, 6), 2.0, np.float32)
    depth[:, :3] = 1.0
    both, far = depth_edges(depth, 0.04), depth_edges(depth, 0.04, far_side_only=True)
    assert both[:, 2:4].all() and both.sum() == 8
    assert far[:, 3].all() and far.sum() == 4
