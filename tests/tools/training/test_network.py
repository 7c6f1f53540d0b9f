import pytest
import torch

from predrel_ros.tools.training.network import (
    HEAD_STRIDES,
    NetworkConfig,
    SegmentationNet,
    YoloSegExport,
    count_parameters,
    location_grid,
)

TINY = dict(stage_widths=(8, 8, 16, 16, 16), stage_depths=(0, 1, 1, 1, 1), neck_width=16, head_width=16)


def test_outputs_cover_every_location_of_every_level():
    net = SegmentationNet(NetworkConfig(num_classes=3, **TINY)).eval()
    with torch.no_grad():
        out = net(torch.rand(2, 3, 64, 96))
    n = sum((64 // s) * (96 // s) for s in HEAD_STRIDES)
    assert out.class_logits.shape == (2, n, 3)
    assert out.box_xyxy.shape == (2, n, 4)
    assert out.coefficients.shape == (2, n, 32)
    assert out.prototypes.shape == (2, 32, 16, 24)
    assert out.anchors.shape == (n, 2) and out.strides.shape == (n,)
    # each box surrounds its location centre (side distances are positive)
    assert torch.all(out.box_xyxy[..., :2] < out.anchors) and torch.all(out.box_xyxy[..., 2:] > out.anchors)


def test_export_layout_is_yolo_seg():
    net = SegmentationNet(NetworkConfig(num_classes=2, **TINY)).eval()
    with torch.no_grad():
        output0, output1 = YoloSegExport(net)(torch.rand(1, 3, 64, 64))
        raw = net(torch.rand(1, 3, 64, 64))
    n = raw.anchors.shape[0]
    assert output0.shape == (1, 4 + 2 + 32, n)
    assert output1.shape == (1, 32, 16, 16)
    scores = output0[0, 4:6]
    assert torch.all((scores >= 0) & (scores <= 1))
    assert torch.all(output0[0, 2:4] > 0)  # widths and heights


def test_location_grid_is_row_major_cell_centres():
    grid = location_grid(2, 3, 8)
    assert grid.tolist() == [[4, 4], [12, 4], [20, 4], [4, 12], [12, 12], [20, 12]]


def test_input_sides_must_be_multiples_of_the_largest_stride():
    net = SegmentationNet(NetworkConfig(num_classes=1, **TINY))
    with pytest.raises(ValueError, match="multiples of 32"):
        net(torch.rand(1, 3, 60, 64))


@pytest.mark.parametrize("field, value", [("num_classes", 0), ("neck_width", 0), ("stage_widths", (8, 8)),
                                          ("stage_depths", (0, -1, 1, 1, 1))])
def test_config_refuses_invalid_values(field, value):
    kwargs = dict(num_classes=2, **TINY)
    kwargs[field] = value
    with pytest.raises(ValueError):
        NetworkConfig(**kwargs)


def test_default_network_is_small():
    assert 3e5 < count_parameters(SegmentationNet(NetworkConfig(num_classes=4))) < 3e6
