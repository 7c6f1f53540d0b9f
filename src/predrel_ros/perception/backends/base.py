"""The inference-backend interface shared by TensorRT, ONNX Runtime and PyTorch.

A backend runs one image model: `load(model_path, input_shape)` prepares it (for TensorRT: builds or
loads the cached engine), `run(batch)` takes the preprocessed (N, 3, H, W) float32 tensor and returns
the model's outputs by name as numpy arrays, `describe()` says what actually runs (provider,
device, precision), `close()` frees it. Runtime libraries are imported inside the backends, so this
package imports without torch, onnxruntime or tensorrt installed.
"""
from __future__ import annotations

import importlib.util
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import numpy as np

from predrel_ros.core.errors import UserError

#: an input shape; None marks a dimension the model leaves dynamic
Shape = tuple["int | None", ...]


class BackendUnavailable(UserError):
    """The backend's runtime (or the device it needs) is missing on this machine."""


@dataclass(frozen=True)
class BackendDescription:
    backend: str  # tensorrt | onnxruntime | pytorch
    provider: str  # what executes: e.g. CPUExecutionProvider, TensorRT 10.3.0, torch 2.13.0
    device: str  # cpu, cuda:0 (NVIDIA Jetson AGX Orin), ...
    precision: str  # fp32 | fp16
    model_path: str
    input_name: str
    input_shape: Shape
    details: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"backend": self.backend, "provider": self.provider, "device": self.device,
                "precision": self.precision, "model_path": self.model_path,
                "input_name": self.input_name, "input_shape": list(self.input_shape),
                "details": dict(self.details)}


class InferenceBackend(ABC):
    """One loaded model on one runtime. Use as a context manager or call close()."""

    #: the name used in configuration (`backend: onnxruntime`)
    name: ClassVar[str]
    #: model file suffixes this backend can load
    model_suffixes: ClassVar[tuple[str, ...]]
    #: the Python module of the runtime (looked up without importing it)
    runtime_module: ClassVar[str]

    @classmethod
    def unavailable_reason(cls) -> str | None:
        """None when the runtime can be used here, else why not (for `auto` selection logs)."""
        if importlib.util.find_spec(cls.runtime_module) is None:
            return f"the {cls.runtime_module} module is not installed"
        return None

    def _require_runtime(self) -> None:
        reason = self.unavailable_reason()
        if reason:
            raise BackendUnavailable(reason)

    def _model_file(self, model_path: str | Path) -> Path:
        """`model_path` checked: the file exists and has a suffix this backend loads."""
        path = Path(model_path)
        if not path.is_file():
            raise UserError(f"{self.name}: model {path} does not exist")
        if path.suffix not in self.model_suffixes:
            raise UserError(f"{path}: the {self.name} backend loads {'/'.join(self.model_suffixes)} files")
        return path

    @abstractmethod
    def load(self, model_path: str | Path, input_shape: tuple[int, ...] | None = None) -> None:
        """Prepare the model. `input_shape` (N, C, H, W) fixes dynamic dimensions where the runtime
        needs them ahead of time (TensorRT); None keeps the model's own shape."""

    @property
    @abstractmethod
    def input_name(self) -> str: ...

    @property
    @abstractmethod
    def input_shape(self) -> Shape:
        """The model's input shape as declared, None for dynamic dimensions."""

    @property
    @abstractmethod
    def output_names(self) -> tuple[str, ...]: ...

    @abstractmethod
    def run(self, batch: np.ndarray) -> dict[str, np.ndarray]:
        """Outputs of the model for `batch`, by output name."""

    @abstractmethod
    def describe(self) -> BackendDescription: ...

    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> "InferenceBackend":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _check_batch(self, batch: np.ndarray, dtype=np.float32) -> np.ndarray:
        """`batch` as a contiguous array of `dtype`, after checking it fits the declared shape."""
        batch = np.ascontiguousarray(batch, dtype=dtype)
        declared = self.input_shape
        if batch.ndim != len(declared) or any(
                want is not None and want != got for want, got in zip(declared, batch.shape)):
            raise ValueError(f"{self.name}: input {self.input_name!r} expects shape "
                             f"{shape_text(declared)}, got {batch.shape}")
        return batch


def check_device(owner: str, device: str) -> str:
    """`device` if it is auto, cpu or cuda[:N], else a ValueError naming `owner`."""
    if device not in ("auto", "cpu") and not (device == "cuda" or (
            device.startswith("cuda:") and device[5:].isdigit())):
        raise ValueError(f"{owner} device must be auto, cpu or cuda[:N], got {device!r}")
    return device


def shape_text(shape: Shape) -> str:
    return "(" + ", ".join("?" if dim is None else str(dim) for dim in shape) + ")"
