"""Decoder for the standard Ultralytics YOLO-seg export layout, for any input size and class count.

Outputs of a YOLO-seg model exported with `yolo export format=onnx` (or torchscript):
  - detections `output0`: (1, 4 + nc + nm, N): per candidate cx, cy, w, h in input pixels, nc class
    scores (already sigmoid), nm mask coefficients (nm = 32);
  - prototypes `output1`: (1, nm, H/4, W/4) for an H x W (letterboxed) input.
Outputs are found by name when named so, else by rank (3-D detections, 4-D prototypes). End-to-end
exports (`nms=True`, output (1, 300, 6 + nm)) are a different layout and are refused with a hint.

Decoding: best class per candidate, score threshold, class-aware NMS, boxes mapped back through the
letterbox to the frame, instance masks = sigmoid(coefficients . prototypes) resampled bilinearly to
frame resolution over the frame's (unpadded) part of the input, kept inside the box, thresholded.
Mask quality is the mean decisiveness |2p - 1| of the mask probabilities p over the box: 1 when every
pixel is clearly in or out, lower when the boundary is soft (blur, low resolution).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

from predrel_ros.core.boxes import class_aware_nms
from predrel_ros.perception.detections import Detections
from predrel_ros.perception.letterbox import Letterbox


@dataclass(frozen=True)
class DecoderConfig:
    score_threshold: float = 0.25
    iou_threshold: float = 0.45
    mask_threshold: float = 0.5
    max_detections: int = 100
    max_candidates: int = 3000  # highest-scoring candidates that enter NMS

    def __post_init__(self) -> None:
        for name in ("score_threshold", "iou_threshold", "mask_threshold"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"decoder.{name} must lie in [0, 1], got {value}")
        for name in ("max_detections", "max_candidates"):
            if getattr(self, name) < 1:
                raise ValueError(f"decoder.{name} must be at least 1, got {getattr(self, name)}")


def split_outputs(outputs: Mapping[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray | None]:
    """(detections (1, C, N), prototypes (1, nm, h, w) or None) from a model's named outputs."""
    if "output0" in outputs:
        return np.asarray(outputs["output0"]), (None if "output1" not in outputs
                                                else np.asarray(outputs["output1"]))
    by_rank: dict[int, list[np.ndarray]] = {}
    for value in outputs.values():
        value = np.asarray(value)
        by_rank.setdefault(value.ndim, []).append(value)
    if len(by_rank.get(3, [])) != 1 or len(by_rank.get(4, [])) > 1:
        shapes = {name: tuple(np.shape(value)) for name, value in outputs.items()}
        raise ValueError(f"cannot tell the YOLO-seg outputs apart: expected one 3-D detection output "
                         f"(1, 4+nc+32, N) and one 4-D prototype output (1, 32, H/4, W/4), got {shapes}")
    protos = by_rank.get(4, [None])[0]
    return by_rank[3][0], protos


