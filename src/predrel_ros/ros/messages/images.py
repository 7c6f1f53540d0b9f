"""sensor_msgs/Image <-> numpy, for rclpy and rosbags messages alike.

Decoding has two steps, so that another image message (sensor_msgs/CompressedImage, say) needs only
its own first step:

1. message -> pixels: `image_to_numpy(msg)`, the one decoder of an Image: a read-only numpy view of
   `msg.data` (no copy) that honours `step` (padded rows) and `is_bigendian`;
2. pixels -> what the pipeline wants: `rgb8_from_pixels(pixels, encoding)` (H x W x 3 uint8 RGB) or
   `metres_from_pixels(pixels, encoding)` (H x W float32 metres); `image_to_rgb8(msg)` and
   `depth_image_to_metres(msg)` are both steps.

sensor_msgs/CompressedImage (duck-typed: a message with `format` and no `encoding`) has its own
first step, `compressed_image_to_numpy(msg)`: jpeg or png (the `compressed` transport of
image_transport, whose `format` reads "rgb8; jpeg compressed bgr8", or a driver's plain "jpeg"),
and the `compressedDepth` transport's png and rvl ("16UC1; compressedDepth png": a 12-byte header,
then a 16-bit png; "...; compressedDepth rvl": the header, uint32 width and height, then the RVL
stream of `ros.messages.rvl`; for 32FC1 the 16-bit image holds quantised inverse depth, decoded
with the header's two parameters as compressed_depth_image_transport does). `image_to_rgb8` and
`depth_image_to_metres` take either message. Other codecs (theora, h264) raise `UnsupportedEncoding`.

`numpy_to_image` builds an Image with one copy of the pixels; `numpy_to_compressed_image` and
`numpy_to_compressed_depth` build the compressed messages the two transports would publish. No
cv_bridge is needed (the ROS 2 one is not installable from PyPI and the PyPI `cv-bridge` is the ROS 1 one).

Encodings (`IMAGE_ENCODINGS`) are the names of sensor_msgs/image_encodings.hpp, matched exactly:
"rgb8" but "16UC1", as cv_bridge and image_transport match them. Another spelling ("RGB8",
"16uc1") is refused with the supported name in the message, rather than read as a guess, so a
driver that writes nonstandard names is found here and not by the next ROS tool that reads the
same topic. An unsupported encoding raises `UnsupportedEncoding` (a `UserError`: set the camera
driver to one of them), malformed messages `ValueError` naming the field.
"""
from __future__ import annotations

import struct
import sys
from dataclasses import dataclass

import numpy as np

from predrel_ros.core.errors import UserError
from predrel_ros.ros.messages import rvl
from predrel_ros.ros.messages.fields import MAX_IMAGE_SIDE, header_or_default
from predrel_ros.ros.messages.message_classes import COMPRESSED_IMAGE, IMAGE, RCLPY, Message, MessageClasses


@dataclass(frozen=True)
class ImageEncoding:
    """Pixel layout of one sensor_msgs/Image encoding."""

    name: str
    dtype: np.dtype  # element type, native byte order
    channels: int

    @property
    def bytes_per_pixel(self) -> int:
        return self.dtype.itemsize * self.channels


IMAGE_ENCODINGS: dict[str, ImageEncoding] = {
    enc.name: enc for enc in (
        ImageEncoding("rgb8", np.dtype(np.uint8), 3),
        ImageEncoding("bgr8", np.dtype(np.uint8), 3),
        ImageEncoding("rgba8", np.dtype(np.uint8), 4),
        ImageEncoding("bgra8", np.dtype(np.uint8), 4),
        ImageEncoding("mono8", np.dtype(np.uint8), 1),
        ImageEncoding("mono16", np.dtype(np.uint16), 1),
        ImageEncoding("16UC1", np.dtype(np.uint16), 1),  # depth in millimetres (REP 118)
        ImageEncoding("32FC1", np.dtype(np.float32), 1),  # depth in metres (REP 118)
    )
}

