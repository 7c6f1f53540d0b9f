"""Box IoU and class-aware non-maximum suppression in numpy (torchvision does not import here).

The one box IoU of the package: tracking, NMS, hand de-duplication, association of evaluated with
reference entities and the detection metrics all use `box_iou`. (Training has a differentiable
torch IoU of its own in tools/training/boxes.py.)
"""
from __future__ import annotations

import numpy as np


def box_area(boxes: np.ndarray) -> np.ndarray:
    boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    return (boxes[:, 2] - boxes[:, 0]).clip(0) * (boxes[:, 3] - boxes[:, 1]).clip(0)


def pixel_span(box, height: int, width: int) -> tuple[int, int, int, int]:
    """The integer pixel rectangle [x1, x2) x [y1, y2) a box (x1, y1, x2, y2) touches, clipped to a
    height x width image (empty when x2 <= x1 or y2 <= y1)."""
    return (max(int(np.floor(box[0])), 0), max(int(np.floor(box[1])), 0),
            min(int(np.ceil(box[2])), width), min(int(np.ceil(box[3])), height))


def box_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(N, M) intersection over union of x1, y1, x2, y2 boxes; 0 where the union is empty, except
    that two identical boxes have IoU 1 also when they are empty (an entity hidden entirely, its box
    collapsed to a point, is still itself)."""
    a = np.asarray(a, dtype=np.float64).reshape(-1, 4)
    b = np.asarray(b, dtype=np.float64).reshape(-1, 4)
    identical = np.all(a[:, None, :] == b[None, :, :], axis=2)
    x1 = np.maximum(a[:, None, 0], b[None, :, 0])
    y1 = np.maximum(a[:, None, 1], b[None, :, 1])
    x2 = np.minimum(a[:, None, 2], b[None, :, 2])
    y2 = np.minimum(a[:, None, 3], b[None, :, 3])
    inter = (x2 - x1).clip(0) * (y2 - y1).clip(0)
    union = box_area(a)[:, None] + box_area(b)[None, :] - inter
    return np.where(identical, 1.0, np.divide(inter, union, out=np.zeros_like(inter), where=union > 0))


def nms(boxes: np.ndarray, scores: np.ndarray, iou_threshold: float) -> np.ndarray:
    """Greedy NMS: indices of kept boxes, highest score first. A box is suppressed when its IoU
    with a kept, higher-scoring box exceeds `iou_threshold`."""
    boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    order = np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")
    keep = []
    while order.size:
        best = order[0]
        keep.append(best)
        if order.size == 1:
            break
        overlap = box_iou(boxes[best], boxes[order[1:]])[0]
        order = order[1:][overlap <= iou_threshold]
    return np.asarray(keep, dtype=np.int64)


def class_aware_nms(boxes: np.ndarray, scores: np.ndarray, class_ids: np.ndarray,
                    iou_threshold: float) -> np.ndarray:
    """NMS within each class only (a cup inside a bowl survives); indices sorted by score."""
    boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    scores = np.asarray(scores, dtype=np.float64)
    class_ids = np.asarray(class_ids)
    if boxes.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    # shifting each class into its own region of the plane lets one NMS pass serve all classes
    span = float(np.abs(boxes).max()) * 2.0 + 1.0
    shifted = boxes + (class_ids.astype(np.float64) * span)[:, None]
    return nms(shifted, scores, iou_threshold)
