import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from predrel_ros.degradations import draws


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(-10**9, 10**12), st.integers(-5, 10**6))
def test_draws_are_pure_functions_of_seed_stream_and_keys(seed, frame, item):
    first = draws.uniform(seed, "s", frame, item)
    assert first.shape == (1,) and 0.0 <= first[0] < 1.0
    np.testing.assert_array_equal(draws.uniform(seed, "s", frame, item), first)
    batch = draws.uniform(seed, "s", np.array([frame, frame + 1]), item)
    assert batch[0] == first[0]
    assert draws.uniform(seed, "t", frame, item)[0] != first[0]
    assert draws.uniform(seed ^ 1, "s", frame, item)[0] != first[0]


def test_uniforms_and_normals_have_the_right_distribution():
    u = draws.uniform(3, "u", np.arange(200_000))
    assert abs(u.mean() - 0.5) < 0.005 and abs(u.var() - 1 / 12) < 0.002
    assert abs(np.corrcoef(u[:-1], u[1:])[0, 1]) < 0.01
    z = draws.normal(3, "z", np.arange(200_000))
    assert abs(z.mean()) < 0.01 and abs(z.std() - 1.0) < 0.01


def test_keys_broadcast():
    grid = draws.uniform(1, "g", np.arange(4)[:, None], np.arange(3)[None, :])
    assert grid.shape == (4, 3) and len(np.unique(grid)) == 12
