"""sensor_msgs/CompressedImage decoding: the `compressed` (jpeg, png) and `compressedDepth` (png,
rvl) transports of image_transport, checked against messages built byte by byte with OpenCV and the
reference RVL coder (tests/helpers/rvl_reference.py), with rosbags message objects (no ROS needed)
and duck-typed ones."""
import struct
from types import SimpleNamespace

import cv2
import numpy as np
import pytest
import rvl_reference

from predrel_ros.core.errors import UserError
from predrel_ros.ros.messages.images import (
    compressed_image_to_numpy,
    depth_image_to_metres,
    image_to_rgb8,
    is_compressed,
    is_compressed_depth,
    numpy_to_compressed_depth,
    numpy_to_compressed_image,
)
from predrel_ros.ros.messages.message_classes import ROSBAGS, typestore

RNG = np.random.default_rng(3)
RGB = RNG.integers(0, 256, (12, 17, 3), dtype=np.uint8)


def compressed(fmt, data):
    return SimpleNamespace(header=None, format=fmt, data=bytes(data))


@pytest.mark.parametrize("fmt", ["png", "rgb8; png compressed bgr8", "bgr8; png compressed bgr8", "PNG"])
def test_png_from_any_driver_format_string_decodes_exactly(fmt):
    _, png = cv2.imencode(".png", cv2.cvtColor(RGB, cv2.COLOR_RGB2BGR))
    np.testing.assert_array_equal(image_to_rgb8(compressed(fmt, png)), RGB)


def test_jpeg_decodes_close_to_the_original():
    smooth = np.repeat(np.repeat(RGB[:3, :4], 8, axis=0), 8, axis=1)
    _, jpeg = cv2.imencode(".jpg", cv2.cvtColor(smooth, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, 95])
    rgb = image_to_rgb8(compressed("rgb8; jpeg compressed bgr8", jpeg))
    assert rgb.shape == smooth.shape and rgb.dtype == np.uint8
    error = np.abs(rgb.astype(int) - smooth).mean()
    swapped = np.abs(rgb[..., ::-1].astype(int) - smooth).mean()
    assert error < 10 and error < swapped / 5  # jpeg is lossy; the channel order is RGB, not BGR


def test_mono_png_becomes_grey_rgb():
    grey = RGB[..., 0]
    _, png = cv2.imencode(".png", grey)
    pixels, encoding = compressed_image_to_numpy(compressed("mono8; png compressed mono8", png))
    assert encoding == "mono8"
    np.testing.assert_array_equal(image_to_rgb8(compressed("png", png)), np.stack([grey] * 3, axis=2))


@pytest.mark.parametrize("codec", ["jpeg", "png"])
def test_encoder_builds_rosbags_messages_that_serialize_and_decode(codec):
    msg = numpy_to_compressed_image(RGB, codec, classes=ROSBAGS)
    assert msg.__msgtype__ == "sensor_msgs/msg/CompressedImage" and is_compressed(msg)
    store = typestore()
    back = store.deserialize_cdr(store.serialize_cdr(msg, msg.__msgtype__), msg.__msgtype__)
    assert back.format == f"rgb8; {codec} compressed bgr8"
    if codec == "png":
        np.testing.assert_array_equal(image_to_rgb8(back), RGB)


def compressed_depth_bytes(inverse_or_mm: np.ndarray, quant_a: float, quant_b: float) -> bytes:
    """compressed_depth_image_transport's layout: ConfigHeader {int32 format; float depthParam[2]}, png."""
    _, png = cv2.imencode(".png", inverse_or_mm)
    return struct.pack("<iff", 0, quant_a, quant_b) + png.tobytes()


def rvl_depth_bytes(inverse_or_mm: np.ndarray, quant_a: float, quant_b: float) -> bytes:
    """The same header, then uint32 cols, rows and the RVL stream (compressed_depth_image_transport's rvl)."""
    height, width = inverse_or_mm.shape
    return struct.pack("<iffII", 0, quant_a, quant_b, width, height) + bytes(
        rvl_reference.encode(inverse_or_mm.reshape(-1).tolist()))


DEPTH_BYTES = {"png": compressed_depth_bytes, "rvl": rvl_depth_bytes}


@pytest.mark.parametrize("compression", ["png", "rvl"])
def test_compressed_depth_16uc1_is_millimetres_with_zero_unknown(compression):
    mm = np.array([[0, 1500, 65535], [1, 2, 800]], np.uint16)
    msg = compressed(f"16UC1; compressedDepth {compression}", DEPTH_BYTES[compression](mm, 0, 0))
    assert is_compressed_depth(msg)
    depth = depth_image_to_metres(msg)
    assert np.isnan(depth[0, 0])
    np.testing.assert_allclose(depth[0, 1:], [1.5, 65.535], rtol=1e-6)


