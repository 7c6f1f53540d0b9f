"""Target assignment: which prediction locations learn which ground-truth instance.

Task-aligned assignment (TOOD, Feng et al. 2021, as in YOLOv8): a location is a candidate for an
instance when its centre lies inside the instance's box; candidates are ranked by
score^alpha * IoU^beta of the current prediction, the top k become positives, a location claimed
by several instances keeps the one its box overlaps most. The class target of a positive is its
alignment normalised per instance to that instance's best IoU, so class scores learn to rank boxes
by localisation quality (what NMS needs; the YOLO-seg layout has no separate objectness).
An instance too small to contain any location centre gets the location nearest its centre.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from predrel_ros.tools.training.boxes import pairwise_iou


@dataclass(frozen=True)
class AssignmentConfig:
    top_k: int = 10
    alpha: float = 0.5  # weight of the class score in the alignment metric
    beta: float = 6.0  # weight of the IoU in the alignment metric

    def __post_init__(self) -> None:
        if self.top_k < 1:
            raise ValueError(f"AssignmentConfig.top_k must be >= 1, got {self.top_k}")
        if self.alpha < 0 or self.beta < 0:
            raise ValueError(f"AssignmentConfig.alpha and beta must be >= 0, got {self.alpha}, {self.beta}")


@dataclass
class Assignment:
    """positive (B, N) bool; instance (B, N) index of the assigned instance (0 where not positive);
    target_scores (B, N, nc) soft class targets (zero rows for negatives)."""

    positive: torch.Tensor
    instance: torch.Tensor
    target_scores: torch.Tensor


@torch.no_grad()
def assign(scores: torch.Tensor, boxes: torch.Tensor, anchors: torch.Tensor, gt_boxes: torch.Tensor,
           gt_labels: torch.Tensor, gt_valid: torch.Tensor, config: AssignmentConfig = AssignmentConfig()
           ) -> Assignment:
    """scores (B, N, nc) in [0, 1]; boxes (B, N, 4) xyxy; anchors (N, 2); gt_boxes (B, M, 4);
    gt_labels (B, M) long; gt_valid (B, M) bool (instances are padded to M per image)."""
    batch, n, nc = scores.shape
    m = gt_boxes.shape[1]
    if m == 0:
        return Assignment(torch.zeros(batch, n, dtype=torch.bool, device=scores.device),
                          torch.zeros(batch, n, dtype=torch.long, device=scores.device), torch.zeros_like(scores))
    x, y = anchors[:, 0], anchors[:, 1]
    inside = ((x[None, None] > gt_boxes[..., 0:1]) & (x[None, None] < gt_boxes[..., 2:3])
              & (y[None, None] > gt_boxes[..., 1:2]) & (y[None, None] < gt_boxes[..., 3:4]))  # (B, M, N)
    centres = (gt_boxes[..., :2] + gt_boxes[..., 2:]) / 2
    nearest = (anchors[None, None] - centres[:, :, None]).pow(2).sum(-1).argmin(-1)  # (B, M)
    fallback = torch.zeros_like(inside).scatter_(2, nearest[..., None], True)
    inside = torch.where(inside.any(-1, keepdim=True), inside, fallback) & gt_valid[..., None]

    ious = pairwise_iou(gt_boxes, boxes).clamp(min=0) * inside  # (B, M, N)
    label_index = gt_labels.clamp(0, nc - 1)[..., None].expand(batch, m, n)
    class_scores = scores.transpose(1, 2).gather(1, label_index)  # (B, M, N): score of each gt's class
    align = class_scores.pow(config.alpha) * ious.pow(config.beta) * inside

    k = min(config.top_k, n)
    top = align.topk(k, dim=-1).indices
    chosen = torch.zeros_like(inside).scatter_(2, top, True) & inside
    # an instance whose candidates all align at 0 (untrained net) still gets its top-k candidates
    chosen_any = chosen.sum(-1) > 0
    chosen = torch.where(chosen_any[..., None], chosen, inside)

    multiple = chosen.sum(1) > 1  # (B, N) claimed by several instances: keep the best-overlapping one
    if multiple.any():
        best = ious.argmax(1)  # (B, N)
        only_best = torch.zeros_like(chosen).scatter_(1, best[:, None], True)
        chosen = torch.where(multiple[:, None], only_best & chosen, chosen)
    positive = chosen.any(1)
    instance = chosen.float().argmax(1)

    align = align * chosen
    max_align = align.amax(-1, keepdim=True)
    max_iou = (ious * chosen).amax(-1, keepdim=True)
    normalised = (align * max_iou / (max_align + 1e-9)).amax(1)  # (B, N)
    labels = gt_labels.gather(1, instance).clamp(0, nc - 1)
    target_scores = torch.zeros_like(scores)
    target_scores.scatter_(2, labels[..., None], (normalised * positive)[..., None])
    return Assignment(positive, instance * positive, target_scores)
