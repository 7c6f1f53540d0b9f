import math

import numpy as np
import pytest

from predrel_ros.degradations import Degrader
from predrel_ros.degradations.blur import blur_image, motion_angle


def _noise(height=96, width=128, seed=0):
    return np.random.default_rng(seed).integers(0, 256, (height, width, 3), dtype=np.uint8)


def _directional_energy(image):
    x = image.astype(np.float64)
    return (np.diff(x, axis=1) ** 2).mean(), (np.diff(x, axis=0) ** 2).mean()


def test_motion_angle_is_per_frame_and_in_range():
    angles = [motion_angle(5, f) for f in range(200)]
    assert all(0.0 <= a < math.pi for a in angles)
    assert len(set(angles)) == 200
    assert motion_angle(5, 17) == angles[17]


@pytest.mark.parametrize("angle, smoothed_axis", [(0.0, "x"), (math.pi / 2, "y"), (0.2, "x"), (1.4, "y")])
def test_motion_blur_smooths_along_its_direction(angle, smoothed_axis):
    image = _noise()
    along_x, along_y = _directional_energy(blur_image(image, 0.0, 4.0, angle))
    assert (along_x < 0.5 * along_y) if smoothed_axis == "x" else (along_y < 0.5 * along_x)


@pytest.mark.parametrize("angle", [0.3, 0.785, 1.2, 2.0, 2.7])
def test_motion_blur_spreads_a_point_along_a_centred_line(angle):
    image = np.zeros((81, 81, 3), np.uint8)
    image[40, 40] = 255
    psf = blur_image(image, 0.0, 6.0, angle)[..., 0].astype(np.float64)
    ys, xs = np.mgrid[:81, :81]
    weight = psf / psf.sum()
    cx, cy = (weight * xs).sum(), (weight * ys).sum()
    assert abs(cx - 40) < 0.3 and abs(cy - 40) < 0.3  # centred: blur does not move content
    cov = np.cov(np.stack([xs.ravel(), ys.ravel()]), aweights=weight.ravel())
    eigenvalues, eigenvectors = np.linalg.eigh(cov)
    major = eigenvectors[:, 1]
    assert abs(abs(major @ [math.cos(angle), math.sin(angle)]) - 1) < 0.01
    assert math.sqrt(eigenvalues[1]) == pytest.approx(6.0, rel=0.1)
    assert math.sqrt(eigenvalues[0]) < 1.0


def test_blur_preserves_a_flat_image_and_the_mean():
    flat = np.full((40, 50, 3), 77, np.uint8)
    np.testing.assert_array_equal(blur_image(flat, 3.0, 5.0, 0.7), flat)
    image = _noise()
    assert abs(blur_image(image, 2.0, 5.0, 1.1).mean() - image.mean()) < 1.0


def test_pixel_sizes_scale_with_the_shorter_image_side():
    image = _noise(240, 320)
    degrader = Degrader("blur", 5, seed=3)  # table at the 480-pixel reference: sigma 4 and 7
    expected = blur_image(image, 2.0, 3.5, motion_angle(3, 9))
    np.testing.assert_array_equal(degrader.apply_image(image, 9), expected)
