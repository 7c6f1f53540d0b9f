"""sensor_msgs/Image <-> numpy, for rclpy and rosbags messages alike.

Decoding has two steps, so that another image message (sensor_msgs/CompressedImage, say) needs only
its own first step:

1. message -> pixels: `image_to_numpy(msg)`, the one decoder of an Image: a read-only numpy view of
   `msg.data` (no copy) that honours `step` (padded rows) and `is_bigendian`;
2. pixels -> what the pipeline wants: `rgb8_from_pixels(pixels, encoding)` (H x W x 3 uint8 RGB) or
   `metres_from_pixels(pixels, encoding)` (H x W float32 metres); `image_to_rgb8(msg)` and
   `depth_image_to_metres(msg)` are both steps.

`numpy_to_image` builds an Image with one copy of the pixels. No cv_bridge is needed (the ROS 2 one
is not installable from PyPI and the PyPI `cv-bridge` is the ROS 1 one).

Encodings (`IMAGE_ENCODINGS`) are the names of sensor_msgs/image_encodings.hpp, matched exactly:
"rgb8" but "16UC1", as cv_bridge and image_transport match them. Another spelling ("RGB8",
"16uc1") is refused with the supported name in the message, rather than read as a guess, so a
driver that writes nonstandard names is found here and not by the next ROS tool that reads the
same topic. An unsupported encoding raises `UnsupportedEncoding` (a `UserError`: set the camera
driver to one of them), malformed messages `ValueError` naming the field.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

from predrel_ros.core.errors import UserError
from predrel_ros.ros.messages.fields import header_or_default
from predrel_ros.ros.messages.message_classes import IMAGE, RCLPY, Message, MessageClasses


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


def image_to_rgb8(msg: Message) -> np.ndarray:
    """H x W x 3 uint8 RGB pixels of a colour or mono8 image (a read-only view when already rgb8)."""
    return rgb8_from_pixels(image_to_numpy(msg), msg.encoding)


def depth_image_to_metres(msg: Message) -> np.ndarray:
    """H x W float32 depth in metres of a 16UC1, mono16 or 32FC1 image (a read-only view when 32FC1)."""
    return metres_from_pixels(image_to_numpy(msg), msg.encoding)
