"""Training losses: class BCE against the task-aligned soft targets, CIoU box loss and the mask loss.

Mask loss (YOLACT / YOLO-seg): for each positive location, the predicted mask logits
coefficients @ prototypes are compared by per-pixel BCE with its instance's mask at prototype
resolution, inside the instance's box only (the decoder crops masks to the box), averaged over the
box area. Box and mask terms are weighted by the soft class target, so well-aligned locations count
more; every term is normalised by the sum of the soft targets.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch.nn import functional as F

from predrel_ros.tools.training.assignment import Assignment
from predrel_ros.tools.training.boxes import complete_iou
from predrel_ros.tools.training.network import PROTOTYPE_STRIDE, NetOutputs


@dataclass(frozen=True)
class LossWeights:
    classification: float = 1.0
    box: float = 5.0
    mask: float = 5.0

    def __post_init__(self) -> None:
        for name in ("classification", "box", "mask"):
            if getattr(self, name) < 0:
                raise ValueError(f"LossWeights.{name} must be >= 0, got {getattr(self, name)}")


@dataclass
class LossTerms:
    total: torch.Tensor
    classification: torch.Tensor
    box: torch.Tensor
    mask: torch.Tensor

    def as_floats(self) -> dict[str, float]:
        return {"loss": float(self.total.detach()), "cls": float(self.classification.detach()),
                "box": float(self.box.detach()),
                "mask": float(self.mask.detach())}


def box_crop(boxes: torch.Tensor, height: int, width: int) -> torch.Tensor:
    """(K, height, width) float masks that are 1 inside each box (K, 4) given in pixels of that grid."""
    xs = torch.arange(width, device=boxes.device, dtype=boxes.dtype)[None, None, :] + 0.5
    ys = torch.arange(height, device=boxes.device, dtype=boxes.dtype)[None, :, None] + 0.5
    x1, y1, x2, y2 = (boxes[:, i, None, None] for i in range(4))
    return ((xs >= x1) & (xs <= x2) & (ys >= y1) & (ys <= y2)).to(boxes.dtype)


def segmentation_loss(outputs: NetOutputs, assignment: Assignment, gt_boxes: torch.Tensor,
                      gt_masks: torch.Tensor, weights: LossWeights = LossWeights()) -> LossTerms:
    """gt_boxes (B, M, 4) input pixels; gt_masks (B, M, H/4, W/4) in [0, 1] at prototype resolution."""
    positive = assignment.positive
    target_scores = assignment.target_scores
    norm = target_scores.sum().clamp(min=1.0)
    classification = F.binary_cross_entropy_with_logits(outputs.class_logits, target_scores, reduction="sum") / norm
    zero = outputs.class_logits.sum() * 0
    if not positive.any():
        return LossTerms(weights.classification * classification, classification, zero, zero)

    batch_index, location = positive.nonzero(as_tuple=True)
    instance = assignment.instance[batch_index, location]
    weight = target_scores[batch_index, location].sum(-1)
    target_boxes = gt_boxes[batch_index, instance]
    box = ((1 - complete_iou(outputs.box_xyxy[batch_index, location], target_boxes)) * weight).sum() / norm

    prototypes = outputs.prototypes  # (B, P, h, w)
    h, w = prototypes.shape[-2:]
    coefficients = outputs.coefficients[batch_index, location]
    logits = torch.empty((len(location), h, w), dtype=prototypes.dtype, device=prototypes.device)
    for image in batch_index.unique():  # per image: (K_b, P) @ (P, h*w), no (K, P, h, w) copy of prototypes
        rows = batch_index == image
        logits[rows] = (coefficients[rows] @ prototypes[image].flatten(1)).view(-1, h, w)
    target = gt_masks[batch_index, instance].to(logits.dtype)
    crop = box_crop(target_boxes / PROTOTYPE_STRIDE, h, w)
    per_pixel = F.binary_cross_entropy_with_logits(logits, target, reduction="none") * crop
    per_instance = per_pixel.sum((1, 2)) / crop.sum((1, 2)).clamp(min=1.0)
    mask = (per_instance * weight).sum() / norm

    total = weights.classification * classification + weights.box * box + weights.mask * mask
    return LossTerms(total, classification, box, mask)
