"""The RGB-D sensor model for the controlled set's exact depth (degradations/depth_noise.py)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from predrel_ros.degradations.depth_noise import DepthNoiseConfig, axial_sigma, noisy_depth
from predrel_ros.perception.depth import depth_edges


def step_scene(near=1.0, far=2.0):
    depth = np.full((120, 160), far, np.float32)
    depth[:, :80] = near
    return depth


def test_noise_grows_with_distance_like_the_kinect_fit():
    rng = np.random.default_rng(0)
    config = DepthNoiseConfig(edge_hole_rate=0, dropout_rate=0)
    depth = step_scene()
    noisy = noisy_depth(depth, rng, config)
    near, far = noisy[:, 5:70] - 1.0, noisy[:, 90:155] - 2.0
    def expected(z):  # axial noise and the disparity step's uniform rounding error
        step = z ** 2 * config.subpixel / (config.focal_px * config.baseline_m)
        return np.hypot(axial_sigma(z, config), step / np.sqrt(12))

    assert np.nanstd(near) == pytest.approx(expected(1.0), rel=0.1)
    assert np.nanstd(far) == pytest.approx(expected(2.0), rel=0.1)
    assert np.nanstd(far) > 2 * np.nanstd(near)
    assert abs(np.nanmean(near)) < 1e-3 and abs(np.nanmean(far)) < 3e-3  # no bias


def test_depth_is_quantised_in_disparity_steps():
    config = DepthNoiseConfig(axial_base_m=0, axial_quadratic=0, edge_hole_rate=0, dropout_rate=0)
    depth = np.linspace(0.5, 3.0, 20000, dtype=np.float32).reshape(100, 200)
    noisy = noisy_depth(depth, np.random.default_rng(0), config)
    disparity = config.focal_px * config.baseline_m / noisy.astype(np.float64)
    np.testing.assert_allclose(disparity / config.subpixel, np.round(disparity / config.subpixel), atol=1e-3)
    assert np.abs(noisy - depth).max() <= 3.0 ** 2 * config.subpixel / (config.focal_px * config.baseline_m)


def test_holes_gather_at_depth_edges_and_out_of_range():
    config = DepthNoiseConfig(sensor_width_px=160)  # the test image is as wide as the sensor
    depth = step_scene(far=8.0)
    depth[:, 40:60] = 0.1  # nearer than the sensor's minimum range
    noisy = noisy_depth(depth, np.random.default_rng(1), config)
    assert np.isnan(noisy[:, 40:60]).all() and np.isnan(noisy[:, 80:]).all()
    edge = depth_edges(step_scene(), 0.03)
    holes = np.isnan(noisy_depth(step_scene(), np.random.default_rng(1), config))
    band = np.zeros_like(edge)
    band[:, 78:82] = True
    assert edge[:, 79:81].all() and not edge[:, :78].any()
    assert holes[band].mean() == pytest.approx(config.edge_hole_rate, abs=0.1)
    assert holes[~band].mean() < 0.01


def test_an_image_narrower_than_the_sensor_loses_as_much_of_each_edge():
    config = DepthNoiseConfig(dropout_rate=0)
    wide, narrow = step_scene(), step_scene()[:, ::4]  # 160 and 40 pixels wide: 1/4 and 1/16 of the sensor
    lost = [np.isnan(noisy_depth(d, np.random.default_rng(2), config)).sum() / d.shape[0] for d in (wide, narrow)]
    # per image row: 2 sensor pixels either side of the edge at rate 0.5 = 2 sensor pixels lost in all
    expected = [2 * config.edge_hole_rate * 2 * d.shape[1] / config.sensor_width_px for d in (wide, narrow)]
    np.testing.assert_allclose(lost, expected, rtol=0.25)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_the_same_seed_gives_the_same_noise(seed):
    depth = step_scene()
    first = noisy_depth(depth, np.random.default_rng(seed))
    again = noisy_depth(depth, np.random.default_rng(seed))
    np.testing.assert_array_equal(first, again)
    assert first.dtype == np.float32 and first.shape == depth.shape


def test_config_refuses_bad_values():
    with pytest.raises(ValueError, match="edge_hole_rate"):
        DepthNoiseConfig(edge_hole_rate=2)
    with pytest.raises(ValueError, match="min_range_m"):
        DepthNoiseConfig(min_range_m=5, max_range_m=4)
