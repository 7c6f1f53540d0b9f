"""Export a trained network in the Ultralytics YOLO-seg layout: ONNX and a torch.export program.

Both files take `images` (1, 3, H, W) float RGB in [0, 1], letterboxed (grey 114) to the fixed input
size, and return `output0` (1, 4 + nc + 32, N) and `output1` (1, 32, H/4, W/4). They carry the
Ultralytics metadata keys (`names`, `stride`, `imgsz`, `task`, ...): in the ONNX model's
metadata_props as Python literals, as Ultralytics writes them, and in the .pt2 program as the
`config.txt` extra file (JSON, as in Ultralytics TorchScript exports), so a YOLO-seg consumer reads
class names and input size from the model itself.
"""
from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Sequence

import numpy as np
import torch

from predrel_ros import __version__
from predrel_ros.tools.training.network import SegmentationNet, YoloSegExport

ONNX_OPSET = 17
INPUT_NAME = "images"
OUTPUT_NAMES = ("output0", "output1")
METADATA_FILE = "config.txt"


def model_metadata(net: SegmentationNet, class_names: Sequence[str], input_hw: tuple[int, int]) -> dict:
    """Ultralytics-style metadata of an exported model (values are Python objects; str() them for ONNX)."""
    if len(class_names) != net.config.num_classes:
        raise ValueError(f"{len(class_names)} class names for a network with {net.config.num_classes} classes")
    return {"description": "predrel_ros embedded default instance-segmentation model (YOLO-seg layout)",
            "author": "predrel_ros", "version": __version__, "license": "Apache-2.0",
            "stride": net.config.max_stride, "task": "segment", "batch": 1, "imgsz": list(input_hw),
            "names": dict(enumerate(class_names)), "channels": 3}


def export_onnx(net: SegmentationNet, class_names: Sequence[str], path: Path, input_hw: tuple[int, int]) -> Path:
    import onnx

    model = YoloSegExport(net).eval()
    example = torch.zeros(1, 3, *input_hw)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():
        # the TorchScript-based exporter is deprecated in favour of the torch.export one, which needs
        # the extra onnxscript package; this plain convolutional graph exports identically with either
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
        torch.onnx.export(model, (example,), str(path), dynamo=False, opset_version=ONNX_OPSET,
                          input_names=[INPUT_NAME], output_names=list(OUTPUT_NAMES), do_constant_folding=True)
    proto = onnx.load(str(path))
    for key, value in model_metadata(net, class_names, input_hw).items():
        entry = proto.metadata_props.add()
        entry.key, entry.value = key, str(value)
    onnx.checker.check_model(proto)
    onnx.save(proto, str(path))
    return path


def export_program(net: SegmentationNet, class_names: Sequence[str], path: Path, input_hw: tuple[int, int]) -> Path:
    """A `torch.export` program (.pt2), what the PyTorch backend loads (TorchScript is deprecated)."""
    model = YoloSegExport(net).eval()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    program = torch.export.export(model, (torch.zeros(1, 3, *input_hw),))
    extra = {METADATA_FILE: json.dumps(model_metadata(net, class_names, input_hw))}
    torch.export.save(program, str(path), extra_files=extra)
    return path


def onnx_max_difference(net: SegmentationNet, path: Path, input_hw: tuple[int, int], seed: int = 0) -> dict[str, float]:
    """Largest absolute difference between PyTorch and ONNX Runtime outputs on a random input."""
    import onnxruntime

    images = torch.from_numpy(np.random.default_rng(seed).random((1, 3, *input_hw), dtype=np.float32))
    with torch.no_grad():
        expected = [t.numpy() for t in YoloSegExport(net).eval()(images)]
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    got = session.run(list(OUTPUT_NAMES), {INPUT_NAME: images.numpy()})
    return {name: float(np.abs(a - b).max()) for name, a, b in zip(OUTPUT_NAMES, expected, got)}
