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
