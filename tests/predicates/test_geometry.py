import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.distance import cdist

from predrel_ros.core.entities import MANIPULATED_OBJECT, Entity
from predrel_ros.predicates.geometry import (
    EntityGeometry,
    FrameGeometry,
    boundary_distance,
    inside_fraction,
    rectangle_gap,
    support_fraction,
)

H, W = 60, 80


def geometry(mask, box=None, track_id=1):
    ys, xs = np.nonzero(mask)
    if box is None:
        box = [xs.min(), ys.min(), xs.max(), ys.max()] if xs.size else [0, 0, 1, 1]
    return EntityGeometry(Entity(id=track_id, label="cube", role=MANIPULATED_OBJECT, box=box, mask=mask))


def brute_force(mask_a, mask_b):
    a = np.argwhere(mask_a)
    b = np.argwhere(mask_b)
    return max(0.0, cdist(a, b).min() - 1.0)


blobs = st.lists(st.tuples(st.integers(0, W - 1), st.integers(0, H - 1), st.integers(1, 12), st.integers(1, 12)),
                 min_size=1, max_size=3)


def paint(rects):
    mask = np.zeros((H, W), bool)
    for x, y, w, h in rects:
        mask[y:y + h, x:x + w] = True
    return mask


@settings(max_examples=150, deadline=None)
@given(blobs, blobs, st.floats(1.0, 15.0))
def test_boundary_distance_matches_brute_force_below_the_limit(rects_a, rects_b, limit):
    mask_a, mask_b = paint(rects_a), paint(rects_b)
    exact = brute_force(mask_a, mask_b)
    measured = boundary_distance(geometry(mask_a), geometry(mask_b, track_id=2), limit)
    # OpenCV's 5x5 mask approximates the Euclidean distance between pixel centres to within 2 %
    if exact < limit - 0.1:
        assert measured + 1 == pytest.approx(exact + 1, rel=0.02)
    else:
        assert measured + 1 >= (min(exact, limit) + 1) * 0.98


def test_touching_and_overlapping_masks_are_zero_apart():
    a = paint([(10, 10, 10, 10)])
    assert boundary_distance(geometry(a), geometry(paint([(20, 10, 5, 5)])), 5) == 0.0    # 4-adjacent
    assert boundary_distance(geometry(a), geometry(paint([(15, 15, 10, 10)])), 5) == 0.0  # overlapping
    assert boundary_distance(geometry(a), geometry(paint([(22, 10, 5, 5)])), 5) == pytest.approx(2.0)


def test_mask_reaching_beyond_its_box_is_measured_in_full():
    mask = paint([(10, 10, 10, 10), (50, 40, 5, 5)])
    g = geometry(mask, box=[10, 10, 19, 19])          # the box misses the second part
    assert (g.x1, g.y1, g.x2, g.y2) == (10, 10, 54, 44)
    assert g.area == 125
    empty = geometry(np.zeros((H, W), bool), box=[10, 10, 20, 20])
    assert empty.empty and empty.area == 0


def test_box_only_entities_use_their_rectangles():
    a = EntityGeometry(Entity(id=1, label="cube", role=MANIPULATED_OBJECT, box=[0, 0, 10, 10]))
    b = EntityGeometry(Entity(id=2, label="cube", role=MANIPULATED_OBJECT, box=[13, 14, 20, 20]))
    assert rectangle_gap(a, b) == pytest.approx(5.0)      # hypot(3, 4)
    assert boundary_distance(a, b, 100.0) == pytest.approx(5.0)
    inner = EntityGeometry(Entity(id=3, label="cube", role=MANIPULATED_OBJECT, box=[5, 5, 15, 15]))
    assert inside_fraction(inner, a) == pytest.approx(25 / 100)


def test_inside_and_support_fractions_by_hand():
    container = geometry(paint([(20, 20, 40, 30)]))                 # rows 20-49, cols 20-59
    half_in = geometry(paint([(10, 30, 20, 10)]), track_id=2)        # cols 10-29: half inside
    assert inside_fraction(half_in, container) == pytest.approx(0.5)
    table = geometry(paint([(0, 50, 80, 10)]))                       # rows 50-59
    on_table = geometry(paint([(30, 40, 10, 10)]), track_id=2)       # bottom row 49
    assert support_fraction(on_table, table, band=2) == 1.0
    hovering = geometry(paint([(30, 30, 10, 10)]), track_id=2)       # bottom row 39: 10 rows above
    assert support_fraction(hovering, table, band=2) == 0.0
    overhang = geometry(paint([(75, 40, 10, 10)]), track_id=2)       # cols 75-79 inside the frame
    assert support_fraction(overhang, table, band=2) == 1.0
    half_over = geometry(paint([(0, 40, 10, 10)]), track_id=2)
    ledge = geometry(paint([(5, 50, 20, 10)]))                        # under cols 5-9 only
    assert support_fraction(half_over, ledge, band=2) == pytest.approx(0.5)


