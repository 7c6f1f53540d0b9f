"""Evaluating a detector on labelled frames: ground truth from the visible masks, metrics per class.

A detector here is any callable frame (H x W x 3 uint8 RGB) -> `Detections`: the network under
training (`TorchDetector`, through the project's YOLO-seg decoder) or an exported model run by the
perception pipeline (`Perceiver.detect`). Ground-truth boxes are the tight boxes of the visible
masks; instances with fewer
than `min_pixels` visible pixels are marked ignore (neither required nor penalised).
"""
from __future__ import annotations

from typing import Callable, Iterable, Mapping, Sequence

import numpy as np
import torch

from predrel_ros.core.boxes import box_iou
from predrel_ros.perception import letterbox
from predrel_ros.perception.detections import Detections
from predrel_ros.perception.yolo_seg import DecoderConfig, YoloSegDecoder
from predrel_ros.tools.training.data import LabelledImage, boxes_from_masks
from predrel_ros.tools.training.detection_metrics import DetectionEvaluator, EvaluationResult, InstanceSet, regrouped
from predrel_ros.tools.training.network import SegmentationNet, YoloSegExport

Detector = Callable[[np.ndarray], Detections]


def ground_truth(sample: LabelledImage, min_pixels: int) -> InstanceSet:
    pixels = sample.masks.reshape(sample.masks.shape[0], -1).sum(1)
    return InstanceSet(boxes_from_masks(sample.masks), sample.labels, masks=sample.masks,
                       ignore=pixels < min_pixels)


def as_instances(detections: Detections) -> InstanceSet:
    return InstanceSet(detections.boxes, detections.class_ids, masks=detections.masks, scores=detections.scores)


class TorchDetector:
    """A `SegmentationNet` in eval mode behind the same letterbox and decoder as the exported model."""

    def __init__(self, net: SegmentationNet, input_hw: tuple[int, int], decoder: DecoderConfig | None = None) -> None:
        self.model = YoloSegExport(net).eval()
        self.input_hw = input_hw
        self.decoder = YoloSegDecoder(net.config.num_classes, decoder)

    @torch.no_grad()
    def __call__(self, frame: np.ndarray) -> Detections:
        geometry = letterbox.plan(frame.shape[0], frame.shape[1], *self.input_hw)
        tensor = torch.from_numpy(letterbox.apply(frame, geometry, bgr=False))
        output0, output1 = self.model(tensor)
        return self.decoder.decode({"output0": output0.numpy(), "output1": output1.numpy()}, geometry)


def occluder_detections(detections: InstanceSet, truth: InstanceSet, occluded: np.ndarray, iou_threshold: float,
                        score_threshold: float) -> int:
    """How many detections (score >= threshold) are an occluder taken for an object: they match no
    ground-truth instance of any class (box IoU below the threshold) and at least half of their mask
    (their box without one) lies on occluder pixels."""
    height, width = occluded.shape
    count = 0
    for i in np.flatnonzero(detections.scores >= score_threshold):
        if len(truth.boxes) and box_iou(detections.boxes[i], truth.boxes).max() >= iou_threshold:
            continue
        if detections.masks is not None and detections.masks[i].any():
            share = occluded[detections.masks[i]].mean()
        else:
            x1, y1, x2, y2 = np.clip(np.round(detections.boxes[i]), 0, [width, height, width, height]).astype(int)
            share = occluded[y1:y2, x1:x2].mean() if x2 > x1 and y2 > y1 else 0.0
        count += bool(share >= 0.5)
    return count


def evaluate_detector(detector: Detector, samples: Iterable[LabelledImage], class_names: Sequence[str],
                      min_pixels: int, iou_threshold: float = 0.5, score_threshold: float = 0.25,
                      groups: Mapping[str, str] | None = None) -> EvaluationResult:
    """Metrics of `detector` over `samples`; with `groups` (class name -> group name, a class not in
    it is its own group) also per group, e.g. per entity role."""
    evaluator = DetectionEvaluator(class_names, iou_threshold, score_threshold)
    group_of_class = group_evaluator = None
    if groups is not None:
        group_of = [groups.get(name, name) for name in class_names]
        group_names = list(dict.fromkeys(group_of))
        group_of_class = np.array([group_names.index(group) for group in group_of])
        group_evaluator = DetectionEvaluator(group_names, iou_threshold, score_threshold)
    occluded_frames = occluder_hits = 0
    for sample in samples:
        detections, truth = as_instances(detector(sample.image)), ground_truth(sample, min_pixels)
        evaluator.add(detections, truth)
        if group_evaluator is not None:
            group_evaluator.add(regrouped(detections, group_of_class), regrouped(truth, group_of_class))
        if sample.occluded is not None:
            occluded_frames += 1
            occluder_hits += occluder_detections(detections, truth, sample.occluded, iou_threshold, score_threshold)
    result = evaluator.result()
    if occluded_frames:
        result.occluder_detections_per_frame = occluder_hits / occluded_frames
    if group_evaluator is not None:
        result.per_group = group_evaluator.result()
    return result
