import json

import numpy as np
import onnx
import pytest
import torch

from predrel_ros.perception import letterbox
from predrel_ros.perception.labels import labels_from_onnx_metadata
from predrel_ros.perception.yolo_seg import YoloSegDecoder
from predrel_ros.tools.training.export import (
    METADATA_FILE,
    export_onnx,
    export_program,
    model_metadata,
    onnx_max_difference,
)
from predrel_ros.tools.training.network import NetworkConfig, SegmentationNet, YoloSegExport

TINY = dict(stage_widths=(8, 8, 16, 16, 16), stage_depths=(0, 1, 1, 1, 1), neck_width=16, head_width=16)
NAMES = ["left_hand", "cube", "bowl"]


@pytest.fixture(scope="module")
def net():
    torch.manual_seed(0)
    model = SegmentationNet(NetworkConfig(num_classes=3, **TINY))
    model.train()
    with torch.no_grad():  # give the batch-norm layers non-trivial statistics
        model(torch.rand(4, 3, 64, 96))
    return model.eval()


def test_onnx_export_matches_pytorch_and_carries_ultralytics_metadata(net, tmp_path):
    path = export_onnx(net, NAMES, tmp_path / "model.onnx", (64, 96))
    differences = onnx_max_difference(net, path, (64, 96))
    assert max(differences.values()) < 1e-4
    model = onnx.load(str(path))
    assert model.opset_import[0].version >= 17
    assert [i.name for i in model.graph.input] == ["images"]
    assert [o.name for o in model.graph.output] == ["output0", "output1"]
    metadata = {p.key: p.value for p in model.metadata_props}
    assert labels_from_onnx_metadata(metadata) == NAMES
    assert metadata["imgsz"] == "[64, 96]" and metadata["stride"] == "32" and metadata["task"] == "segment"


def test_the_project_decoder_reads_the_exported_layout(net, tmp_path):
    import onnxruntime

    path = export_onnx(net, NAMES, tmp_path / "model.onnx", (64, 96))
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    frame = np.random.default_rng(0).integers(0, 255, (60, 90, 3), dtype=np.uint8)
    geometry = letterbox.plan(60, 90, 64, 96)
    output0, output1 = session.run(None, {"images": letterbox.apply(frame, geometry, bgr=False)})
    detections = YoloSegDecoder(len(NAMES)).decode({"output0": output0, "output1": output1}, geometry)
    assert detections.masks is not None and detections.masks.shape[1:] == (60, 90)


def test_program_export_round_trips_with_metadata(net, tmp_path):
    path = export_program(net, NAMES, tmp_path / "model.pt2", (64, 96))
    extra = {METADATA_FILE: ""}
    program = torch.export.load(str(path), extra_files=extra)
    images = torch.rand(1, 3, 64, 96)
    with torch.no_grad():
        expected = YoloSegExport(net)(images)
        got = program.module()(images)
    assert all(torch.allclose(a, b, atol=1e-5) for a, b in zip(expected, got))
    assert json.loads(extra[METADATA_FILE])["names"] == {"0": "left_hand", "1": "cube", "2": "bowl"}


def test_metadata_needs_one_name_per_class(net):
    with pytest.raises(ValueError, match="2 class names"):
        model_metadata(net, NAMES[:2], (64, 96))
