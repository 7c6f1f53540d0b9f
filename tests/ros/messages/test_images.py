import math
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from ros_testing import require_ros

require_ros()

from message_cases import images, received  # noqa: E402
from sensor_msgs.msg import Image  # noqa: E402
from std_msgs.msg import Header  # noqa: E402

from predrel_ros.ros.messages.images import (  # noqa: E402
    IMAGE_ENCODINGS,
    depth_image_to_metres,
    image_to_numpy,
    image_to_rgb8,
    numpy_to_image,
)

pytestmark = pytest.mark.ros

NATIVE_BIG = sys.byteorder == "big"


def image_message(pixels, encoding, big_endian, padding):
    """An Image built byte by byte (independent of numpy_to_image): rows padded with junk bytes."""
    enc = IMAGE_ENCODINGS[encoding]
    order = ">" if big_endian else "<"
    raw = np.ascontiguousarray(pixels, dtype=enc.dtype.newbyteorder(order)).view(np.uint8)
    raw = raw.reshape(pixels.shape[0], -1)
    junk = np.full((raw.shape[0], padding), 0xA5, np.uint8)
    msg = Image(height=pixels.shape[0], width=pixels.shape[1], encoding=encoding,
                is_bigendian=int(big_endian), step=raw.shape[1] + padding)
    msg.data = np.hstack([raw, junk]).tobytes()
    return msg


@settings(max_examples=300, deadline=None)
@given(images())
def test_decoding_honours_step_and_byte_order(case):
    pixels, encoding, big_endian, padding = case
    decoded = image_to_numpy(received(image_message(pixels, encoding, big_endian, padding)))
    assert decoded.dtype == IMAGE_ENCODINGS[encoding].dtype  # native byte order
    np.testing.assert_array_equal(decoded, pixels)


@settings(max_examples=300, deadline=None)
@given(images())
def test_round_trip_through_a_message(case):
    pixels, encoding, big_endian, _ = case
    source = pixels.astype(pixels.dtype.newbyteorder(">" if big_endian else "<"))
    msg = received(numpy_to_image(source, encoding))
    assert msg.is_bigendian == int(big_endian)
    assert msg.step == pixels.shape[1] * IMAGE_ENCODINGS[encoding].bytes_per_pixel
    np.testing.assert_array_equal(image_to_numpy(msg), pixels)


@settings(max_examples=100, deadline=None)
@given(images())
def test_non_contiguous_input_is_packed(case):
    pixels, encoding, _, _ = case
    wide = np.concatenate([pixels, pixels], axis=1)[:, ::2]  # a strided view
    np.testing.assert_array_equal(
        image_to_numpy(numpy_to_image(wide, encoding)), wide)


def test_decoding_a_received_image_copies_nothing():
    pixels = np.arange(480 * 640 * 3, dtype=np.uint32).astype(np.uint8).reshape(480, 640, 3)
    for padding in (0, 64):
        msg = received(image_message(pixels, "rgb8", False, padding))
        view = image_to_numpy(msg)
        assert view.__array_interface__["data"][0] == msg.data.buffer_info()[0]
        assert not view.flags.writeable
        assert view.flags.c_contiguous == (padding == 0)
    depth = np.arange(12, dtype=np.float32).reshape(3, 4)
    msg = received(numpy_to_image(depth, "32FC1"))
    assert np.shares_memory(image_to_numpy(msg), np.frombuffer(msg.data, np.uint8))


def test_foreign_byte_order_is_swapped_into_a_copy():
    depth = np.array([[1, 258], [4096, 65535]], np.uint16)
    msg = received(image_message(depth, "16UC1", not NATIVE_BIG, 0))
    decoded = image_to_numpy(msg)
    assert decoded.dtype == np.dtype(np.uint16) and decoded.dtype.isnative
    np.testing.assert_array_equal(decoded, depth)


def test_one_channel_arrays_may_carry_a_channel_axis():
    gray = np.arange(6, dtype=np.uint8).reshape(2, 3, 1)
    np.testing.assert_array_equal(image_to_numpy(numpy_to_image(gray, "mono8")),
                                  gray[:, :, 0])


