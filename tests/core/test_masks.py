import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from predrel_ros.core import masks


@settings(max_examples=200, deadline=None)
@given(arrays(bool, st.tuples(st.integers(1, 40), st.integers(1, 40))))
def test_round_trip_any_mask(mask):
    rle = masks.encode(mask)
    np.testing.assert_array_equal(masks.decode(rle, *mask.shape), mask)
    assert rle.runs.sum() == rle.width * rle.height


def test_encoding_is_the_documented_layout():
    mask = np.zeros((5, 6), bool)
    mask[1, 2:4] = True
    mask[2, 3] = True
    rle = masks.encode(mask)
    assert (rle.x, rle.y, rle.width, rle.height) == (2, 1, 2, 2)
    # crop rows: [T T] [F T] -> runs start with 0 false, then 2 true, 1 false, 1 true
    assert rle.runs.tolist() == [0, 2, 1, 1]


def test_empty_mask_is_an_empty_crop():
    rle = masks.encode(np.zeros((3, 3), bool))
    assert (rle.width, rle.height, rle.runs.size) == (0, 0, 0)
    assert not masks.decode(rle, 3, 3).any()


def test_bad_input_is_refused_with_a_clear_message():
    with pytest.raises(ValueError, match="runs sum to 3"):
        masks.MaskRLE(0, 0, 2, 2, np.array([1, 2]))
    with pytest.raises(ValueError, match="does not fit"):
        masks.decode(masks.MaskRLE(5, 0, 2, 1, np.array([0, 2])), 4, 4)
    with pytest.raises(ValueError, match="2-D"):
        masks.encode(np.zeros(4, bool))



@settings(max_examples=60, deadline=None)
@given(arrays(bool, st.tuples(st.integers(1, 60), st.integers(1, 80))))
def test_the_centroid_of_a_mask_is_the_mean_of_its_pixels(mask):
    ys, xs = np.nonzero(mask)
    found = masks.mask_centroid(mask)
    if len(xs) == 0:
        assert found is None
    else:
        np.testing.assert_allclose(found, [xs.mean(), ys.mean()], rtol=1e-12)


@settings(max_examples=60, deadline=None)
@given(arrays(bool, st.tuples(st.integers(1, 60), st.integers(1, 80))))
def test_the_centroid_read_on_the_rle_crop_is_the_full_masks(mask):
    rle = masks.encode(mask)
    found = masks.mask_centroid(mask, (rle.x, rle.y, rle.width, rle.height))
    expected = masks.mask_centroid(mask)
    assert (found is None) == (expected is None)
    if expected is not None:
        np.testing.assert_array_equal(found, expected)
