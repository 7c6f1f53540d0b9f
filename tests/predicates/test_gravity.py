import numpy as np
import pytest
from tabletop_depth import CAMERA_HEIGHT, HEIGHT, TABLE_NORMAL, WIDTH, K, region, tabletop_depth

from predrel_ros.core.entities import MANIPULATED_OBJECT, SURFACE, Entity
from predrel_ros.core.frame import CameraIntrinsics
from predrel_ros.predicates.geometry import EntityGeometry
from predrel_ros.predicates.gravity import GravityFrame, Support, up_from_rotation
from predrel_ros.predicates.point_sets import FramePoints, points_m

CAMERA = CameraIntrinsics(WIDTH, HEIGHT, fx=K[0, 0], fy=K[1, 1], cx=K[0, 2], cy=K[1, 2])
BLOCK = region(140, 100, 180, 140)


def geometry(track_id, role, mask):
    rows, columns = np.nonzero(mask)
    box = [columns.min(), rows.min(), columns.max(), rows.max()]
    return EntityGeometry(Entity(id=track_id, label=role, role=role, box=box, mask=mask))


def test_the_support_plane_is_the_table_with_objects_on_its_mask():
    depth, _ = tabletop_depth({"block": (BLOCK, 0.05)})
    table = geometry(1, SURFACE, np.ones((HEIGHT, WIDTH), bool))     # the block lies inside the table's mask
    frame = GravityFrame.from_support(points_m(table, depth, CAMERA))
    assert frame.plane
    assert np.allclose(frame.up, TABLE_NORMAL, atol=1e-3)
    assert frame.offset == pytest.approx(CAMERA_HEIGHT, abs=1e-3)
    block = frame.coordinates(points_m(geometry(2, MANIPULATED_OBJECT, BLOCK), depth, CAMERA))
    assert np.allclose(block[:, 2], 0.05, atol=1e-4)                 # heights above the table


def test_the_frame_is_right_handed_with_height_along_up():
    frame = GravityFrame(np.array([0.0, -0.8, -0.6]), 0.9, plane=True)
    axes = np.stack([frame.lateral, frame.depth, frame.up])
    assert np.allclose(axes @ axes.T, np.eye(3))
    assert np.linalg.det(axes) == pytest.approx(1.0)
    assert frame.depth @ np.array([0.0, 0.0, 1.0]) > 0                 # away from the camera
    up = GravityFrame.image_up()
    assert up.coordinates(np.array([[0.1, -0.2, 1.0]]))[0, 2] == pytest.approx(0.2)


def test_too_few_or_degenerate_surface_samples_give_no_plane():
    assert GravityFrame.from_support(np.zeros((10, 3))) is None
    line = np.stack([np.linspace(0, 1, 400), np.zeros(400), np.ones(400)], axis=1)
    frame = GravityFrame.from_support(line)
    assert frame is None or np.all(np.isfinite(frame.up))


def test_an_extent_ignores_a_few_stray_samples():
    frame = GravityFrame(np.array([0.0, 0.0, -1.0]), 2.0, plane=True)
    rng = np.random.default_rng(3)
    points = np.column_stack([rng.uniform(-0.1, 0.1, 1000), rng.uniform(-0.1, 0.1, 1000), np.full(1000, 1.9)])
    points[:5, 2] = 0.5                                                   # five samples far off the surface
    extent = frame.extent(points)
    assert extent.high[2] == pytest.approx(0.1, abs=1e-6)
    assert np.all(extent.high[:2] <= 0.1) and np.all(extent.low[:2] >= -0.1)