#: metres per unit of the 16-bit depth encodings (REP 118: millimetres)
DEPTH_16U_SCALE = 0.001


class UnsupportedEncoding(UserError, ValueError):
    """An image encoding the conversions do not read (a ValueError like the other malformed fields)."""


def image_encoding(name: str) -> ImageEncoding:
    """The layout of encoding `name` (exact spelling), else UnsupportedEncoding."""
    try:
        return IMAGE_ENCODINGS[name]
    except KeyError:
        spelled = [known for known in IMAGE_ENCODINGS if known.lower() == str(name).lower()]
        hint = f" (names are case-sensitive: did you mean {spelled[0]!r}?)" if spelled else ""
        raise UnsupportedEncoding(f"unsupported image encoding: Image.encoding {name!r} is not supported"
                                  f"{hint}; expected one of {tuple(IMAGE_ENCODINGS)}") from None


def image_to_numpy(msg: Message) -> np.ndarray:
    """Pixels of `msg` as a read-only H x W (one channel) or H x W x C array.

    A view of `msg.data` (no copy), also for padded rows (`step` > width * bytes per pixel: the view
    is then not C-contiguous). Only 16-bit or float data in the other byte order than this machine's
    is copied (byte-swapped). Call `.copy()` on the result to modify it or to let the message go.
    """
    enc = image_encoding(msg.encoding)
    height, width, step = int(msg.height), int(msg.width), int(msg.step)
    row_bytes = width * enc.bytes_per_pixel
    if step < row_bytes:
        raise ValueError(f"Image.step {step} is smaller than width * bytes per pixel = {width} * "
                         f"{enc.bytes_per_pixel} = {row_bytes} for encoding {enc.name}")
    size = len(msg.data)
    if size != step * height:
        raise ValueError(f"Image.data has {size} bytes, expected step * height = {step} * {height} = "
                         f"{step * height}")
    big_endian = bool(msg.is_bigendian)
    dtype = enc.dtype.newbyteorder(">" if big_endian else "<")
    shape: tuple[int, ...] = (height, width, enc.channels)
    strides: tuple[int, ...] = (step, enc.bytes_per_pixel, enc.dtype.itemsize)
    if enc.channels == 1:
        shape, strides = shape[:2], strides[:2]
    if size == 0:
        return np.zeros(shape, enc.dtype)
    array = np.ndarray(shape, dtype=dtype, buffer=msg.data, strides=strides)
    if enc.dtype.itemsize > 1 and big_endian != (sys.byteorder == "big"):
        array = array.astype(enc.dtype)  # byte swap to this machine's order (a copy)
    array.flags.writeable = False
    return array


def numpy_to_image(array: np.ndarray, encoding: str, header: Message | None = None, *,
                   classes: MessageClasses = RCLPY) -> Message:
    """A sensor_msgs/Image holding `array` (H x W or H x W x C) with the given encoding.

    The rows are packed (step = width * bytes per pixel); `is_bigendian` follows the array's byte
    order, so big-endian input is sent as is. The pixels are copied once (`classes.sequence`).
    """
    enc = image_encoding(encoding)
    array = np.asarray(array)
    if array.dtype.kind != enc.dtype.kind or array.dtype.itemsize != enc.dtype.itemsize:
        raise ValueError(f"array dtype {array.dtype} does not match Image.encoding {enc.name} "
                         f"({enc.dtype.name})")
    if enc.channels == 1 and array.ndim == 3 and array.shape[2] == 1:
        array = array[:, :, 0]
    expected_ndim = 2 if enc.channels == 1 else 3
    if array.ndim != expected_ndim or (enc.channels > 1 and array.shape[2] != enc.channels):
        layout = "H x W" if enc.channels == 1 else f"H x W x {enc.channels}"
        raise ValueError(f"array shape {array.shape} does not match Image.encoding {enc.name} ({layout})")
    height, width = array.shape[:2]
    byteorder = array.dtype.byteorder
    big_endian = byteorder == ">" or (byteorder == "=" and sys.byteorder == "big")
    raw = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
    return classes.build(IMAGE, header=header_or_default(header, classes), height=int(height), width=int(width),
                         encoding=enc.name, is_bigendian=int(big_endian), step=int(width * enc.bytes_per_pixel),
                         data=classes.sequence(raw, np.uint8))


