import numpy as np
import pytest

from predrel_ros.core.entities import MANIPULATED_OBJECT, Entity
from predrel_ros.core.frame import CameraIntrinsics
from predrel_ros.predicates.geometry import EntityGeometry
from predrel_ros.predicates.point_sets import (
    SAMPLE_PIXELS,
    FramePoints,
    pixel_stride,
    points_m,
    position_m,
    sample_stride,
)

HEIGHT, WIDTH = 120, 160
CAMERA = CameraIntrinsics(WIDTH, HEIGHT, fx=200.0, fy=200.0, cx=79.5, cy=59.5)


def patch(x, y, w, h, depth_value=1.0):
    mask = np.zeros((HEIGHT, WIDTH), bool)
    mask[y:y + h, x:x + w] = True
    depth = np.full((HEIGHT, WIDTH), 3.0, np.float32)            # the background, far behind
    depth[mask] = depth_value
    entity = Entity(id=1, label="cube", role=MANIPULATED_OBJECT, box=[x, y, x + w - 1, y + h - 1], mask=mask)
    return EntityGeometry(entity), depth


def test_the_position_is_the_back_projected_median_of_the_masked_depth():
    geometry, depth = patch(100, 20, 21, 11, 1.0)                  # centre pixel (110, 25)
    x, y, z = position_m(geometry, depth, CAMERA)
    assert (x, y, z) == pytest.approx(((110 - 79.5) / 200, (25 - 59.5) / 200, 1.0), abs=1e-6)


def test_holes_and_edge_pixels_of_the_background_do_not_move_it():
    geometry, depth = patch(40, 40, 20, 20, 0.8)
    depth[45:50, 45:50] = np.nan                                   # a hole
    depth[40, 40:60] = 3.0                                         # the top edge carries the background's depth
    assert position_m(geometry, depth, CAMERA)[2] == pytest.approx(0.8)


def test_a_mask_bleeding_beyond_its_object_leaves_the_background_out_of_its_points():
    """A perceived mask 3 px too tall at the bottom: its lowest rows lie on the table behind. One
    pixel of erosion leaves two of them; the row at the depth jump is left out too (DEPTH_EDGE_JUMP),
    so one row of table samples remains (two without it)."""
    geometry, depth = patch(40, 40, 20, 23, 0.8)
    depth[60:63, 40:60] = 0.9                                      # the table behind, 10 cm deeper
    points = points_m(geometry, depth, CAMERA)
    assert points is not None and np.count_nonzero(points[:, 2] > 0.85) <= 20     # one row at most
    assert position_m(geometry, depth, CAMERA)[2] == pytest.approx(0.8)


def test_too_few_samples_or_no_mask_give_no_position():
    geometry, depth = patch(40, 40, 20, 20)
    depth[:] = np.nan
    assert position_m(geometry, depth, CAMERA) is None
    box_only = Entity(id=2, label="cube", role=MANIPULATED_OBJECT, box=[10, 10, 30, 30])
    assert position_m(EntityGeometry(box_only), np.ones((HEIGHT, WIDTH), np.float32), CAMERA) is None


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("size", [(20, 20), (21, 11), (7, 9)])       # even and odd sample counts
def test_the_position_equals_the_medians_of_all_back_projected_samples(dtype, size):
    w, h = size
    geometry, _ = patch(30, 30, w, h)
    rng = np.random.default_rng(w * h)
    depth = rng.uniform(0.5, 2.0, (HEIGHT, WIDTH)).astype(dtype)
    depth[rng.random(depth.shape) < 0.2] = np.nan
    inner = np.zeros((HEIGHT, WIDTH), bool)
    inner[31:30 + h - 1, 31:30 + w - 1] = True                     # one pixel inside the mask's edge
    inner &= np.isfinite(depth)
    rows, columns = np.nonzero(inner)
    z = depth[rows, columns].astype(np.float64)
    expected = (np.median((columns - CAMERA.cx) * z / CAMERA.fx), np.median((rows - CAMERA.cy) * z / CAMERA.fy),
                np.median(z))
    assert position_m(geometry, depth, CAMERA) == expected


def test_the_points_are_the_samples_the_position_is_the_median_of():
    geometry, _ = patch(30, 30, 21, 11)
    depth = np.random.default_rng(5).uniform(0.5, 2.0, (HEIGHT, WIDTH))
    points = points_m(geometry, depth, CAMERA)
    assert points.shape == (19 * 9, 3)                                  # one pixel inside the mask's edge
    assert tuple(np.median(points, axis=0)) == pytest.approx(position_m(geometry, depth, CAMERA), abs=1e-12)
    depth[:] = np.nan
    assert points_m(geometry, depth, CAMERA) is None


