"""Box geometry in torch for training: pairwise IoU and the complete-IoU (CIoU) of matched boxes.

Boxes are (..., 4) tensors (x1, y1, x2, y2) in pixels. torchvision cannot be imported beside this
torch build, so these small ops are written here.
"""
from __future__ import annotations

import math

import torch

EPS = 1e-7


def box_area(boxes: torch.Tensor) -> torch.Tensor:
    return (boxes[..., 2] - boxes[..., 0]).clamp(min=0) * (boxes[..., 3] - boxes[..., 1]).clamp(min=0)


def pairwise_iou(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """IoU of every box in a (..., M, 4) with every box in b (..., N, 4): (..., M, N)."""
    lt = torch.maximum(a[..., :, None, :2], b[..., None, :, :2])
    rb = torch.minimum(a[..., :, None, 2:], b[..., None, :, 2:])
    inter = (rb - lt).clamp(min=0).prod(-1)
    union = box_area(a)[..., :, None] + box_area(b)[..., None, :] - inter
    return inter / (union + EPS)


def complete_iou(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """CIoU (Zheng et al. 2020) of matched boxes (..., 4) and (..., 4): IoU minus centre-distance and
    aspect-ratio penalties, so the gradient stays informative when boxes do not overlap."""
    inter_wh = (torch.minimum(pred[..., 2:], target[..., 2:])
                - torch.maximum(pred[..., :2], target[..., :2])).clamp(min=0)
    inter = inter_wh[..., 0] * inter_wh[..., 1]
    w1, h1 = pred[..., 2] - pred[..., 0], pred[..., 3] - pred[..., 1]
    w2, h2 = target[..., 2] - target[..., 0], target[..., 3] - target[..., 1]
    union = w1 * h1 + w2 * h2 - inter + EPS
    iou = inter / union
    enclose_wh = torch.maximum(pred[..., 2:], target[..., 2:]) - torch.minimum(pred[..., :2], target[..., :2])
    diagonal_sq = enclose_wh.pow(2).sum(-1) + EPS
    centre_sq = ((pred[..., :2] + pred[..., 2:]) - (target[..., :2] + target[..., 2:])).pow(2).sum(-1) / 4
    v = (4 / math.pi ** 2) * (torch.atan(w2 / (h2 + EPS)) - torch.atan(w1 / (h1 + EPS))).pow(2)
    with torch.no_grad():
        alpha = v / (v - iou + (1 + EPS))
    return iou - (centre_sq / diagonal_sq + v * alpha)