#: OpenCV conversions of the colour encodings to RGB (rgb8 needs none)
_TO_RGB = {"bgr8": "COLOR_BGR2RGB", "rgba8": "COLOR_RGBA2RGB", "bgra8": "COLOR_BGRA2RGB",
           "mono8": "COLOR_GRAY2RGB"}
COLOUR_ENCODINGS = ("rgb8",) + tuple(_TO_RGB)


def rgb8_from_pixels(pixels: np.ndarray, encoding: str) -> np.ndarray:
    """H x W x 3 uint8 RGB of the pixels of a colour or mono8 image (`pixels` itself when rgb8)."""
    if encoding == "rgb8":
        return pixels
    if encoding not in _TO_RGB:
        raise ValueError(f"Image.encoding {encoding!r} is not a colour encoding; expected one of "
                         f"{COLOUR_ENCODINGS}")
    import cv2  # only here: the other conversions need no OpenCV

    return cv2.cvtColor(np.ascontiguousarray(pixels), getattr(cv2, _TO_RGB[encoding]))


def metres_from_pixels(pixels: np.ndarray, encoding: str) -> np.ndarray:
    """H x W float32 depth in metres of the pixels of a depth image, NaN where unknown (16-bit 0 or
    float NaN) (REP 118); `pixels` itself when 32FC1."""
    if encoding in ("16UC1", "mono16"):
        depth = pixels.astype(np.float32) * np.float32(DEPTH_16U_SCALE)
        depth[pixels == 0] = np.nan
        return depth
    if encoding == "32FC1":
        return pixels
    raise ValueError(f"Image.encoding {encoding!r} is not a depth encoding; expected 16UC1, "
                     f"mono16 or 32FC1")


#: the smallest image side, and the most one side may exceed the other, of a frame the pipeline takes
#: (no camera delivers a 2000x1 image; letterboxing it would shrink one side to nothing)
MIN_IMAGE_SIDE = 8
MAX_ASPECT_RATIO = 32


def check_image_shape(pixels: np.ndarray, what: str = "image") -> np.ndarray:
    """`pixels`, else ValueError when the image is degenerate (a side below MIN_IMAGE_SIDE, or one
    side more than MAX_ASPECT_RATIO times the other)."""
    height, width = int(pixels.shape[0]), int(pixels.shape[1])
    if min(height, width) < MIN_IMAGE_SIDE or max(height, width) > MAX_ASPECT_RATIO * min(height, width):
        raise ValueError(f"the {what} is degenerate ({width}x{height}); expected sides of at least "
                         f"{MIN_IMAGE_SIDE} pixels and an aspect ratio within 1:{MAX_ASPECT_RATIO}")
    return pixels


#: image codecs of the `compressed` transport (and the png of `compressedDepth`), by their magic bytes
COMPRESSED_CODECS = {"jpeg": b"\xff\xd8\xff", "png": b"\x89PNG\r\n\x1a\n"}
_CODEC_SPELLINGS = {"jpeg": "jpeg", "jpg": "jpeg", "png": "png"}
#: the `compressedDepth` transport's header: int32 format (0: inverse depth), float32 depthQuantA, depthQuantB
_DEPTH_HEADER = struct.Struct("<iff")
#: the compressions of the `compressedDepth` transport (its `format` parameter)
DEPTH_COMPRESSIONS = ("png", "rvl")
#: what precedes an RVL stream: uint32 width, height
_RVL_SIZE = struct.Struct("<II")
#: the most pixels per byte of an RVL stream compressed_depth_image_transport accepts (more: corrupt data)
_RVL_MAX_PIXELS_PER_BYTE = 5
#: compressed_depth_image_transport's defaults for 32FC1 (parameters depth_max, depth_quantization)
DEPTH_MAX = 10.0
DEPTH_QUANTIZATION = 100.0


