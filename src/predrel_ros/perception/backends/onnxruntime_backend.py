"""ONNX Runtime backend: CPU by default, the CUDA execution provider when present and asked for."""
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

CUDA_PROVIDER = "CUDAExecutionProvider"
CPU_PROVIDER = "CPUExecutionProvider"
_NUMPY_TYPES = {"tensor(float)": np.float32, "tensor(float16)": np.float16}


class OnnxRuntimeBackend(InferenceBackend):
    name = "onnxruntime"
    model_suffixes = (".onnx",)
    runtime_module = "onnxruntime"

    def __init__(self, device: str = "auto", num_threads: int = 1) -> None:
        """device: auto (CUDA provider when available, else CPU) | cpu | cuda[:N].
        num_threads: intra-op threads (perception/cpu_threads.py chooses them for a node)."""
        check_device("onnxruntime", device)
        self.device = device
        self.num_threads = num_threads
        self._session = None
        self._model_path = ""

    def load(self, model_path: str | Path, input_shape: tuple[int, ...] | None = None) -> None:
        self._require_runtime()
        model_path = self._model_file(model_path)
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.log_severity_level = 3
        options.intra_op_num_threads = self.num_threads
        options.inter_op_num_threads = 1
        # idle pool threads sleep instead of spinning: the cores are shared with the rest of the graph
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.add_session_config_entry("session.inter_op.allow_spinning", "0")
        providers = self._providers(ort)
        try:
            self._session = ort.InferenceSession(str(model_path), sess_options=options,
                                                 providers=providers)
        except Exception as error:  # onnxruntime raises its own exception types per failure
            raise UserError(f"ONNX Runtime cannot load {model_path}: {error}") from error
        self._model_path = str(model_path)
        inputs = self._session.get_inputs()
        if len(inputs) != 1:
            raise UserError(f"{model_path}: expected a model with one image input, it has "
                            f"{[i.name for i in inputs]}")
        log.info("onnxruntime: loaded %s with %s", model_path, self._session.get_providers()[0])

    def _providers(self, ort) -> list:
        available = ort.get_available_providers()
        wants_cuda = self.device.startswith("cuda") or (self.device == "auto"
                                                       and CUDA_PROVIDER in available)
        if not wants_cuda:
            return [CPU_PROVIDER]
        if CUDA_PROVIDER not in available:
            raise BackendUnavailable(f"onnxruntime: device {self.device!r} asked for, but this "
                                     f"onnxruntime has no {CUDA_PROVIDER} (it has {available}); "
                                     f"install onnxruntime-gpu or use device cpu")
        index = int(self.device.split(":", 1)[1]) if ":" in self.device else 0
        return [(CUDA_PROVIDER, {"device_id": index}), CPU_PROVIDER]

    @property
    def _loaded(self):
        if self._session is None:
            raise RuntimeError("onnxruntime backend: call load() first")
        return self._session

    @property
    def input_name(self) -> str:
        return self._loaded.get_inputs()[0].name

    @property
    def input_shape(self) -> Shape:
        return tuple(dim if isinstance(dim, int) else None for dim in self._loaded.get_inputs()[0].shape)

    @property
    def output_names(self) -> tuple[str, ...]:
        return tuple(output.name for output in self._loaded.get_outputs())

    def metadata(self) -> dict[str, str]:
        """The model's custom metadata (Ultralytics stores class names under `names`)."""
        return dict(self._loaded.get_modelmeta().custom_metadata_map)

    def run(self, batch: np.ndarray) -> dict[str, np.ndarray]:
        session = self._loaded
        dtype = _NUMPY_TYPES.get(session.get_inputs()[0].type, np.float32)
        batch = self._check_batch(batch, dtype)
        values = session.run(None, {self.input_name: batch})
        return dict(zip(self.output_names, values))

    def describe(self) -> BackendDescription:
        session = self._loaded
        provider = session.get_providers()[0]
        device = "cpu" if provider == CPU_PROVIDER else self.device.replace("auto", "cuda:0")
        precision = "fp16" if session.get_inputs()[0].type == "tensor(float16)" else "fp32"
        import onnxruntime as ort

        return BackendDescription(self.name, provider, device, precision, self._model_path,
                                  self.input_name, self.input_shape,
                                  {"onnxruntime": ort.__version__, "threads": self.num_threads})

    def close(self) -> None:
        self._session = None
