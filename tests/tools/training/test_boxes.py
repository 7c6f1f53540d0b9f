import math

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from predrel_ros.tools.training.boxes import complete_iou, pairwise_iou


def test_pairwise_iou_known_values():
    a = torch.tensor([[0.0, 0.0, 10.0, 10.0]])
    b = torch.tensor([[0.0, 0.0, 10.0, 10.0], [5.0, 0.0, 15.0, 10.0], [20.0, 20.0, 30.0, 30.0]])
    assert torch.allclose(pairwise_iou(a, b), torch.tensor([[1.0, 1 / 3, 0.0]]), atol=1e-6)


boxes = st.tuples(st.floats(0, 100), st.floats(0, 100), st.floats(1, 50), st.floats(1, 50)).map(
    lambda t: [t[0], t[1], t[0] + t[2], t[1] + t[3]])


@settings(max_examples=60, deadline=None)
@given(boxes, boxes)
def test_iou_is_symmetric_bounded_and_ciou_never_exceeds_it(a, b):
    ta, tb = torch.tensor([a]), torch.tensor([b])
    iou = pairwise_iou(ta, tb)[0, 0]
    assert math.isclose(float(iou), float(pairwise_iou(tb, ta)[0, 0]), abs_tol=1e-6)
    assert 0.0 <= float(iou) <= 1.0 + 1e-6
    assert float(complete_iou(ta[0], tb[0])) <= float(iou) + 1e-6


def test_ciou_is_one_for_identical_boxes_and_penalises_distance_when_disjoint():
    box = torch.tensor([2.0, 3.0, 12.0, 9.0])
    assert math.isclose(float(complete_iou(box, box)), 1.0, abs_tol=1e-5)
    near = complete_iou(torch.tensor([20.0, 3.0, 30.0, 9.0]), box)
    far = complete_iou(torch.tensor([60.0, 3.0, 70.0, 9.0]), box)
    assert float(far) < float(near) < 0.0