def is_compressed(msg: Message) -> bool:
    """True for a sensor_msgs/CompressedImage (it has `format` where an Image has `encoding`)."""
    return hasattr(msg, "format") and not hasattr(msg, "encoding")


def _format_words(msg: Message) -> list[str]:
    return str(msg.format).replace(";", " ").split()


def is_compressed_depth(msg: Message) -> bool:
    """True for a CompressedImage of the `compressedDepth` transport."""
    return is_compressed(msg) and "compresseddepth" in (word.lower() for word in _format_words(msg))


def _decode(data: bytes, what: str, fmt: str) -> np.ndarray:
    """Pixels of jpeg or png bytes (uint8 or uint16; H x W, or H x W x 3 / 4 in BGR(A) order)."""
    codec = next((name for name, magic in COMPRESSED_CODECS.items() if data.startswith(magic)), None)
    if codec is None:
        raise ValueError(f"{what} (format {fmt!r}) is neither jpeg nor png data (starts with {data[:8]!r})")
    import cv2

    pixels = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
    if pixels is None or pixels.size == 0:
        raise ValueError(f"{what} (format {fmt!r}) is not a decodable {codec} image ({len(data)} bytes)")
    return pixels


def compressed_image_to_numpy(msg: Message) -> tuple[np.ndarray, str]:
    """(pixels, encoding) of a colour CompressedImage: H x W x 3 "bgr8", H x W x 4 "bgra8", H x W
    "mono8" or "mono16", as the codec stored them (whatever the original encoding in `format`)."""
    fmt = str(msg.format)
    words = [word.lower() for word in _format_words(msg)]
    codecs = {_CODEC_SPELLINGS[word] for word in words if word in _CODEC_SPELLINGS}
    if "compresseddepth" in words:
        raise ValueError(f"CompressedImage.format {fmt!r} is a compressedDepth image, not a colour image")
    if not codecs and words:
        raise UnsupportedEncoding(f"unsupported image encoding: CompressedImage.format {fmt!r} names no "
                                  f"supported codec; expected one of {tuple(COMPRESSED_CODECS)}")
    pixels = _decode(bytes(msg.data), "CompressedImage.data", fmt)
    if pixels.ndim == 2:
        return pixels, "mono8" if pixels.dtype == np.uint8 else "mono16"
    if pixels.dtype != np.uint8 or pixels.shape[2] not in (3, 4):
        raise ValueError(f"CompressedImage (format {fmt!r}) decodes to {pixels.dtype} x {pixels.shape[2]} "
                         f"channels; expected 8-bit colour")
    return pixels, "bgr8" if pixels.shape[2] == 3 else "bgra8"