@pytest.mark.parametrize("compression", ["png", "rvl"])
def test_compressed_depth_32fc1_inverts_the_transport_quantisation(compression):
    # the transport's defaults: depth_quantization 100, depth_max 10
    quant_a = 100.0 * 101.0
    quant_b = 1.0 - quant_a / 10.0
    metres = np.array([[0.5, 1.0, 4.0, np.nan]], np.float32)
    inverse = np.where(np.isfinite(metres), quant_a / metres + quant_b, 0).astype(np.uint16)
    fmt = "32FC1; compressedDepth" + (" rvl" if compression == "rvl" else "")    # bare: png, as the transport reads
    msg = compressed(fmt, DEPTH_BYTES[compression](inverse, quant_a, quant_b))
    depth = depth_image_to_metres(msg)
    np.testing.assert_allclose(depth[0, :3], metres[0, :3], rtol=2e-3)
    assert np.isnan(depth[0, 3])


@pytest.mark.parametrize("compression", ["png", "rvl"])
@pytest.mark.parametrize("encoding", ["16UC1", "32FC1"])
def test_depth_encoder_round_trips(encoding, compression):
    metres = RNG.uniform(0.3, 5.0, (6, 7)).astype(np.float32)
    metres[0, 0] = np.nan
    msg = numpy_to_compressed_depth(metres, encoding, compression=compression, classes=ROSBAGS)
    assert msg.format == f"{encoding}; compressedDepth {compression}"
    np.testing.assert_allclose(depth_image_to_metres(msg), metres, atol=0.0006 if encoding == "16UC1" else 0.003,
                               equal_nan=True)


@pytest.mark.parametrize("fmt, data, match", [
    ("jpeg", b"", "neither jpeg nor png"),
    ("jpeg", b"\xff\xd8\xff" + b"\x00" * 20, "not a decodable jpeg"),
    ("png", b"GIF89a....", "neither jpeg nor png"),
    ("16UC1; compressedDepth png", b"\x00" * 12, "less than its 12-byte header"),
    ("16UC1; compressedDepth png", b"\x00" * 12 + b"junkjunk", "neither jpeg nor png"),
    ("16UC1; compressedDepth rvl", b"\x00" * 12 + b"\x01", "less than its width and height"),
    ("16UC1; compressedDepth rvl", b"\x00" * 12 + struct.pack("<II", 0, 4), "declares a 0x4 image"),
    ("16UC1; compressedDepth rvl", b"\x00" * 12 + struct.pack("<II", 16384, 16384) + b"\x00" * 8,
     "more than 5 pixels per byte"),                          # no 512 MB image for a 28-byte message
    ("16UC1; compressedDepth rvl", b"\x00" * 12 + struct.pack("<II", 4, 2) + b"\x00" * 4, "a run of no pixels"),
    ("32FC1; compressedDepth rvl", b"\x00" * 12 + struct.pack("<II", 4, 2), "ends after 0 of 8 pixels"),
])
def test_malformed_compressed_data_is_a_value_error(fmt, data, match):
    decode = depth_image_to_metres if "compressedDepth" in fmt else image_to_rgb8
    with pytest.raises(ValueError, match=match):
        decode(compressed(fmt, data))


@pytest.mark.parametrize("fmt", ["theora", "h264", "16UC1; compressedDepth zstd", "8UC3; compressedDepth png"])
def test_unsupported_codecs_are_user_errors_naming_the_format(fmt):
    decode = depth_image_to_metres if "compressedDepth" in fmt else image_to_rgb8
    _, png = cv2.imencode(".png", RGB)
    with pytest.raises(UserError, match="unsupported image encoding"):
        decode(compressed(fmt, struct.pack("<iff", 0, 0, 0) + png.tobytes()))


def test_depth_png_is_not_a_colour_image_and_colour_is_not_depth():
    _, png = cv2.imencode(".png", RGB)
    with pytest.raises(ValueError, match="compressedDepth image, not a colour image"):
        image_to_rgb8(compressed("16UC1; compressedDepth png", struct.pack("<iff", 0, 0, 0) + png.tobytes()))
    with pytest.raises(ValueError, match="one-channel 16-bit png"):
        depth_image_to_metres(compressed("16UC1; compressedDepth png", struct.pack("<iff", 0, 0, 0) + png.tobytes()))