def support_by_definition(mask_a, mask_b, band):
    """Share of a's mask columns with a pixel of b within `band` rows of the column's lowest pixel of a."""
    columns = np.flatnonzero(mask_a.any(axis=0))
    hits = 0
    for column in columns:
        lowest = np.flatnonzero(mask_a[:, column]).max()
        hits += mask_b[max(lowest - band, 0):lowest + band + 1, column].any()
    return hits / columns.size if columns.size else 0.0


@settings(max_examples=80, deadline=None)
@given(blobs, blobs, st.integers(1, 5))
def test_support_fraction_is_its_definition(rects_a, rects_b, band):
    """The dilated-crop computation gives the per-column definition, masks at the frame's edges included."""
    mask_a, mask_b = paint(rects_a), paint(rects_b)
    assert support_fraction(geometry(mask_a), geometry(mask_b, track_id=2), band) == support_by_definition(
        mask_a, mask_b, band)


box_entities = st.tuples(st.floats(-5.0, W + 5.0), st.floats(-5.0, H + 5.0), st.floats(0.0, 30.0), st.floats(0.0, 30.0))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(blobs, box_entities), min_size=2, max_size=5), st.floats(1.0, 15.0))
def test_frame_geometry_gives_every_pair_its_one_pair_measurements(shapes, limit):
    """The arrays of many pairs equal the one-pair functions, masks and boxes mixed, both orders."""
    geometries = []
    for track_id, shape in enumerate(shapes, start=1):
        if isinstance(shape, list):
            geometries.append(geometry(paint(shape), track_id=track_id))
        else:
            x, y, w, h = shape
            geometries.append(EntityGeometry(Entity(id=track_id, label="cube", role=MANIPULATED_OBJECT,
                                                    box=[x, y, x + w, y + h])))
    frame = FrameGeometry(geometries)
    pairs = [(i, j) for i in range(len(geometries)) for j in range(len(geometries)) if i != j]
    i, j = (np.array(side, np.intp) for side in zip(*pairs))
    gaps = frame.rectangle_gaps(i, j)
    distances = frame.boundary_distances(i, j, limit)
    inside = frame.inside_fractions(i, j)
    for k, (a, b) in enumerate(pairs):
        assert gaps[k] == pytest.approx(rectangle_gap(geometries[a], geometries[b]), rel=1e-12, abs=1e-12)
        assert distances[k] == pytest.approx(boundary_distance(geometries[a], geometries[b], limit), rel=1e-12,
                                             abs=1e-12)
        assert inside[k] == inside_fraction(geometries[a], geometries[b])


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, W - 1), st.integers(0, H - 1), st.integers(1, 12), st.integers(1, 12)),
                max_size=3), st.integers(0, 6))
def test_a_mask_read_on_its_crop_gives_the_full_frame_geometry(rects, slack):
    """With the mask's crop (any rectangle holding all its pixels: the RLE's, or larger) the geometry
    reads only that rectangle and equals the one read from the whole frame, empty masks included."""
    mask = paint(rects)
    ys, xs = np.nonzero(mask)
    x1, y1 = (max(int(xs.min()) - slack, 0), max(int(ys.min()) - slack, 0)) if xs.size else (slack, slack)
    x2, y2 = (min(int(xs.max()) + 1 + slack, W), min(int(ys.max()) + 1 + slack, H)) if xs.size else (slack, slack)
    box = [x1, y1, max(x2 - 1, x1), max(y2 - 1, y1)]
    full = EntityGeometry(Entity(id=1, label="cube", role=MANIPULATED_OBJECT, box=box, mask=mask))
    cropped = EntityGeometry(Entity(id=1, label="cube", role=MANIPULATED_OBJECT, box=box, mask=mask,
                                    crop=(x1, y1, x2 - x1, y2 - y1)))
    fields = ("x1", "y1", "x2", "y2", "area", "cx", "cy", "empty", "width", "height", "half_diagonal")
    assert [getattr(cropped, name) for name in fields] == [getattr(full, name) for name in fields]
