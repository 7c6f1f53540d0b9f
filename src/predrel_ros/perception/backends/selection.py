"""Choosing and opening an inference backend from configuration.

`backend: auto` picks TensorRT > ONNX Runtime > PyTorch: the first whose runtime is usable here and
for which the model directory holds a file it loads, and logs why each better one was passed over.

A model is a file or a directory. A file is loaded as named, or not at all: a backend that does not
load its kind is an error, never a switch to the file beside it (a corrupt model.onnx with backend
pytorch once loaded the model.pt2 next to it). In a directory, files named `model.*` come first,
then any file with a suffix a backend loads. TensorRT prefers the ONNX file (the engine cache can
rebuild from it) over .engine.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from predrel_ros.core.errors import UserError
from predrel_ros.perception.backends.base import BackendUnavailable, InferenceBackend, check_device
from predrel_ros.perception.backends.onnxruntime_backend import OnnxRuntimeBackend
from predrel_ros.perception.backends.tensorrt_backend import TensorRTBackend, TensorRTConfig
from predrel_ros.perception.backends.torch_backend import TorchBackend
from predrel_ros.perception.cpu_threads import resolve_threads

log = logging.getLogger(__name__)

BACKENDS: dict[str, type[InferenceBackend]] = {
    "tensorrt": TensorRTBackend, "onnxruntime": OnnxRuntimeBackend, "pytorch": TorchBackend}
AUTO_ORDER = ("tensorrt", "onnxruntime", "pytorch")


@dataclass(frozen=True)
class BackendConfig:
    name: str = "auto"  # auto | tensorrt | onnxruntime | pytorch
    device: str = "auto"  # onnxruntime / pytorch: auto | cpu | cuda[:N]
    num_threads: int = 0  # CPU threads for onnxruntime / pytorch; 0 = auto (perception/cpu_threads.py)
    enable_fp16: bool = False  # pytorch on CUDA (TensorRT has its own tensorrt.enable_fp16)
    tensorrt: TensorRTConfig = field(default_factory=TensorRTConfig)

    def __post_init__(self) -> None:
        if self.name != "auto" and self.name not in BACKENDS:
            raise ValueError(f"backend.name must be auto or one of {sorted(BACKENDS)}, got {self.name!r}")
        check_device("backend", self.device)
        if self.num_threads < 0:
            raise ValueError(f"backend.num_threads must be >= 0 (0 = auto), got {self.num_threads}")

    @property
    def threads(self) -> int:
        """The CPU threads the backend runs with: num_threads, or for 0 the automatic choice."""
        return resolve_threads(self.num_threads)


def model_files(model: str | Path) -> dict[str, Path]:
    """backend name -> the model file it would load, for each backend that has one."""
    model = Path(model)
    if model.is_dir():
        candidates = sorted(model.iterdir(), key=lambda p: (p.stem != "model", p.name))
    elif model.is_file():
        candidates = [model]
    else:
        raise UserError(f"model {model} does not exist")
    found = {}
    for name, backend in BACKENDS.items():
        for suffix in backend.model_suffixes:
            match = next((p for p in candidates if p.is_file() and p.suffix == suffix), None)
            if match is not None:
                found[name] = match
                break
    return found


def create_backend(config: BackendConfig, model: str | Path) -> tuple[InferenceBackend, Path]:
    """An unloaded backend chosen per `config` and the model file it should load."""
    files = model_files(model)
    if config.name != "auto":
        backend = BACKENDS[config.name]
        reason = backend.unavailable_reason()
        if reason:
            raise BackendUnavailable(f"backend {config.name}: {reason}")
        if config.name not in files:
            what = f"is a {Path(model).suffix or 'suffix-less'} file" if Path(model).is_file() else "has none"
            raise UserError(f"backend {config.name} loads {'/'.join(backend.model_suffixes)} files; {model} "
                            f"{what}")
        return _instantiate(config.name, config), files[config.name]
    passed_over = []
    for name in AUTO_ORDER:
        reason = BACKENDS[name].unavailable_reason()
        if reason is None and name not in files:
            reason = f"no {'/'.join(BACKENDS[name].model_suffixes)} file at {model}"
        if reason is None:
            why = "; ".join(passed_over) or "first choice"
            log.info("backend auto: chose %s for %s (%s)", name, files[name], why)
            return _instantiate(name, config), files[name]
        passed_over.append(f"{name} skipped: {reason}")
    raise BackendUnavailable(f"no inference backend can run {model}: " + "; ".join(passed_over))


def _instantiate(name: str, config: BackendConfig) -> InferenceBackend:
    if name == "tensorrt":
        return TensorRTBackend(config.tensorrt)
    if name == "onnxruntime":
        return OnnxRuntimeBackend(config.device, config.threads)
    return TorchBackend(config.device, config.enable_fp16, config.threads)
