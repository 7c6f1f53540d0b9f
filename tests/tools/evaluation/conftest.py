"""Fixtures of the evaluation tests: the tiny controlled dataset (tests/conftest.py) and a constant
YOLO-seg ONNX model whose detections sit on the ground-truth boxes of the test episode's first frame."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

NUM_COEFFICIENTS = 32


def constant_yoloseg_model(folder: Path, boxes, class_ids, scores, labels, height: int, width: int) -> Path:
    """A model folder (model.onnx, labels.txt, roles.yaml) that detects the same boxes (frame pixels, frames of
    width x height whose network input is the frame itself) in every image; each box's mask is its
    box on the prototype grid."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    count, classes = len(boxes), len(labels)
    output0 = np.zeros((1, 4 + classes + NUM_COEFFICIENTS, count), np.float32)
    protos = np.full((1, NUM_COEFFICIENTS, height // 4, width // 4), -20.0, np.float32)
    for i, ((x1, y1, x2, y2), cls, score) in enumerate(zip(boxes, class_ids, scores)):
        output0[0, :4, i] = ((x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1)
        output0[0, 4 + cls, i] = score
        output0[0, 4 + classes + i, i] = 1.0
        protos[0, i, int(y1) // 4:max(int(y1) // 4 + 1, int(np.ceil(y2 / 4))),
               int(x1) // 4:max(int(x1) // 4 + 1, int(np.ceil(x2 / 4)))] = 20.0
    nodes = [helper.make_node("ReduceMean", ["images"], ["mean"], keepdims=0),
             helper.make_node("Mul", ["mean", "zero"], ["nothing"])]
    initializers = [numpy_helper.from_array(np.array(0.0, np.float32), "zero")]
    outputs = []
    for name, value in (("output0", output0), ("output1", protos)):
        initializers.append(numpy_helper.from_array(value, f"{name}_value"))
        nodes.append(helper.make_node("Add", [f"{name}_value", "nothing"], [name]))
        outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(value.shape)))
    graph = helper.make_graph(nodes, "constant", [helper.make_tensor_value_info(
        "images", TensorProto.FLOAT, ["batch", 3, "height", "width"])], outputs, initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    folder.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(folder / "model.onnx"))
    (folder / "labels.txt").write_text("\n".join(labels) + "\n")
    (folder / "roles.yaml").write_text("table: surface\nbox: container\nbowl: container\n")
    return folder


@pytest.fixture(scope="session")
def predicate_file(tmp_path_factory) -> str:
    """A predicate YAML of the default thresholds (no selection on val: the tiny set has no val split)."""
    from predrel_ros.core.config_io import write_data
    from predrel_ros.predicates.config import PredicateConfig

    return str(write_data(tmp_path_factory.mktemp("config") / "predicates.yaml",
                          {"predicates": PredicateConfig().to_dict()}))


@pytest.fixture(scope="session")
def constant_model(controlled_dataset, tmp_path_factory) -> Path:
    """A model folder detecting the test episode's first-frame entities (class = their label)."""
    from predrel_ros.sources.dataset import open_dataset

    dataset = open_dataset(controlled_dataset)
    episode = dataset.episodes("test")[0]
    frame = episode.frame(0, images=False)
    labels = sorted({e.label for e in frame.entities} | {"hand", "cube", "box", "bowl", "table", "bar", "cylinder"})
    visible = [e for e in frame.entities if (e.box[2] - e.box[0]) >= 2 and (e.box[3] - e.box[1]) >= 2]
    return constant_yoloseg_model(tmp_path_factory.mktemp("model"), [e.box for e in visible],
                                  [labels.index(e.label) for e in visible], [0.9] * len(visible), labels,
                                  episode.meta.height, episode.meta.width)
