import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from predrel_ros.core.boxes import box_iou, class_aware_nms, nms


def test_box_iou_by_hand():
    a = np.array([[0, 0, 10, 10]])
    b = np.array([[5, 0, 15, 10], [20, 20, 30, 30], [0, 0, 10, 10], [3, 3, 3, 3]])
    np.testing.assert_allclose(box_iou(a, b), [[50 / 150, 0, 1, 0]])


def test_nms_by_hand():
    boxes = np.array([[0, 0, 10, 10], [1, 0, 11, 10], [20, 0, 30, 10], [0, 0, 10, 10]])
    scores = np.array([0.9, 0.8, 0.7, 0.95])
    assert nms(boxes, scores, 0.5).tolist() == [3, 2]
    assert class_aware_nms(boxes, scores, np.array([0, 1, 0, 0]), 0.5).tolist() == [3, 1, 2]
    assert class_aware_nms(np.zeros((0, 4)), np.zeros(0), np.zeros(0), 0.5).tolist() == []


boxes_strategy = st.lists(st.tuples(st.floats(0, 100), st.floats(0, 100), st.floats(1, 50), st.floats(1, 50),
                                    st.floats(0, 1), st.integers(0, 2)), min_size=0, max_size=25)


@settings(max_examples=80, deadline=None)
@given(rows=boxes_strategy, threshold=st.floats(0.1, 0.9))
def test_class_aware_nms_properties(rows, threshold):
    data = np.array([[x, y, x + w, y + h, s, c] for x, y, w, h, s, c in rows]).reshape(-1, 6)
    boxes, scores, classes = data[:, :4], data[:, 4], data[:, 5].astype(int)
    kept = class_aware_nms(boxes, scores, classes, threshold)
    iou = box_iou(boxes, boxes)
    same = classes[:, None] == classes[None, :]
    for a in kept:  # kept boxes of one class do not overlap beyond the threshold
        for b in kept:
            if a != b and same[a, b]:
                assert iou[a, b] <= threshold + 1e-9
    for i in set(range(len(rows))) - set(kept.tolist()):  # each suppressed box has a better kept twin
        assert any(same[i, k] and iou[i, k] > threshold and scores[k] >= scores[i] for k in kept)
    assert list(scores[kept]) == sorted(scores[kept], reverse=True)


def test_identical_empty_boxes_still_match():
    iou = box_iou(np.array([[5, 5, 5, 5]]), np.array([[5, 5, 5, 5], [0, 0, 10, 10]]))
    assert iou.tolist() == [[1.0, 0.0]]
