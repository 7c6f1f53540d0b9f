"""PyTorch backend (CPU or CUDA) for `torch.export` programs (.pt2) and TorchScript files.

.pt2: `torch.export.save(torch.export.export(model.eval(), (example,), dynamic_shapes=...), path)`;
the program must be exported in eval mode (an exported module cannot switch modes afterwards).
.torchscript / .pt / .ts: TorchScript, e.g. `yolo export format=torchscript` (TorchScript is
deprecated in PyTorch but still loads). Outputs are named by position, output0, output1, ..., the
names of the Ultralytics ONNX export, so the YOLO-seg decoder reads both alike.
"""
from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from predrel_ros.core.errors import UserError
from predrel_ros.perception.backends.base import (
    BackendDescription,
    BackendUnavailable,
    InferenceBackend,
    Shape,
    check_device,
)

log = logging.getLogger(__name__)

EXPORTED_PROGRAM_SUFFIX = ".pt2"
TORCHSCRIPT_SUFFIXES = (".torchscript", ".pt", ".ts")


class TorchBackend(InferenceBackend):
    name = "pytorch"
    model_suffixes = (EXPORTED_PROGRAM_SUFFIX,) + TORCHSCRIPT_SUFFIXES
    runtime_module = "torch"

    def __init__(self, device: str = "auto", enable_fp16: bool = False, num_threads: int = 1) -> None:
        """device: auto (CUDA when available) | cpu | cuda[:N]. enable_fp16 runs in half precision
        on CUDA (ignored on the CPU, with a warning). num_threads: CPU threads (perception/cpu_threads.py
        chooses them for a node)."""
        check_device("pytorch", device)
        self.device_name = device
        self.enable_fp16 = enable_fp16
        self.num_threads = num_threads
        self._module = None
        self._device = None
        self._half = False
        self._input_shape: Shape = ()
        self._output_names: tuple[str, ...] = ()
        self._model_path = ""

    def load(self, model_path: str | Path, input_shape: tuple[int, ...] | None = None) -> None:
        self._require_runtime()
        model_path = self._model_file(model_path)
        import torch

        self._device = self._resolve_device(torch)
        torch.set_num_threads(self.num_threads)
        try:
            if model_path.suffix == EXPORTED_PROGRAM_SUFFIX:
                program = torch.export.load(str(model_path))
                self._input_shape = _exported_input_shape(program, torch)
                module = program.module()
            else:
                module = torch.jit.load(str(model_path), map_location=self._device)
                module.eval()
                self._input_shape = (None, 3, None, None)
        except Exception as error:  # torch raises many unrelated types for corrupt files
            raise UserError(f"PyTorch cannot load {model_path}: {error}") from error
        self._half = self.enable_fp16 and self._device.type == "cuda"
        if self.enable_fp16 and not self._half:
            log.warning("pytorch: fp16 asked for but the device is %s; running fp32", self._device)
        module = module.to(self._device)
        self._module = module.half() if self._half else module
        self._model_path = str(model_path)
        if input_shape is not None:
            self._check_batch(np.zeros(input_shape, np.float32))
        log.info("pytorch: loaded %s on %s (%s)", model_path, self._device,
                 "fp16" if self._half else "fp32")

    def _resolve_device(self, torch):
        if self.device_name == "auto":
            return torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
        device = torch.device(self.device_name)
        if device.type == "cuda" and not torch.cuda.is_available():
            raise BackendUnavailable(f"pytorch: device {self.device_name!r} asked for, but this torch "
                                     f"has no CUDA device (torch {torch.__version__})")
        return device

    @property
    def _loaded(self):
        if self._module is None:
            raise RuntimeError("pytorch backend: call load() first")
        return self._module

    @property
    def input_name(self) -> str:
        return "images"

    @property
    def input_shape(self) -> Shape:
        self._loaded  # noqa: B018  (the property raises when no model is loaded)
        return self._input_shape

    @property
    def output_names(self) -> tuple[str, ...]:
        return self._output_names

    def run(self, batch: np.ndarray) -> dict[str, np.ndarray]:
        import torch

        module = self._loaded
        batch = self._check_batch(batch)
        tensor = torch.from_numpy(batch).to(self._device)
        if self._half:
            tensor = tensor.half()
        with torch.inference_mode():
            result = module(tensor)
        named = _named_outputs(result)
        self._output_names = tuple(named)
        return {name: value.float().cpu().numpy() for name, value in named.items()}

    def describe(self) -> BackendDescription:
        import torch

        self._loaded  # noqa: B018  (the property raises when no model is loaded)
        device = str(self._device)
        if self._device.type == "cuda":
            device += f" ({torch.cuda.get_device_name(self._device)})"
        return BackendDescription(self.name, f"torch {torch.__version__}", device,
                                  "fp16" if self._half else "fp32", self._model_path,
                                  self.input_name, self._input_shape,
                                  {"threads": torch.get_num_threads()})

    def close(self) -> None:
        self._module = None


def _exported_input_shape(program, torch) -> Shape:
    user_inputs = list(program.graph_signature.user_inputs)
    if len(user_inputs) != 1:
        raise UserError(f"expected a program with one image input, it has {user_inputs}")
    for node in program.graph.nodes:
        if node.op == "placeholder" and node.name == user_inputs[0]:
            return tuple(dim if isinstance(dim, int) else None for dim in node.meta["val"].shape)
    raise UserError("the exported program does not describe its input")


def _named_outputs(result) -> dict:
    """output0, output1, ... for a tensor or a (nested) sequence of tensors; keys of a dict."""
    if isinstance(result, dict):
        return dict(result)
    flat = []
    stack = [result]
    while stack:
        item = stack.pop(0)
        if isinstance(item, (list, tuple)):
            stack = list(item) + stack
        else:
            flat.append(item)
    return {f"output{i}": value for i, value in enumerate(flat)}