def compressed_depth_to_metres(msg: Message) -> np.ndarray:
    """H x W float32 metres of a `compressedDepth` CompressedImage, NaN where unknown."""
    fmt = str(msg.format)
    words = _format_words(msg)
    encoding = words[0] if words else ""
    if encoding not in ("16UC1", "mono16", "32FC1"):
        raise UnsupportedEncoding(f"unsupported image encoding: compressedDepth format {fmt!r} has depth "
                                  f"encoding {encoding!r}; expected 16UC1, mono16 or 32FC1")
    compression = _depth_compression(words)
    if compression not in DEPTH_COMPRESSIONS:
        raise UnsupportedEncoding(f"unsupported image encoding: compressedDepth format {fmt!r} uses {compression!r}; "
                                  f"expected one of {DEPTH_COMPRESSIONS}")
    data = bytes(msg.data)
    if len(data) <= _DEPTH_HEADER.size:
        raise ValueError(f"compressedDepth CompressedImage.data has {len(data)} bytes, less than its "
                         f"{_DEPTH_HEADER.size}-byte header and an image")
    _, quant_a, quant_b = _DEPTH_HEADER.unpack_from(data)
    if compression == "rvl":
        pixels = _decode_rvl(data[_DEPTH_HEADER.size:], len(data), fmt)
    else:
        pixels = _decode(data[_DEPTH_HEADER.size:], "compressedDepth CompressedImage.data", fmt)
    if pixels.ndim != 2 or pixels.dtype != np.uint16:
        raise ValueError(f"compressedDepth CompressedImage (format {fmt!r}) decodes to {pixels.dtype} "
                         f"{pixels.shape}; expected a one-channel 16-bit png")
    if encoding != "32FC1":
        return metres_from_pixels(pixels, "16UC1")
    if not (np.isfinite(quant_a) and np.isfinite(quant_b)) or quant_a <= 0:
        raise ValueError(f"compressedDepth header has depthQuantA {quant_a} and depthQuantB {quant_b}; "
                         f"expected finite values with depthQuantA > 0")
    inverse = pixels.astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        depth = np.float32(quant_a) / (inverse - np.float32(quant_b))
    depth[pixels == 0] = np.nan
    return depth


def _depth_compression(words: list[str]) -> str:
    """The word after `compressedDepth` in a format; png when none follows (older transports)."""
    lowered = [word.lower() for word in words]
    at = lowered.index("compresseddepth") if "compresseddepth" in lowered else len(lowered)
    return lowered[at + 1] if at + 1 < len(lowered) else "png"


def _decode_rvl(data: bytes, message_bytes: int, fmt: str) -> np.ndarray:
    """The H x W uint16 pixels of a compressedDepth rvl payload (after the header); like
    compressed_depth_image_transport, an image of more than 5 pixels per byte of the message is
    taken for corrupt data (and no huge image is allocated for a small message)."""
    if len(data) < _RVL_SIZE.size:
        raise ValueError(f"compressedDepth rvl data (format {fmt!r}) has {len(data)} bytes after the header, "
                         f"less than its width and height")
    width, height = _RVL_SIZE.unpack_from(data)
    if not (0 < width <= MAX_IMAGE_SIDE and 0 < height <= MAX_IMAGE_SIDE):
        raise ValueError(f"compressedDepth rvl data declares a {width}x{height} image; expected sides in "
                         f"1..{MAX_IMAGE_SIDE}")
    stream = data[_RVL_SIZE.size:]
    if width * height > _RVL_MAX_PIXELS_PER_BYTE * message_bytes:
        raise ValueError(f"compressedDepth rvl data declares a {width}x{height} image in a {message_bytes}-byte "
                         f"message; more than {_RVL_MAX_PIXELS_PER_BYTE} pixels per byte is taken for corrupt data")
    try:
        return rvl.decode(stream, width * height).reshape(height, width)
    except ValueError as error:
        raise ValueError(f"compressedDepth rvl data (format {fmt!r}, {width}x{height}): {error}") from None