def test_header_is_kept():
    header = Header(frame_id="camera")
    header.stamp.sec = 12
    msg = numpy_to_image(np.zeros((2, 2, 3), np.uint8), "rgb8", header=header)
    assert (msg.header.frame_id, msg.header.stamp.sec) == ("camera", 12)


@pytest.mark.parametrize("field, change, message", [
    ("encoding", {"encoding": "yuv422"}, "Image.encoding 'yuv422' is not supported"),
    ("step", {"step": 5}, "Image.step 5 is smaller than width * bytes per pixel = 2 * 3 = 6"),
    ("data", {"data": bytes(11)}, "Image.data has 11 bytes, expected step * height = 6 * 2 = 12"),
    ("height", {"height": 3}, "Image.data has 12 bytes, expected step * height = 6 * 3 = 18"),
    ("width", {"width": 3}, "Image.step 6 is smaller than width * bytes per pixel = 3 * 3 = 9"),
])
def test_malformed_images_are_refused_naming_the_field(field, change, message):
    msg = numpy_to_image(np.zeros((2, 2, 3), np.uint8), "rgb8")
    for name, value in change.items():
        setattr(msg, name, value)
    with pytest.raises(ValueError, match=message.replace("*", r"\*").replace(".", r"\.")):
        image_to_numpy(msg)


@pytest.mark.parametrize("array, encoding, message", [
    (np.zeros((2, 2, 3), np.float32), "rgb8", "dtype float32 does not match Image.encoding rgb8"),
    (np.zeros((2, 2), np.uint8), "rgb8", r"shape \(2, 2\) does not match Image.encoding rgb8 \(H x W x 3\)"),
    (np.zeros((2, 2, 3), np.uint16), "16UC1", r"shape \(2, 2, 3\) does not match Image.encoding 16UC1"),
    (np.zeros((2, 2), np.uint8), "8UC3", "Image.encoding '8UC3' is not supported"),
])
def test_unsuitable_arrays_are_refused(array, encoding, message):
    with pytest.raises(ValueError, match=message):
        numpy_to_image(array, encoding)


@pytest.mark.parametrize("encoding", ["rgb8", "bgr8", "rgba8", "bgra8", "mono8"])
def test_colour_images_become_rgb(encoding):
    rgb = np.array([[[10, 20, 30], [40, 50, 60]]], np.uint8)
    source = {"rgb8": rgb, "bgr8": rgb[..., ::-1],
              "rgba8": np.dstack([rgb, np.full((1, 2), 255, np.uint8)]),
              "bgra8": np.dstack([rgb[..., ::-1], np.zeros((1, 2), np.uint8)]),
              "mono8": rgb[..., 0]}[encoding]
    expected = np.repeat(rgb[..., :1], 3, axis=2) if encoding == "mono8" else rgb
    converted = image_to_rgb8(received(numpy_to_image(source, encoding)))
    np.testing.assert_array_equal(converted, expected)
    with pytest.raises(ValueError, match="not a colour encoding"):
        image_to_rgb8(numpy_to_image(np.zeros((1, 1), np.uint16), "16UC1"))


def test_depth_images_in_metres():
    mm = np.array([[0, 1500]], np.uint16)
    metres = depth_image_to_metres(numpy_to_image(mm, "16UC1"))
    assert math.isnan(metres[0, 0]) and metres[0, 1] == pytest.approx(1.5)
    floats = np.array([[np.nan, 2.25]], np.float32)
    np.testing.assert_array_equal(depth_image_to_metres(numpy_to_image(floats, "32FC1")),
                                  floats)
    with pytest.raises(ValueError, match="not a depth encoding"):
        depth_image_to_metres(numpy_to_image(np.zeros((1, 1, 3), np.uint8), "rgb8"))


@pytest.mark.parametrize("shape, degenerate", [((2000, 1), True), ((1, 2000), True), ((7, 100), True),
                                               ((8, 256), False), ((8, 257), True), ((480, 640), False)])
def test_degenerate_image_sizes_are_malformed(shape, degenerate):
    from predrel_ros.ros.messages.images import check_image_shape

    pixels = np.zeros(shape + (3,), np.uint8)
    if degenerate:
        with pytest.raises(ValueError, match="degenerate"):
            check_image_shape(pixels)
    else:
        assert check_image_shape(pixels) is pixels
