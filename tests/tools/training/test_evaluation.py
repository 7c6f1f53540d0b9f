"""Detector evaluation helpers (tools/training/evaluation.py)."""
import numpy as np

from predrel_ros.tools.training.detection_metrics import InstanceSet
from predrel_ros.tools.training.evaluation import occluder_detections


def _masks(*boxes, shape=(40, 60)):
    out = np.zeros((len(boxes), *shape), bool)
    for mask, (x1, y1, x2, y2) in zip(out, boxes):
        mask[y1:y2, x1:x2] = True
    return out


def test_an_unmatched_detection_on_an_occluder_counts_and_a_real_object_does_not():
    occluded = np.zeros((40, 60), bool)
    occluded[0:20, 30:60] = True                                   # an occluder over the top right
    truth = InstanceSet(np.array([[0, 0, 20, 20]]), np.array([0]), masks=_masks((0, 0, 20, 20)))
    boxes = np.array([[0, 0, 20, 20], [32, 2, 50, 18], [30, 10, 60, 40], [40, 30, 50, 40]])
    detections = InstanceSet(boxes, np.array([0, 1, 1, 1]), scores=np.array([0.9, 0.6, 0.5, 0.1]),
                             masks=_masks(*boxes.astype(int)))
    # the object itself matches; the patch on the occluder counts; the detection only a third on it does
    # not; the one on the occluder below the score threshold does not
    assert occluder_detections(detections, truth, occluded, 0.5, 0.25) == 1
    assert occluder_detections(detections, truth, occluded, 0.5, 0.05) == 1   # (40..50, 30..40) is off it
    box_only = InstanceSet(boxes[1:2], np.array([1]), scores=np.array([0.6]))
    assert occluder_detections(box_only, InstanceSet(np.zeros((0, 4)), np.zeros(0)), occluded, 0.5, 0.25) == 1
