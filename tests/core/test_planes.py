import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from predrel_ros.core.planes import fit_plane


@settings(max_examples=40, deadline=None)
@given(st.floats(-0.9, 0.9), st.floats(-0.9, 0.9), st.floats(0.2, 3.0), st.integers(0, 2 ** 16))
def test_the_fitted_plane_holds_its_points_and_faces_the_camera(tilt_x, tilt_y, distance, seed):
    normal = np.array([tilt_x, tilt_y, -1.0])
    normal /= np.linalg.norm(normal)
    rng = np.random.default_rng(seed)
    # points of the plane n . p + distance = 0, spread around its foot point
    basis = np.linalg.svd(normal[None, :])[2][1:]
    points = -distance * normal + rng.uniform(-1, 1, (200, 2)) @ basis
    fitted, offset = fit_plane(points)
    assert offset >= 0
    assert abs(offset - distance) < 1e-4
    assert np.allclose(fitted, normal, atol=1e-4)
    assert np.abs(points @ fitted + offset).max() < 1e-4


@settings(max_examples=40, deadline=None)
@given(st.integers(3, 400), st.floats(0.0, 0.05), st.integers(0, 2 ** 16))
def test_the_fitted_normal_is_the_least_spread_direction_of_noisy_points(count, noise, seed):
    """The normal is the last right singular vector of the centred points (the least-squares plane),
    turned towards the camera, for noisy and for degenerate-looking point sets alike."""
    rng = np.random.default_rng(seed)
    points = rng.uniform(-1, 1, (count, 3)) * [1.0, 0.5, 0.0] + [0.0, 0.0, 1.5] + rng.normal(0, noise, (count, 3))
    fitted, offset = fit_plane(points)
    centre = points.mean(axis=0)
    singular = np.linalg.svd(points - centre, full_matrices=False)
    if singular[1][-2] - singular[1][-1] < 1e-6 * max(singular[1][0], 1e-12):
        return                                  # no unique least-spread direction to compare with
    expected = singular[2][-1]
    expected = expected if -expected @ centre >= 0 else -expected
    assert np.allclose(fitted, expected, atol=1e-5)
    assert abs(offset + expected @ centre) < 1e-6