def test_extents_are_heights_above_the_plane_and_the_supporting_surface_is_the_plane():
    depth, _ = tabletop_depth({"block": (BLOCK, 0.05)})
    geometries = {1: geometry(1, SURFACE, ~BLOCK), 2: geometry(2, MANIPULATED_OBJECT, BLOCK)}
    support = Support(geometries, FramePoints(depth, CAMERA))
    assert support.surface is geometries[1]
    extents = support.extents(geometries, {1, 2})
    assert extents[1].low[2] == extents[1].high[2] == 0.0
    assert extents[1].low[0] < -100 and extents[1].high[1] > 100
    assert extents[2].low[2] == pytest.approx(0.05, abs=1e-3)
    without_surface = Support({2: geometries[2]}, FramePoints(depth, CAMERA))          # image up: heights are relative
    assert without_surface.surface is None and not without_surface.frame.plane
    assert set(without_surface.extents({2: geometries[2]}, {2})) == {2}


@pytest.mark.parametrize("count", [1, 2, 3, 50, 51, 1000])
def test_an_extent_is_np_quantile_of_the_coordinates(count):
    frame = GravityFrame(np.array([0.1, -0.8, -0.6]), 0.9, plane=True)
    points = np.random.default_rng(count).uniform(-1, 1, (count, 3)) + [0, 0, 2]
    extent = frame.extent(points)
    expected = np.quantile(frame.coordinates(points), (0.02, 0.98), axis=0)
    assert np.allclose(extent.low, expected[0], rtol=0, atol=1e-12)
    assert np.allclose(extent.high, expected[1], rtol=0, atol=1e-12)


def test_a_known_up_gives_heights_above_the_surface_without_a_plane_fit():
    """Gravity from the robot (tf): its up, with heights above the surface samples' median; the
    block's 5 cm are measured along it. Without a surface the heights are relative."""
    depth, _ = tabletop_depth({"block": (BLOCK, 0.05)})
    geometries = {1: geometry(1, SURFACE, ~BLOCK), 2: geometry(2, MANIPULATED_OBJECT, BLOCK)}
    support = Support(geometries, FramePoints(depth, CAMERA), up=2 * TABLE_NORMAL)     # any length
    assert support.surface is geometries[1] and support.frame.plane
    assert np.allclose(support.frame.up, TABLE_NORMAL)
    assert support.extents(geometries, {2})[2].low[2] == pytest.approx(0.05, abs=1e-3)
    tilted = TABLE_NORMAL + np.array([0.0, 0.0, 0.3])                   # a robot that says otherwise wins
    assert np.allclose(Support(geometries, FramePoints(depth, CAMERA), up=tilted).frame.up,
                       tilted / np.linalg.norm(tilted))
    alone = Support({2: geometries[2]}, FramePoints(depth, CAMERA), up=TABLE_NORMAL)
    assert alone.surface is None and not alone.frame.plane and np.allclose(alone.frame.up, TABLE_NORMAL)


@pytest.mark.parametrize("quaternion, up", [
    ((0.0, 0.0, 0.0, 1.0), (0.0, 0.0, 1.0)),                               # the frames agree
    ((0.0, 0.0, 0.0, -2.0), (0.0, 0.0, 1.0)),                              # not unit, the other sign
    ((np.sin(np.pi / 4), 0.0, 0.0, np.cos(np.pi / 4)), (0.0, -1.0, 0.0)),  # 90 deg about x: z -> -y
    ((0.0, np.sin(np.pi / 4), 0.0, np.cos(np.pi / 4)), (1.0, 0.0, 0.0)),   # 90 deg about y: z -> x
    # base_link (x forward, z up) into an optical frame (x right, y down, z forward) looking ahead: the
    # inverse of the usual link -> optical rotation (-0.5, 0.5, -0.5, 0.5); up is the image's -y
    ((0.5, -0.5, 0.5, 0.5), (0.0, -1.0, 0.0)),
])
def test_up_is_the_frames_z_axis_rotated_into_the_camera(quaternion, up):
    assert np.allclose(up_from_rotation(quaternion), up)


def test_up_from_a_rotation_refuses_what_is_no_rotation():
    with pytest.raises(ValueError, match="not a rotation quaternion"):
        up_from_rotation((0.0, 0.0, 0.0, 0.0))
    with pytest.raises(ValueError, match="not a rotation quaternion"):
        up_from_rotation((float("nan"), 0.0, 0.0, 1.0))
