import numpy as np
import pytest

from predrel_ros.core.entities import LEFT_HAND, RIGHT_HAND
from predrel_ros.perception.depth import DepthConfig, depth_in_metres, entity_point, intrinsics_matrix
from predrel_ros.perception.hand_sides import HandSideAssigner, HandSideConfig
from predrel_ros.perception.visibility import VisibilityConfig, VisibilityEstimator

K = np.array([[100.0, 0, 50], [0, 100.0, 40], [0, 0, 1]])


def test_point_is_the_per_axis_median_of_back_projected_mask_pixels():
    depth = np.zeros((80, 100), np.uint16)
    mask = np.zeros((80, 100), bool)
    mask[40:50, 50:60] = True
    depth[40:50, 50:60] = 1000  # 1 m
    depth[49, 57:60] = 9000  # three stray background pixels inside the mask (a mean would move)
    point = entity_point(depth_in_metres(depth, DepthConfig()), K, np.array([50, 40, 60, 50]), mask, DepthConfig())
    # pixels x 50..59, y 40..49 at z = 1: X = (x - 50) / 100, median (0.04 + 0.05) / 2; Y likewise;
    # the strays' X and Y (0.63..0.81) lie above the median as their true values did
    np.testing.assert_allclose(point, [0.045, 0.045, 1.0], atol=1e-6)


def test_float_depth_in_metres_and_box_core_without_mask():
    depth = np.full((80, 100), np.nan, np.float32)
    depth[20:60, 20:80] = 0.8  # the object
    depth[10:70, 10:20] = 3.0  # background at the box edge
    point = entity_point(depth_in_metres(depth, DepthConfig()), K, np.array([10, 10, 90, 70]), None, DepthConfig())
    assert point[2] == pytest.approx(0.8)


def test_too_few_depth_pixels_give_no_point_and_bad_inputs_are_refused():
    depth = depth_in_metres(np.zeros((80, 100), np.uint16), DepthConfig())
    assert entity_point(depth, K, np.array([0, 0, 10, 10]), None, DepthConfig()) is None
    with pytest.raises(ValueError, match="not registered"):
        entity_point(depth, K, np.array([0, 0, 10, 10]), np.ones((40, 50), bool), DepthConfig())
    with pytest.raises(ValueError, match="integers .* or floats"):
        depth_in_metres(np.zeros((4, 4), bool), DepthConfig())
    with pytest.raises(ValueError, match="focal"):
        intrinsics_matrix(np.zeros(9))
    np.testing.assert_array_equal(intrinsics_matrix(K.reshape(-1).tolist()), K)
    with pytest.raises(ValueError, match="min_depth_m < max_depth_m"):
        DepthConfig(min_depth_m=5, max_depth_m=1)


def test_out_of_range_depth_is_unknown():
    metres = depth_in_metres(np.array([[10, 500, 30000]], np.uint16), DepthConfig())
    assert np.isnan(metres[0, 0]) and metres[0, 1] == pytest.approx(0.5) and np.isnan(metres[0, 2])


def test_visibility_is_size_against_the_tracks_typical_size():
    estimator = VisibilityEstimator(VisibilityConfig(window=10, quantile=1.0))
    assert estimator.estimate(1, 100.0) == 1.0  # first sight
    assert estimator.estimate(1, 100.0) == 1.0
    assert estimator.estimate(1, 40.0) == pytest.approx(0.4)  # 60 % hidden
    assert estimator.estimate(1, 120.0) == 1.0  # capped
    assert estimator.estimate(2, 10.0) == 1.0  # tracks are separate
    estimator.forget_except([2])
    assert estimator.estimate(1, 10.0) == 1.0


def test_visibility_scales_area_by_depth_when_known():
    estimator = VisibilityEstimator(VisibilityConfig(quantile=1.0))
    estimator.estimate(1, 400.0, depth=1.0)
    # twice as far, a quarter of the pixels: fully visible
    assert estimator.estimate(1, 100.0, depth=2.0) == pytest.approx(1.0)
    assert estimator.estimate(1, 50.0, depth=2.0) == pytest.approx(0.5)


def test_hand_sides_facing_view_and_stickiness():
    assigner = HandSideAssigner(HandSideConfig(view="facing"))
    sides = assigner.assign([(1, [10, 10, 30, 30]), (2, [200, 10, 220, 30])], 320)
    assert sides == {1: RIGHT_HAND, 2: LEFT_HAND}  # image-left is the person's right hand
    sides = assigner.assign([(1, [250, 10, 270, 30]), (2, [20, 10, 40, 30])], 320)  # hands crossed
    assert sides == {1: RIGHT_HAND, 2: LEFT_HAND}
    sides = assigner.assign([(2, [20, 10, 40, 30]), (3, [15, 10, 35, 30])], 320)  # 1 left, 3 appears
    assert sides[3] == RIGHT_HAND  # the free side, whatever its position


def test_hand_sides_single_hand_by_image_half_per_view():
    assert HandSideAssigner(HandSideConfig(view="egocentric")).assign([(5, [10, 0, 20, 10])], 320) == {5: LEFT_HAND}
    assert HandSideAssigner(HandSideConfig(view="facing")).assign([(5, [300, 0, 310, 10])], 320) == {5: LEFT_HAND}
    with pytest.raises(ValueError, match="hands.view"):
        HandSideConfig(view="top")
