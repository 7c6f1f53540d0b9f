"""The vectorised RVL codec against a pixel-by-pixel one written from the published algorithm
(tests/helpers/rvl_reference.py): the same bytes, each decoding the other's streams, and a
malformed stream refused with a ValueError (never read past its end, never a loop)."""
import numpy as np
import pytest
import rvl_reference
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from predrel_ros.ros.messages import rvl


def depth_like(draw_values, zero_share):
    """uint16 images with runs of zeros, as depth sensors give (invalid pixels) and jumps (edges)."""
    values = np.array(draw_values, np.uint16)
    values[np.arange(len(values)) % 7 < zero_share] = 0
    return values


IMAGES = st.builds(depth_like, hnp.arrays(np.uint16, st.integers(0, 200)), st.integers(0, 7))
EDGES = [np.zeros(0, np.uint16), np.zeros(1, np.uint16), np.array([7], np.uint16), np.zeros(100, np.uint16),
         np.full(50, 65535, np.uint16), np.array([0, 65535, 1, 0, 0, 65535, 65534, 0], np.uint16),
         np.arange(1, 300, dtype=np.uint16)]


@pytest.mark.parametrize("pixels", EDGES, ids=lambda p: f"{len(p)}px")
def test_edge_cases_match_the_reference_byte_for_byte(pixels):
    stream = rvl.encode(pixels)
    assert stream == rvl_reference.encode(pixels.tolist())
    np.testing.assert_array_equal(rvl.decode(stream, len(pixels)), pixels)


@settings(max_examples=200, deadline=None)
@given(IMAGES)
def test_streams_equal_the_reference_and_decode_each_other(pixels):
    reference = rvl_reference.encode(pixels.tolist())
    assert rvl.encode(pixels) == reference
    np.testing.assert_array_equal(rvl.decode(reference, len(pixels)), pixels)
    assert rvl_reference.decode(rvl.encode(pixels), len(pixels)) == pixels.tolist()


def test_a_2d_image_is_coded_row_major():
    image = np.arange(12, dtype=np.uint16).reshape(3, 4)
    assert rvl.encode(image) == rvl_reference.encode(image.reshape(-1).tolist())


def words(*nibbles):
    """A stream of the given nibbles (padded with zero nibbles to whole words)."""
    nibbles = list(nibbles) + [0] * (-len(nibbles) % 8)
    packed = [int("".join(f"{n:x}" for n in nibbles[i:i + 8]), 16) for i in range(0, len(nibbles), 8)]
    return np.array(packed, "<u4").tobytes()


@pytest.mark.parametrize("stream, pixels, match", [
    (b"", 4, "ends after 0 of 4 pixels"),
    (rvl.encode(np.array([1, 2, 3, 4], np.uint16))[:-4], 4, "ends"),
    (words(0, 0), 4, "a run of no pixels"),                                  # would loop for ever
    (words(5, 0), 4, "more than the image's 4 pixels"),
    (words(0, 8, 1), 8, "ends inside a run"),                                # 8 non-zeros, 5 codes
    (words(*[8] * 11, 1), 1, "code of more than 11 nibbles"),
    (words(0, 1, 8 + 7, 8 + 7, 8 + 7, 8 + 7, 8 + 7, 7), 1, "difference code"),  # 2**18 - 1 > 2 * 65535
])
def test_malformed_streams_are_value_errors(stream, pixels, match):
    with pytest.raises(ValueError, match=match):
        rvl.decode(stream, pixels)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=64), st.integers(1, 64))
def test_any_bytes_decode_to_the_image_size_or_a_value_error(data, pixels):
    try:
        image = rvl.decode(data, pixels)
    except ValueError:
        return
    assert image.shape == (pixels,) and image.dtype == np.uint16