def test_a_stride_keeps_the_samples_of_every_stride_th_row_and_column():
    geometry, _ = patch(30, 30, 22, 13)
    depth = np.random.default_rng(6).uniform(0.5, 2.0, (HEIGHT, WIDTH))
    sparse = points_m(geometry, depth, CAMERA, stride=3)
    # the crop starts at the mask's first row and column (30): rows 30, 33, ..., 42 and columns 30, ..., 51
    # sampled, the edge one step inside: rows 33-39, columns 33-48
    u = np.round(sparse[:, 0] * CAMERA.fx / sparse[:, 2] + CAMERA.cx).astype(int)
    v = np.round(sparse[:, 1] * CAMERA.fy / sparse[:, 2] + CAMERA.cy).astype(int)
    assert sorted(set(v.tolist())) == [33, 36, 39] and sorted(set(u.tolist())) == [33, 36, 39, 42, 45, 48]
    assert len(sparse) == 3 * 6
    assert np.allclose(sparse[:, 2], depth[v, u])


@pytest.mark.parametrize("position_first", [True, False])
def test_a_frame_computes_each_entitys_samples_once_and_both_reads_see_them_unchanged(position_first, monkeypatch):
    from predrel_ros.predicates import point_sets

    geometry, _ = patch(30, 30, 21, 12)
    depth = np.random.default_rng(7).uniform(0.5, 2.0, (HEIGHT, WIDTH)).astype(np.float32)
    expected = (position_m(geometry, depth, CAMERA), points_m(geometry, depth, CAMERA),
                points_m(geometry, depth, CAMERA, 2))
    calls = []
    samples = point_sets._samples
    monkeypatch.setattr(point_sets, "_samples", lambda *args: calls.append(args[2:]) or samples(*args))
    frame = FramePoints(depth, CAMERA)
    for _ in range(2):                       # the median's partition must not reorder the shared samples
        if position_first:
            assert frame.position_m(geometry) == expected[0]
        np.testing.assert_array_equal(frame.points_m(geometry), expected[1])
        np.testing.assert_array_equal(frame.points_m(geometry, 2), expected[2])
        assert frame.position_m(geometry) == expected[0]
    assert calls == [(1,), (2,)]             # once per stride


def test_a_large_mask_is_read_on_a_stride_that_keeps_about_sample_pixels_and_its_position_barely_moves():
    """A mask beyond about 1.5 x SAMPLE_PIXELS is read on every k-th row and column of its crop (its
    position and extent from the same samples, which move with the mask: a translated mask keeps
    its sampled pixels); the median of the sparse samples of a receding floor lies within half a
    stride (in the image) of the median of all of them, in depth within its noise."""
    assert pixel_stride(SAMPLE_PIXELS) == 1 and pixel_stride(1.4 * SAMPLE_PIXELS) == 1
    assert pixel_stride(4 * SAMPLE_PIXELS) == 2 and pixel_stride(16 * SAMPLE_PIXELS) == 4
    assert pixel_stride(100, least=4) == 4
    height, width = 480, 640
    camera = CameraIntrinsics(width, height, fx=500.0, fy=500.0, cx=319.5, cy=239.5)
    mask = np.zeros((height, width), bool)
    mask[200:480, 20:620] = True                                   # a table: 168,000 pixels
    depth = np.repeat(np.linspace(1.5, 0.9, height, dtype=np.float32)[:, None], width, axis=1)
    depth += np.random.default_rng(8).normal(0, 0.002, depth.shape).astype(np.float32)
    geometry = EntityGeometry(Entity(id=1, label="table", role="surface", box=[20, 200, 619, 479], mask=mask))
    stride = sample_stride(geometry)
    assert stride == 6
    sparse = points_m(geometry, depth, camera, stride)
    assert 0.5 * SAMPLE_PIXELS < len(sparse) < 1.5 * SAMPLE_PIXELS
    assert position_m(geometry, depth, camera) == pytest.approx(tuple(np.median(sparse, axis=0)), abs=1e-6)
    every = np.median(points_m(geometry, depth, camera, 1), axis=0)
    sparse_median = np.array(position_m(geometry, depth, camera))
    half_stride_m = stride / 2 * every[2] / camera.fx
    assert np.all(np.abs(sparse_median[:2] - every[:2]) <= half_stride_m)
    assert abs(sparse_median[2] - every[2]) < 0.005
