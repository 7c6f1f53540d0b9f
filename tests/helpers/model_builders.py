"""ONNX models built from known tensors, and the fake TensorRT: builders and fixtures shared by the
perception, detect, tracking-evaluation and node tests (conftest.py files import the fixtures)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

NUM_COEFFICIENTS = 32


def yolo_output0(rows, num_classes: int) -> np.ndarray:
    """YOLO-seg detections (1, 4 + nc + 32, N) from rows (cx, cy, w, h, {class: score}, {coefficient: value})."""
    out = np.zeros((1, 4 + num_classes + NUM_COEFFICIENTS, len(rows)), np.float32)
    for i, (cx, cy, w, h, scores, coefficients) in enumerate(rows):
        out[0, :4, i] = (cx, cy, w, h)
        for cls, score in scores.items():
            out[0, 4 + cls, i] = score
        for k, value in coefficients.items():
            out[0, 4 + num_classes + k, i] = value
    return out


def yolo_protos(grid_h: int, grid_w: int, regions, level: float = 20.0) -> np.ndarray:
    """Prototypes (1, 32, grid_h, grid_w): prototype k is +level on regions[k] = (r0, r1, c0, c1), -level elsewhere."""
    out = np.zeros((1, NUM_COEFFICIENTS, grid_h, grid_w), np.float32)
    for k, (r0, r1, c0, c1) in regions.items():
        out[0, k] = -level
        out[0, k, r0:r1, c0:c1] = level
    return out


@pytest.fixture
def yolo():
    """Builders of YOLO-seg output tensors with known content."""
    return SimpleNamespace(output0=yolo_output0, protos=yolo_protos, num_coefficients=NUM_COEFFICIENTS)


# A 3-class scene for 320x240 frames (-> 320x256 input, 8 px = 2 prototype rows of padding on top):
SCENE_ROWS = [(100, 108, 40, 60, {0: 0.9}, {0: 1.0}),  # cube, frame box (80, 70, 120, 130), mask cols 88..112
              (250, 158, 60, 40, {1: 0.8}, {1: 1.0}),  # bowl, frame box (220, 130, 280, 170), mask = box
              (40, 208, 30, 30, {2: 0.7}, {})]  # hand, frame box (25, 185, 55, 215), empty mask
SCENE_REGIONS = {0: (2 + 15, 2 + 35, 22, 28), 1: (0, 64, 0, 80)}


@pytest.fixture
def scene_model_dir(tmp_path):
    """A model folder: model.onnx giving SCENE_ROWS for any input, labels cube/bowl/hand, bowl a container."""
    yoloseg_onnx(tmp_path / "model.onnx", yolo_output0(SCENE_ROWS, 3), yolo_protos(64, 80, SCENE_REGIONS))
    (tmp_path / "labels.txt").write_text("cube\nbowl\nhand\n")
    (tmp_path / "roles.yaml").write_text("bowl: container\n")
    return tmp_path


def constant_onnx(path: Path, outputs: dict, input_name: str = "images",
                  input_shape=("batch", 3, "height", "width"), metadata: dict | None = None,
                  opset: int = 17) -> Path:
    """An ONNX model whose outputs are the given tensors for any input (the input enters as
    0 * mean(input), so the graph really consumes it). `input_shape` entries may be strings
    (dynamic dimensions)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    nodes = [helper.make_node("ReduceMean", [input_name], ["mean"], keepdims=0),
             helper.make_node("Mul", ["mean", "zero"], ["nothing"])]
    initializers = [numpy_helper.from_array(np.array(0.0, np.float32), "zero")]
    values = []
    for name, value in outputs.items():
        value = np.asarray(value, np.float32)
        initializers.append(numpy_helper.from_array(value, f"{name}_value"))
        nodes.append(helper.make_node("Add", [f"{name}_value", "nothing"], [name]))
        values.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(value.shape)))
    graph = helper.make_graph(
        nodes, "constant_outputs",
        [helper.make_tensor_value_info(input_name, TensorProto.FLOAT, list(input_shape))], values, initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    if metadata:
        helper.set_model_props(model, metadata)
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def yoloseg_onnx(path: Path, output0: np.ndarray, output1: np.ndarray | None,
                 input_shape=("batch", 3, "height", "width"), names: dict | None = None) -> Path:
    """A constant YOLO-seg model (output0, and output1 unless None); `names` go to its metadata."""
    outputs = {"output0": output0} if output1 is None else {"output0": output0, "output1": output1}
    return constant_onnx(path, outputs, input_shape=input_shape,
                         metadata=None if names is None else {"names": repr(names)})


def scene_model(directory: Path) -> Path:
    """A model folder: model.onnx giving three fixed detections for any frame (SCENE_ROWS,
    SCENE_REGIONS); labels cube, bowl, hand; the bowl a container."""
    directory.mkdir(parents=True, exist_ok=True)
    yoloseg_onnx(directory / "model.onnx", yolo_output0(SCENE_ROWS, 3), yolo_protos(64, 80, SCENE_REGIONS))
    (directory / "labels.txt").write_text("cube\nbowl\nhand\n")
    (directory / "roles.yaml").write_text("bowl: container\n")
    return directory


@pytest.fixture
def make_constant_onnx(tmp_path):
    def make(name, outputs, **kwargs):
        return constant_onnx(tmp_path / name, outputs, **kwargs)
    return make


@pytest.fixture
def make_yoloseg_onnx(tmp_path):
    def make(output0, output1, name="model.onnx", **kwargs):
        return yoloseg_onnx(tmp_path / name, output0, output1, **kwargs)
    return make


@pytest.fixture
def fake_tensorrt(monkeypatch):
    """A fresh fake `tensorrt` module (tests/helpers/fake_tensorrt.py) in sys.modules."""
    spec = importlib.util.spec_from_file_location("fake_tensorrt", Path(__file__).with_name("fake_tensorrt.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setitem(sys.modules, "tensorrt", module)
    return module
