import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from predrel_ros.tools.training.detection_metrics import (
    DetectionEvaluator,
    InstanceSet,
    average_precision,
    mask_iou,
    regrouped,
)

NAMES = ("hand", "cube")


def _mask(box, shape=(40, 60)):
    mask = np.zeros(shape, bool)
    x1, y1, x2, y2 = (int(v) for v in box)
    mask[y1:y2, x1:x2] = True
    return mask


def _truth(boxes, labels, ignore=None):
    return InstanceSet(boxes, labels,
                       masks=np.stack([_mask(b) for b in boxes]) if boxes else np.zeros((0, 40, 60), bool),
                       ignore=ignore)


def _detections(boxes, labels, scores, masks=None):
    if masks is None:
        masks = np.stack([_mask(b) for b in boxes]) if boxes else np.zeros((0, 40, 60), bool)
    return InstanceSet(boxes, labels, masks=masks, scores=scores)


def test_perfect_detections_score_one():
    boxes = [[0, 0, 10, 10], [20, 20, 40, 30]]
    evaluator = DetectionEvaluator(NAMES)
    evaluator.add(_detections(boxes, [0, 1], [0.9, 0.8]), _truth(boxes, [0, 1]))
    result = evaluator.result()
    assert result.mean_ap50 == pytest.approx(1.0) and result.mean_mask_iou == pytest.approx(1.0)
    assert all(c.precision == 1.0 and c.recall == 1.0 for c in result.per_class)


def test_a_missed_instance_halves_recall_and_ap():
    evaluator = DetectionEvaluator(NAMES)
    evaluator.add(_detections([[0, 0, 10, 10]], [0], [0.9]), _truth([[0, 0, 10, 10], [30, 0, 40, 10]], [0, 0]))
    hand = evaluator.result().per_class[0]
    assert hand.recall == 0.5 and hand.precision == 1.0
    assert hand.ap50 == pytest.approx(51 / 101)  # precision 1 up to recall 0.5, none beyond
    assert math.isnan(evaluator.result().per_class[1].ap50)  # no cube anywhere: left out of the mean
    assert evaluator.result().mean_ap50 == pytest.approx(hand.ap50)


def test_wrong_class_and_poor_overlap_are_false_positives():
    evaluator = DetectionEvaluator(NAMES)
    truth = _truth([[0, 0, 10, 10]], [0])
    evaluator.add(_detections([[0, 0, 10, 10], [5, 5, 15, 15]], [1, 0], [0.9, 0.8]), truth)
    result = evaluator.result()
    assert result.per_class[0].ap50 == 0.0 and result.per_class[0].precision == 0.0


def test_a_higher_scoring_false_positive_lowers_ap():
    truth = _truth([[0, 0, 10, 10]], [0])
    clean, noisy = DetectionEvaluator(NAMES), DetectionEvaluator(NAMES)
    clean.add(_detections([[0, 0, 10, 10]], [0], [0.5]), truth)
    noisy.add(_detections([[0, 0, 10, 10], [30, 20, 50, 30]], [0, 0], [0.5, 0.9]), truth)
    assert noisy.result().per_class[0].ap50 < clean.result().per_class[0].ap50 == 1.0


def test_mask_iou_is_measured_on_matched_pairs_at_the_operating_point():
    truth = _truth([[0, 0, 20, 20]], [0])
    half = _mask([0, 0, 20, 10])
    evaluator = DetectionEvaluator(NAMES, score_threshold=0.3)
    evaluator.add(_detections([[0, 0, 20, 20]], [0], [0.9], masks=half[None]), truth)
    assert evaluator.result().per_class[0].mean_mask_iou == pytest.approx(0.5)
    below = DetectionEvaluator(NAMES, score_threshold=0.95)
    below.add(_detections([[0, 0, 20, 20]], [0], [0.9], masks=half[None]), truth)
    assert below.result().per_class[0].num_matched == 0 and below.result().per_class[0].recall == 0.0


def test_ignored_truth_is_neither_required_nor_penalised():
    truth = _truth([[0, 0, 10, 10], [30, 0, 40, 10]], [0, 0], ignore=[False, True])
    evaluator = DetectionEvaluator(NAMES)
    evaluator.add(_detections([[0, 0, 10, 10], [30, 0, 40, 10]], [0, 0], [0.9, 0.95]), truth)
    hand = evaluator.result().per_class[0]
    assert hand.num_truth == 1 and hand.ap50 == 1.0 and hand.precision == 1.0 and hand.recall == 1.0


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="labels"):
        InstanceSet([[0, 0, 1, 1]], [0, 1])
    evaluator = DetectionEvaluator(NAMES)
    with pytest.raises(ValueError, match="out of range"):
        evaluator.add(_detections([[0, 0, 5, 5]], [2], [0.5]), _truth([], []))
    with pytest.raises(ValueError, match="scores"):
        evaluator.add(_truth([], []), _truth([], []))
    with pytest.raises(ValueError, match="iou_threshold"):
        DetectionEvaluator(NAMES, iou_threshold=0.0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0.01, 1.0), st.booleans()), max_size=30), st.integers(0, 20))
def test_average_precision_is_a_fraction_and_reaches_one_only_when_all_found_first(rows, extra_truth):
    scores = np.array([r[0] for r in rows])
    tp = np.array([r[1] for r in rows], dtype=bool)
    num_truth = int(tp.sum()) + extra_truth
    if num_truth == 0:
        assert math.isnan(average_precision(scores, tp, num_truth))
        return
    ap = average_precision(scores, tp, num_truth)
    assert 0.0 <= ap <= 1.0
    if extra_truth > 0:
        assert ap < 1.0


def test_mask_iou_of_disjoint_and_empty_masks():
    assert mask_iou(_mask([0, 0, 5, 5]), _mask([10, 10, 15, 15])) == 0.0
    assert mask_iou(np.zeros((4, 4), bool), np.zeros((4, 4), bool)) == 0.0


def test_a_wrong_class_of_the_same_group_counts_in_the_group_metrics():
    """A cube taken for a hand: a false positive and a miss per class, a hit once both share a group."""
    boxes = [[0, 0, 10, 10]]
    detections, truth = _detections(boxes, [0], [0.9]), _truth(boxes, [1])
    by_class, by_group = DetectionEvaluator(NAMES), DetectionEvaluator(["thing"])
    by_class.add(detections, truth)
    group_of_class = np.zeros(len(NAMES), dtype=np.int64)
    by_group.add(regrouped(detections, group_of_class), regrouped(truth, group_of_class))
    assert by_class.result().per_class[0].precision == 0.0 and by_class.result().per_class[1].recall == 0.0
    thing = by_group.result().per_class[0]
    assert thing.precision == 1.0 and thing.recall == 1.0 and thing.ap50 == pytest.approx(1.0)
    assert thing.mean_mask_iou == pytest.approx(1.0)