def numpy_to_compressed_image(rgb: np.ndarray, codec: str = "jpeg", header: Message | None = None, *,
                              quality: int = 95, classes: MessageClasses = RCLPY) -> Message:
    """A CompressedImage of H x W x 3 uint8 RGB pixels as the `compressed` transport publishes an
    rgb8 Image (format "rgb8; jpeg compressed bgr8")."""
    import cv2

    if codec not in COMPRESSED_CODECS:
        raise ValueError(f"unknown codec {codec!r}; expected one of {tuple(COMPRESSED_CODECS)}")
    rgb = np.asarray(rgb)
    if rgb.dtype != np.uint8 or rgb.ndim != 3 or rgb.shape[2] != 3:
        raise ValueError(f"expected H x W x 3 uint8 RGB pixels, got {rgb.dtype} {rgb.shape}")
    params = [cv2.IMWRITE_JPEG_QUALITY, int(quality)] if codec == "jpeg" else []
    ok, data = cv2.imencode(f".{'jpg' if codec == 'jpeg' else 'png'}", cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR), params)
    if not ok:
        raise ValueError(f"OpenCV could not encode a {rgb.shape} image as {codec}")
    return classes.build(COMPRESSED_IMAGE, header=header_or_default(header, classes),
                         format=f"rgb8; {codec} compressed bgr8", data=classes.sequence(data.reshape(-1), np.uint8))


def numpy_to_compressed_depth(metres: np.ndarray, encoding: str = "16UC1", header: Message | None = None, *,
                              depth_max: float = DEPTH_MAX, depth_quantization: float = DEPTH_QUANTIZATION,
                              compression: str = "png", classes: MessageClasses = RCLPY) -> Message:
    """A CompressedImage of H x W depth in metres (NaN unknown) as the `compressedDepth` transport
    publishes a 16UC1 (millimetres) or 32FC1 (quantised inverse depth) Image, its 16-bit image
    compressed as png or rvl."""
    import cv2

    if compression not in DEPTH_COMPRESSIONS:
        raise ValueError(f"compressedDepth compresses with one of {DEPTH_COMPRESSIONS}, not {compression!r}")
    metres = np.asarray(metres, np.float32)
    if metres.ndim != 2:
        raise ValueError(f"expected H x W depth in metres, got shape {metres.shape}")
    known = np.isfinite(metres) & (metres > 0)
    if encoding == "16UC1":
        quant_a = quant_b = 0.0
        pixels = np.where(known, np.clip(np.rint(metres / DEPTH_16U_SCALE), 0, 65535), 0).astype(np.uint16)
    elif encoding == "32FC1":
        quant_a = depth_quantization * (depth_quantization + 1.0)
        quant_b = 1.0 - quant_a / depth_max
        known &= metres < depth_max
        with np.errstate(divide="ignore", invalid="ignore"):
            inverse = np.where(known, quant_a / metres + quant_b, 0)
        pixels = np.clip(inverse, 0, 65535).astype(np.uint16)
    else:
        raise ValueError(f"compressedDepth encodes 16UC1 or 32FC1, not {encoding!r}")
    if compression == "rvl":
        payload = _RVL_SIZE.pack(pixels.shape[1], pixels.shape[0]) + rvl.encode(pixels)
    else:
        ok, png = cv2.imencode(".png", pixels)
        if not ok:
            raise ValueError(f"OpenCV could not encode a {pixels.shape} depth image as png")
        payload = png.tobytes()
    data = _DEPTH_HEADER.pack(0, quant_a, quant_b) + payload
    return classes.build(COMPRESSED_IMAGE, header=header_or_default(header, classes),
                         format=f"{encoding}; compressedDepth {compression}",
                         data=classes.sequence(np.frombuffer(data, np.uint8), np.uint8))


def image_to_rgb8(msg: Message) -> np.ndarray:
    """H x W x 3 uint8 RGB pixels of a colour or mono8 Image (a read-only view when already rgb8) or
    of a jpeg / png CompressedImage."""
    if is_compressed(msg):
        return rgb8_from_pixels(*compressed_image_to_numpy(msg))
    return rgb8_from_pixels(image_to_numpy(msg), msg.encoding)


def depth_image_to_metres(msg: Message) -> np.ndarray:
    """H x W float32 depth in metres of a 16UC1, mono16 or 32FC1 Image (a read-only view when 32FC1)
    or of a `compressedDepth` CompressedImage."""
    if is_compressed(msg):
        return compressed_depth_to_metres(msg)
    return metres_from_pixels(image_to_numpy(msg), msg.encoding)
