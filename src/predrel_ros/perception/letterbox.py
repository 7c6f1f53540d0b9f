"""Letterbox preprocessing: the frame scaled to fit the network input, aspect ratio kept, padded.

Matches what Ultralytics YOLO models are trained with (grey 114 padding split evenly on both sides,
RGB, values in [0, 1], NCHW float32), so a user's own exported model sees the same pixels it saw
in training. `Letterbox.to_frame` maps network-input coordinates back to the frame.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

PAD_VALUE = 114
#: network stride of YOLO models: dynamic inputs are padded to a multiple of it
STRIDE = 32


@dataclass(frozen=True)
class Letterbox:
    """Geometry of one letterboxed frame: frame -> input is `x_in = x_frame * scale + pad_x`."""

    frame_height: int
    frame_width: int
    input_height: int
    input_width: int
    scale: float
    pad_x: int
    pad_y: int

    @property
    def content_height(self) -> int:
        """Rows of the input covered by the scaled frame (the rest is padding)."""
        return int(round(self.frame_height * self.scale))

    @property
    def content_width(self) -> int:
        return int(round(self.frame_width * self.scale))

    def to_frame(self, boxes: np.ndarray) -> np.ndarray:
        """(N, 4) x1, y1, x2, y2 boxes in input pixels -> frame pixels, clipped to the frame."""
        boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4).copy()
        boxes[:, [0, 2]] = (boxes[:, [0, 2]] - self.pad_x) / self.scale
        boxes[:, [1, 3]] = (boxes[:, [1, 3]] - self.pad_y) / self.scale
        boxes[:, [0, 2]] = boxes[:, [0, 2]].clip(0, self.frame_width)
        boxes[:, [1, 3]] = boxes[:, [1, 3]].clip(0, self.frame_height)
        return boxes


def plan(frame_height: int, frame_width: int, input_height: int, input_width: int) -> Letterbox:
    """Scale and padding that fit a frame into an input of the given size (Ultralytics rounding)."""
    if min(frame_height, frame_width, input_height, input_width) <= 0:
        raise ValueError(f"letterbox needs positive sizes, got frame {frame_width}x{frame_height} "
                         f"and input {input_width}x{input_height}")
    scale = min(input_height / frame_height, input_width / frame_width)
    content_w = int(round(frame_width * scale))
    content_h = int(round(frame_height * scale))
    dw = (input_width - content_w) / 2.0
    dh = (input_height - content_h) / 2.0
    pad_x = int(round(dw - 0.1))
    pad_y = int(round(dh - 0.1))
    return Letterbox(frame_height, frame_width, input_height, input_width, scale, pad_x, pad_y)


def input_size_for(frame_height: int, frame_width: int, longest_side: int | None = None,
                   stride: int = STRIDE) -> tuple[int, int]:
    """Input (height, width) for a model with dynamic spatial dims: the frame (scaled so its longest
    side is `longest_side`, when given) padded up to a multiple of `stride`, e.g. 320x240 -> 320x256."""
    scale = 1.0 if longest_side is None else longest_side / max(frame_height, frame_width)
    height = int(math.ceil(round(frame_height * scale) / stride) * stride)
    width = int(math.ceil(round(frame_width * scale) / stride) * stride)
    return height, width


def apply(frame: np.ndarray, geometry: Letterbox, bgr: bool = True) -> np.ndarray:
    """The frame (H x W x 3 uint8) as a (1, 3, input_height, input_width) float32 RGB tensor in [0, 1]."""
    frame = np.asarray(frame)
    if frame.ndim != 3 or frame.shape[2] != 3:
        raise ValueError(f"expected an H x W x 3 colour frame, got shape {frame.shape}")
    if frame.dtype != np.uint8:
        raise ValueError(f"expected an 8-bit colour frame (uint8), got dtype {frame.dtype}")
    if frame.shape[:2] != (geometry.frame_height, geometry.frame_width):
        raise ValueError(f"frame is {frame.shape[1]}x{frame.shape[0]} but the letterbox was planned "
                         f"for {geometry.frame_width}x{geometry.frame_height}")
    content = (geometry.content_width, geometry.content_height)
    if content != (geometry.frame_width, geometry.frame_height):
        frame = cv2.resize(frame, content, interpolation=cv2.INTER_LINEAR)
    canvas = np.full((geometry.input_height, geometry.input_width, 3), PAD_VALUE, dtype=np.uint8)
    canvas[geometry.pad_y:geometry.pad_y + content[1], geometry.pad_x:geometry.pad_x + content[0]] = frame
    if bgr:
        canvas = canvas[:, :, ::-1]
    tensor = canvas.transpose(2, 0, 1)[None].astype(np.float32)
    tensor *= 1.0 / 255.0
    return np.ascontiguousarray(tensor)
