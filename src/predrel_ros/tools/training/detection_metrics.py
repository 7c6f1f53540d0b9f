"""Instance-segmentation quality: box AP50 per class, mean matched mask IoU, precision and recall.

Matching (per image and class, COCO style): detections in descending score order each take the
unmatched ground-truth instance they overlap most with box IoU >= `iou_threshold`. Ground truth
marked `ignore` (e.g. nearly fully occluded instances) is neither required nor penalised: a detection
matching only an ignored instance is dropped from the counts.

- AP50: area under the interpolated precision-recall curve over all detections, sampled at 101
  recall points (COCO); classes without ground truth in the whole set are left out of the mean.
- At the operating point (detections with score >= `score_threshold`, what a user of the decoder
  gets): precision, recall, and the mean mask IoU of matched pairs (masks at frame resolution).

The same metrics over groups of classes (`regrouped`, e.g. class -> entity role) say how well the
pipeline finds what the predicates use: a cube taken for a cylinder is a wrong class but still the
right manipulated object.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from predrel_ros.core.boxes import box_iou


@dataclass
class InstanceSet:
    """Instances of one image: boxes (K, 4) x1 y1 x2 y2 in frame pixels, labels (K,) class indices,
    masks (K, H, W) bool or None, scores (K,) for detections, ignore (K,) bool for ground truth."""

    boxes: np.ndarray
    labels: np.ndarray
    masks: np.ndarray | None = None
    scores: np.ndarray | None = None
    ignore: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.boxes = np.asarray(self.boxes, dtype=np.float64).reshape(-1, 4)
        count = self.boxes.shape[0]
        self.labels = np.asarray(self.labels, dtype=np.int64).reshape(-1)
        if self.labels.shape[0] != count:
            raise ValueError(f"InstanceSet: {count} boxes but {self.labels.shape[0]} labels")
        if self.scores is not None:
            self.scores = np.asarray(self.scores, dtype=np.float64).reshape(-1)
            if self.scores.shape[0] != count:
                raise ValueError(f"InstanceSet: {count} boxes but {self.scores.shape[0]} scores")
        self.ignore = (np.zeros(count, dtype=bool) if self.ignore is None
                       else np.asarray(self.ignore, dtype=bool).reshape(-1))
        if self.ignore.shape[0] != count:
            raise ValueError(f"InstanceSet: {count} boxes but {self.ignore.shape[0]} ignore flags")
        if self.masks is not None:
            self.masks = np.asarray(self.masks, dtype=bool)
            if self.masks.ndim != 3 or self.masks.shape[0] != count:
                raise ValueError(f"InstanceSet: masks must be ({count}, H, W), got {self.masks.shape}")


def regrouped(instances: InstanceSet, group_of_class: np.ndarray) -> InstanceSet:
    """The same instances with each class index replaced by its group's index (`group_of_class[class]`)."""
    return InstanceSet(instances.boxes, np.asarray(group_of_class, dtype=np.int64)[instances.labels],
                       masks=instances.masks, scores=instances.scores, ignore=instances.ignore)


def mask_iou(a: np.ndarray, b: np.ndarray) -> float:
    union = np.logical_or(a, b).sum()
    return float(np.logical_and(a, b).sum() / union) if union else 0.0


def _match(detections: InstanceSet, truth: InstanceSet, order: np.ndarray, iou_threshold: float) -> np.ndarray:
    """For detections taken in `order` (one class): matched truth index per detection (-1 none,
    -2 matched an ignored instance only)."""
    result = np.full(order.shape[0], -1, dtype=np.int64)
    if truth.boxes.shape[0] == 0 or order.size == 0:
        return result
    ious = box_iou(detections.boxes[order], truth.boxes)
    taken = np.zeros(truth.boxes.shape[0], dtype=bool)
    for i in range(order.shape[0]):
        candidates = np.where(~taken & ~truth.ignore, ious[i], -1.0)
        best = int(candidates.argmax())
        if candidates[best] >= iou_threshold:
            result[i] = best
            taken[best] = True
        elif truth.ignore.any() and np.max(np.where(truth.ignore, ious[i], -1.0)) >= iou_threshold:
            result[i] = -2
    return result


def average_precision(scores: np.ndarray, true_positive: np.ndarray, num_truth: int) -> float:
    """COCO 101-point interpolated AP of one class from its detections' scores and TP flags."""
    if num_truth == 0:
        return float("nan")
    if scores.size == 0:
        return 0.0
    order = np.argsort(-scores, kind="stable")
    tp = np.cumsum(true_positive[order])
    fp = np.cumsum(~true_positive[order])
    recall = tp / num_truth
    precision = tp / np.maximum(tp + fp, 1e-12)
    precision = np.maximum.accumulate(precision[::-1])[::-1]  # interpolated: best precision at >= recall
    samples = np.linspace(0.0, 1.0, 101)
    index = np.searchsorted(recall, samples, side="left")
    return float(np.where(index < recall.size, precision[np.minimum(index, recall.size - 1)], 0.0).mean())


