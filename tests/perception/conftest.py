"""Fixtures of the perception tests: ONNX models built from known tensors, and the fake TensorRT."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest


def yoloseg_onnx(path: Path, output0: np.ndarray, output1: np.ndarray | None,
                 input_shape=("batch", 3, "height", "width"), names: dict | None = None,
                 opset: int = 17) -> Path:
    """An ONNX model whose outputs are the given tensors for any input (the input enters as
    0 * mean(images), so the graph really consumes it). `input_shape` entries may be strings
    (dynamic dimensions)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    nodes = [helper.make_node("ReduceMean", ["images"], ["mean"], keepdims=0),
             helper.make_node("Mul", ["mean", "zero"], ["nothing"])]
    initializers = [numpy_helper.from_array(np.array(0.0, np.float32), "zero")]
    outputs = []
    for index, value in enumerate([output0, output1]):
        if value is None:
            continue
        name = f"output{index}"
        initializers.append(numpy_helper.from_array(np.asarray(value, np.float32), f"{name}_value"))
        nodes.append(helper.make_node("Add", [f"{name}_value", "nothing"], [name]))
        outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(value.shape)))
    graph = helper.make_graph(
        nodes, "constant_yoloseg",
        [helper.make_tensor_value_info("images", TensorProto.FLOAT, list(input_shape))],
        outputs, initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    if names is not None:
        helper.set_model_props(model, {"names": repr(names)})
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


@pytest.fixture
def make_yoloseg_onnx(tmp_path):
    def make(output0, output1, name="model.onnx", **kwargs):
        return yoloseg_onnx(tmp_path / name, output0, output1, **kwargs)
    return make


@pytest.fixture
def fake_tensorrt(monkeypatch):
    """The fake `tensorrt` module (tests/perception/fake_tensorrt.py) in sys.modules."""
    spec = importlib.util.spec_from_file_location("fake_tensorrt", Path(__file__).with_name("fake_tensorrt.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setitem(sys.modules, "tensorrt", module)
    return module
