import numpy as np
import pytest

from predrel_ros.core.entities import MANIPULATED_OBJECT, Entity
from predrel_ros.core.frame import CameraIntrinsics
from predrel_ros.predicates.geometry import EntityGeometry
from predrel_ros.predicates.point_sets import position_m
from predrel_ros.predicates.steady_position import SteadyPosition

HEIGHT, WIDTH = 120, 160
CAMERA = CameraIntrinsics(WIDTH, HEIGHT, fx=200.0, fy=200.0, cx=79.5, cy=59.5)
CONTAINMENT = 0.98


def frame(x, y, w, h, depth_value=1.0, covered_columns=0):
    """A box-shaped object at (x, y) of w x h px, its right `covered_columns` hidden by something in front."""
    depth = np.full((HEIGHT, WIDTH), 3.0, np.float32)
    depth[y:y + h, x:x + w] = depth_value + np.linspace(0.0, 0.05, w, dtype=np.float32)   # a slanted face
    mask = np.zeros((HEIGHT, WIDTH), bool)
    mask[y:y + h, x:x + w - covered_columns] = True
    entity = Entity(id=1, label="cube", role=MANIPULATED_OBJECT, box=[x, y, x + w - 1 - covered_columns, y + h - 1],
                    mask=mask)
    geometry = EntityGeometry(entity)
    return position_m(geometry, depth, CAMERA), geometry, depth


def test_a_still_object_being_covered_keeps_its_position_though_its_visible_median_moves():
    steady = SteadyPosition()
    positions = [steady.update(*frame(40, 40, 40, 30, covered_columns=c), CAMERA, CONTAINMENT) for c in (0, 6, 12, 24)]
    raw = [frame(40, 40, 40, 30, covered_columns=c)[0] for c in (0, 6, 12, 24)]
    assert abs(raw[-1][0] - raw[0][0]) > 0.02                      # the median moved by centimetres
    for position in positions:
        assert position == pytest.approx(positions[0], abs=1e-9)


def test_a_still_object_being_uncovered_keeps_its_position_too():
    steady = SteadyPosition()
    positions = [steady.update(*frame(40, 40, 40, 30, covered_columns=c), CAMERA, CONTAINMENT) for c in (24, 10, 0)]
    assert positions[-1] == pytest.approx(positions[0], abs=1e-9)


def test_an_object_moving_along_the_viewing_ray_keeps_that_motion():
    steady = SteadyPosition()
    first = steady.update(*frame(40, 40, 40, 30, 1.0), CAMERA, CONTAINMENT)
    second = steady.update(*frame(40, 40, 40, 30, 0.97, covered_columns=8), CAMERA, CONTAINMENT)
    assert second[2] - first[2] == pytest.approx(-0.03, abs=1e-6)


def test_an_object_moving_across_the_image_moves_by_its_median_position():
    steady = SteadyPosition()
    raw = [frame(x, 40, 30, 30) for x in (20, 30, 40)]
    positions = [steady.update(*sample, CAMERA, CONTAINMENT) for sample in raw]
    for position, (expected, _, _) in zip(positions, raw):
        assert position == pytest.approx(expected, abs=1e-9)


def test_without_a_containment_threshold_the_position_is_the_raw_one():
    steady = SteadyPosition()
    for c in (0, 12):
        raw, geometry, depth = frame(40, 40, 40, 30, covered_columns=c)
        assert steady.update(raw, geometry, depth, CAMERA, None) == raw