@dataclass
class ClassResult:
    name: str
    num_truth: int
    ap50: float
    precision: float
    recall: float
    mean_mask_iou: float
    num_matched: int

    def as_dict(self) -> dict:
        return {"num_truth": self.num_truth, "box_ap50": _clean(self.ap50), "precision": _clean(self.precision),
                "recall": _clean(self.recall), "mean_mask_iou": _clean(self.mean_mask_iou),
                "num_matched": self.num_matched}


def _clean(value: float) -> float | None:
    return None if np.isnan(value) else round(float(value), 4)


@dataclass
class EvaluationResult:
    """Metrics per class; `per_group` the same metrics with classes merged into groups, when asked for."""

    per_class: list[ClassResult]
    num_images: int
    per_group: "EvaluationResult | None" = None
    #: detections that are no object but sit on a synthetic occluder, per frame (None: no occluded frames)
    occluder_detections_per_frame: float | None = None

    def _mean(self, attribute: str) -> float:
        values = [getattr(c, attribute) for c in self.per_class if c.num_truth > 0]
        values = [v for v in values if not np.isnan(v)]
        return float(np.mean(values)) if values else float("nan")

    @property
    def mean_ap50(self) -> float:
        return self._mean("ap50")

    @property
    def mean_mask_iou(self) -> float:
        return self._mean("mean_mask_iou")

    def as_dict(self) -> dict:
        result = {"num_images": self.num_images, "box_ap50": _clean(self.mean_ap50),
                  "mean_mask_iou": _clean(self.mean_mask_iou), "precision": _clean(self._mean("precision")),
                  "recall": _clean(self._mean("recall")),
                  "per_class": {c.name: c.as_dict() for c in self.per_class}}
        if self.occluder_detections_per_frame is not None:
            result["occluder_detections_per_frame"] = round(self.occluder_detections_per_frame, 4)
        if self.per_group is not None:
            result["per_group"] = {k: v for k, v in self.per_group.as_dict().items() if k != "num_images"}
        return result


@dataclass
class _ClassTally:
    scores: list = field(default_factory=list)
    true_positive: list = field(default_factory=list)
    num_truth: int = 0
    operating_tp: int = 0
    operating_fp: int = 0
    mask_ious: list = field(default_factory=list)


class DetectionEvaluator:
    """Accumulates images with `add(detections, truth)`; `result()` gives the metrics."""

    def __init__(self, class_names: Sequence[str], iou_threshold: float = 0.5, score_threshold: float = 0.25) -> None:
        if not 0.0 < iou_threshold <= 1.0:
            raise ValueError(f"iou_threshold must lie in (0, 1], got {iou_threshold}")
        if not 0.0 <= score_threshold <= 1.0:
            raise ValueError(f"score_threshold must lie in [0, 1], got {score_threshold}")
        self.class_names = list(class_names)
        self.iou_threshold = iou_threshold
        self.score_threshold = score_threshold
        self._tallies = [_ClassTally() for _ in self.class_names]
        self._images = 0

    def add(self, detections: InstanceSet, truth: InstanceSet) -> None:
        if detections.scores is None:
            raise ValueError("detections need scores")
        for labels in (detections.labels, truth.labels):
            if labels.size and (labels.min() < 0 or labels.max() >= len(self.class_names)):
                raise ValueError(f"class index out of range 0..{len(self.class_names) - 1}: {labels.tolist()}")
        self._images += 1
        for class_id, tally in enumerate(self._tallies):
            det_index = np.flatnonzero(detections.labels == class_id)
            truth_index = np.flatnonzero(truth.labels == class_id)
            class_truth = InstanceSet(truth.boxes[truth_index], truth.labels[truth_index],
                                      ignore=truth.ignore[truth_index])
            tally.num_truth += int((~class_truth.ignore).sum())
            order = det_index[np.argsort(-detections.scores[det_index], kind="stable")]
            matched = _match(detections, class_truth, order, self.iou_threshold)
            counted = matched != -2
            tally.scores.extend(detections.scores[order][counted].tolist())
            tally.true_positive.extend((matched[counted] >= 0).tolist())

            operating = detections.scores[order] >= self.score_threshold
            op_matched = _match(detections, class_truth, order[operating], self.iou_threshold)
            tally.operating_tp += int((op_matched >= 0).sum())
            tally.operating_fp += int((op_matched == -1).sum())
            if detections.masks is not None and truth.masks is not None:
                for det, gt in zip(order[operating][op_matched >= 0], op_matched[op_matched >= 0]):
                    tally.mask_ious.append(mask_iou(detections.masks[det], truth.masks[truth_index[gt]]))

    def result(self) -> EvaluationResult:
        per_class = []
        for name, tally in zip(self.class_names, self._tallies):
            scores = np.asarray(tally.scores, dtype=np.float64)
            tp = np.asarray(tally.true_positive, dtype=bool)
            found = tally.operating_tp + tally.operating_fp
            per_class.append(ClassResult(
                name=name, num_truth=tally.num_truth,
                ap50=average_precision(scores, tp, tally.num_truth),
                precision=tally.operating_tp / found if found else float("nan"),
                recall=tally.operating_tp / tally.num_truth if tally.num_truth else float("nan"),
                mean_mask_iou=float(np.mean(tally.mask_ious)) if tally.mask_ious else float("nan"),
                num_matched=len(tally.mask_ious)))
        return EvaluationResult(per_class, self._images)