class YoloSegDecoder:
    """Turns raw YOLO-seg outputs of one image into `Detections` in frame pixels."""

    def __init__(self, num_classes: int, config: DecoderConfig | None = None) -> None:
        if num_classes < 1:
            raise ValueError(f"a detector needs at least one class, got {num_classes}")
        self.num_classes = num_classes
        self.config = config or DecoderConfig()

    def decode(self, outputs: Mapping[str, np.ndarray], letterbox: Letterbox,
               with_masks: bool = True) -> Detections:
        predictions, protos = split_outputs(outputs)
        rows = self._candidates(predictions, protos)
        cfg = self.config
        boxes_cxcywh = rows[:, :4]
        class_scores = rows[:, 4:4 + self.num_classes]
        coefficients = rows[:, 4 + self.num_classes:]
        class_ids = class_scores.argmax(axis=1)
        scores = class_scores[np.arange(rows.shape[0]), class_ids]
        keep = np.flatnonzero(scores > cfg.score_threshold)
        if keep.size > cfg.max_candidates:
            keep = keep[np.argsort(-scores[keep], kind="stable")[:cfg.max_candidates]]
        boxes = _xyxy(boxes_cxcywh[keep])
        kept = class_aware_nms(boxes, scores[keep], class_ids[keep], cfg.iou_threshold)
        kept = kept[:cfg.max_detections]
        index = keep[kept]
        frame_boxes = letterbox.to_frame(boxes[kept])
        detections = Detections(frame_boxes, scores[index], class_ids[index])
        if with_masks and protos is not None:
            detections.masks, detections.mask_quality = self._masks(
                coefficients[index], protos[0], frame_boxes, letterbox)
        return detections

    def _candidates(self, predictions: np.ndarray, protos: np.ndarray | None) -> np.ndarray:
        """(N, 4 + nc + nm) float64 rows of the single image in `predictions`."""
        if predictions.ndim != 3 or predictions.shape[0] != 1:
            raise ValueError(f"YOLO-seg detections must have shape (1, 4+nc+32, N) for one image, "
                             f"got {predictions.shape}")
        num_coefficients = 0 if protos is None else protos.shape[1]
        channels = 4 + self.num_classes + num_coefficients
        if predictions.shape[1] != channels:
            raise ValueError(
                f"model output {predictions.shape} does not fit {self.num_classes} classes: expected "
                f"(1, 4 + {self.num_classes} classes + {num_coefficients} mask coefficients = {channels}, "
                f"N). Check that the labels file lists the model's classes, and export the model "
                f"without end-to-end NMS (Ultralytics: nms=False, end2end=False)")
        return predictions[0].T.astype(np.float64)

    def _masks(self, coefficients: np.ndarray, protos: np.ndarray, boxes: np.ndarray,
               letterbox: Letterbox) -> tuple[np.ndarray, np.ndarray]:
        height, width = letterbox.frame_height, letterbox.frame_width
        masks = np.zeros((len(boxes), height, width), dtype=bool)
        quality = np.zeros(len(boxes))
        if len(boxes) == 0:
            return masks, quality
        num_coefficients, proto_h, proto_w = protos.shape
        # the frame's part of the prototype grid (letterbox padding excluded)
        sy = proto_h / letterbox.input_height
        sx = proto_w / letterbox.input_width
        top, left = letterbox.pad_y * sy, letterbox.pad_x * sx
        bottom = (letterbox.pad_y + letterbox.content_height) * sy
        right = (letterbox.pad_x + letterbox.content_width) * sx
        rows = _bilinear_weights(height, top, bottom, proto_h)
        cols = _bilinear_weights(width, left, right, proto_w)
        flat = protos.reshape(num_coefficients, -1).astype(np.float64)
        logits = (coefficients @ flat).reshape(-1, proto_h, proto_w)
        probabilities = 1.0 / (1.0 + np.exp(-logits))
        threshold = self.config.mask_threshold
        for i, (x1, y1, x2, y2) in enumerate(boxes):
            # a pixel column c belongs to the box when x1 <= c < x2 (Ultralytics crop_mask)
            c0, c1 = int(np.ceil(x1)), int(np.ceil(x2))
            r0, r1 = int(np.ceil(y1)), int(np.ceil(y2))
            if c1 <= c0 or r1 <= r0:
                continue
            p = rows[r0:r1] @ probabilities[i] @ cols[c0:c1].T
            masks[i, r0:r1, c0:c1] = p > threshold
            quality[i] = float(np.abs(2.0 * p - 1.0).mean())
        return masks, quality


def _xyxy(cxcywh: np.ndarray) -> np.ndarray:
    cx, cy, w, h = cxcywh.T
    return np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=1)


def _bilinear_weights(out_size: int, start: float, stop: float, grid_size: int) -> np.ndarray:
    """(out_size, grid_size) matrix resampling the grid span [start, stop) onto `out_size` pixels with
    half-pixel centres and edge clamping (the arithmetic of cv2.resize / torch bilinear,
    align_corners=False, applied to the cropped span)."""
    crop_start = int(np.floor(start + 1e-6))
    crop_stop = max(crop_start + 1, int(np.ceil(stop - 1e-6)))
    crop_size = crop_stop - crop_start
    position = (np.arange(out_size) + 0.5) * (crop_size / out_size) - 0.5
    position = position.clip(0, crop_size - 1)
    low = np.floor(position).astype(np.int64)
    high = np.minimum(low + 1, crop_size - 1)
    frac = position - low
    weights = np.zeros((out_size, grid_size))
    weights[np.arange(out_size), crop_start + low] += 1.0 - frac
    weights[np.arange(out_size), crop_start + high] += frac
    return weights
