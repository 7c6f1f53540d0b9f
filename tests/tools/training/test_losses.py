import pytest
import torch

from predrel_ros.tools.training.assignment import assign
from predrel_ros.tools.training.losses import LossWeights, box_crop, segmentation_loss
from predrel_ros.tools.training.network import NetOutputs, location_grid


def test_box_crop_marks_pixel_centres_inside_the_box():
    crop = box_crop(torch.tensor([[1.0, 0.0, 3.0, 2.0]]), 3, 4)
    assert crop[0].tolist() == [[0, 1, 1, 0], [0, 1, 1, 0], [0, 0, 0, 0]]


def _outputs(box_error: float, mask_logit: float, class_logit: float) -> tuple[NetOutputs, torch.Tensor, torch.Tensor]:
    anchors = location_grid(4, 4, 8)  # 32 x 32 input
    n = anchors.shape[0]
    gt_box = torch.tensor([[[4.0, 4.0, 20.0, 20.0]]])
    boxes = gt_box[0].repeat(n, 1)[None] + box_error
    logits = torch.full((1, n, 1), class_logit)
    coefficients = torch.zeros(1, n, 32)
    coefficients[..., 0] = 1.0
    prototypes = torch.zeros(1, 32, 8, 8)
    target = torch.zeros(1, 1, 8, 8)
    target[0, 0, 1:5, 1:5] = 1.0
    prototypes[0, 0] = torch.where(target[0, 0] > 0, mask_logit, -mask_logit)
    out = NetOutputs(logits, boxes, coefficients, prototypes, anchors, torch.full((n,), 8.0))
    return out, gt_box, target


def _loss(box_error, mask_logit, class_logit):
    out, gt_box, target = _outputs(box_error, mask_logit, class_logit)
    assignment = assign(out.class_logits.sigmoid(), out.box_xyxy, out.anchors, gt_box,
                        torch.tensor([[0]]), torch.tensor([[True]]))
    return segmentation_loss(out, assignment, gt_box, target)


def test_better_boxes_and_masks_cost_less():
    good, bad = _loss(0.0, 6.0, -4.0), _loss(3.0, -1.0, -4.0)
    assert float(good.box) < 1e-3 < float(bad.box)
    assert float(good.mask) < float(bad.mask)
    assert float(good.total) < float(bad.total)


def test_classification_rewards_scoring_only_the_assigned_locations():
    out, gt_box, target = _outputs(0.0, 6.0, -6.0)
    assignment = assign(out.class_logits.sigmoid(), out.box_xyxy, out.anchors, gt_box,
                        torch.tensor([[0]]), torch.tensor([[True]]))
    quiet = segmentation_loss(out, assignment, gt_box, target).classification
    out.class_logits[assignment.positive] = 3.0
    confident = segmentation_loss(out, assignment, gt_box, target).classification
    out.class_logits[~assignment.positive] = 3.0
    noisy = segmentation_loss(out, assignment, gt_box, target).classification
    assert float(confident) < float(quiet) < float(noisy)


def test_gradients_reach_every_output():
    out, gt_box, target = _outputs(2.0, 0.5, 0.0)
    for tensor in (out.class_logits, out.box_xyxy, out.coefficients, out.prototypes):
        tensor.requires_grad_(True)
    assignment = assign(out.class_logits.detach().sigmoid(), out.box_xyxy.detach(), out.anchors, gt_box,
                        torch.tensor([[0]]), torch.tensor([[True]]))
    segmentation_loss(out, assignment, gt_box, target).total.backward()
    for tensor in (out.class_logits, out.box_xyxy, out.coefficients, out.prototypes):
        assert tensor.grad is not None and float(tensor.grad.abs().sum()) > 0


def test_weights_are_validated():
    with pytest.raises(ValueError, match="LossWeights.box"):
        LossWeights(box=-1.0)
