import pytest
import torch

from predrel_ros.tools.training.assignment import AssignmentConfig, assign
from predrel_ros.tools.training.network import location_grid

ANCHORS = location_grid(8, 8, 8)  # 64 locations of a 64 x 64 input at stride 8


def _predictions(boxes: torch.Tensor, num_classes: int = 2):
    n = ANCHORS.shape[0]
    scores = torch.full((1, n, num_classes), 0.1)
    pred = torch.cat((ANCHORS - 6, ANCHORS + 6), dim=1)[None]  # 12 x 12 boxes around every location
    return scores, pred


def test_positives_lie_inside_their_instance_and_targets_favour_good_boxes():
    gt = torch.tensor([[[8.0, 8.0, 40.0, 40.0]]])
    scores, pred = _predictions(gt)
    result = assign(scores, pred, ANCHORS, gt, torch.tensor([[1]]), torch.tensor([[True]]),
                    AssignmentConfig(top_k=5))
    positive = result.positive[0]
    assert int(positive.sum()) == 5
    inside = ((ANCHORS[:, 0] > 8) & (ANCHORS[:, 0] < 40) & (ANCHORS[:, 1] > 8) & (ANCHORS[:, 1] < 40))
    assert torch.all(inside[positive])
    assert torch.all(result.target_scores[0, ~positive] == 0)
    assert torch.all(result.target_scores[0, positive, 0] == 0)  # only the instance's class is a target
    assert float(result.target_scores[0, positive, 1].max()) > 0


def test_padding_is_never_assigned_and_tiny_instances_get_the_nearest_location():
    gt = torch.tensor([[[30.0, 30.0, 33.0, 33.0], [0.0, 0.0, 64.0, 64.0]]])  # tiny (between centres), padding
    scores, pred = _predictions(gt)
    result = assign(scores, pred, ANCHORS, gt, torch.tensor([[0, 1]]), torch.tensor([[True, False]]))
    positive = result.positive[0]
    assert int(positive.sum()) == 1
    assert torch.all(result.instance[0][positive] == 0)
    centre = ANCHORS[positive][0]
    assert float((centre - torch.tensor([31.5, 31.5])).norm()) <= 8.0


def test_a_location_claimed_twice_goes_to_the_instance_its_box_overlaps_most():
    gt = torch.tensor([[[0.0, 0.0, 64.0, 64.0], [20.0, 20.0, 36.0, 36.0]]])
    scores, pred = _predictions(gt)
    result = assign(scores, pred, ANCHORS, gt, torch.tensor([[0, 1]]), torch.tensor([[True, True]]),
                    AssignmentConfig(top_k=64))
    small_inside = ((ANCHORS > 20) & (ANCHORS < 36)).all(1)
    assert torch.all(result.instance[0][small_inside] == 1)
    assert torch.all(result.positive[0][small_inside])


def test_no_instances_means_no_positives():
    scores, pred = _predictions(None)
    result = assign(scores, pred, ANCHORS, torch.zeros(1, 0, 4), torch.zeros(1, 0, dtype=torch.long),
                    torch.zeros(1, 0, dtype=torch.bool))
    assert not result.positive.any() and float(result.target_scores.sum()) == 0


def test_config_is_validated():
    with pytest.raises(ValueError, match="top_k"):
        AssignmentConfig(top_k=0)
