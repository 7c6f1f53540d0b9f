"""GPU memory for the TensorRT backend: device buffers, host<->device copies and a CUDA stream.

Two implementations, chosen by what is installed: cuda-python (`cuda.bindings.runtime`, or the older
`cuda.cudart`) and PyTorch CUDA tensors (whose data pointers TensorRT accepts). Jetson images and
NVIDIA's TensorRT containers usually carry one of them. Neither can run on these development machines
(no GPU): the TensorRT backend's logic is tested against a fake memory layer.
"""
from __future__ import annotations

import importlib
import importlib.util
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

import numpy as np

from predrel_ros.perception.backends.base import BackendUnavailable


@dataclass
class DeviceBuffer:
    ptr: int  # device address handed to TensorRT
    nbytes: int
    handle: Any = None  # what keeps the memory alive (a torch tensor; None for raw allocations)


class DeviceMemory(ABC):
    name: str

    @abstractmethod
    def gpu_name(self) -> str: ...

    @abstractmethod
    def allocate(self, nbytes: int) -> DeviceBuffer: ...

    @abstractmethod
    def to_device(self, buffer: DeviceBuffer, host: np.ndarray) -> None:
        """Queue a copy of contiguous `host` into `buffer` on the stream."""

    @abstractmethod
    def to_host(self, buffer: DeviceBuffer, host: np.ndarray) -> None:
        """Queue a copy of the first host.nbytes of `buffer` into contiguous `host`."""

    @property
    @abstractmethod
    def stream(self) -> int:
        """The CUDA stream handle for TensorRT's execute_async_v3."""

    @abstractmethod
    def synchronize(self) -> None: ...

    @abstractmethod
    def free(self, buffer: DeviceBuffer) -> None: ...

    def close(self) -> None:  # noqa: B027  (optional: a backend without a stream has nothing to release)
        """Release the stream; buffers are freed by their owner first."""


class CudaPythonMemory(DeviceMemory):
    name = "cuda-python"

    def __init__(self, device_index: int = 0) -> None:
        self._rt = _import_cudart()
        self.device_index = device_index
        self._check(self._rt.cudaSetDevice(device_index), "cudaSetDevice")
        self._stream = self._check(self._rt.cudaStreamCreate(), "cudaStreamCreate")

    def _check(self, result, what: str):
        """cuda-python returns (error, *values): raise on error, return the value(s)."""
        error, *values = result if isinstance(result, tuple) else (result,)
        if int(error) != 0:
            raise RuntimeError(f"CUDA {what} failed: {error}")
        return values[0] if len(values) == 1 else tuple(values) if values else None

    def gpu_name(self) -> str:
        properties = self._check(self._rt.cudaGetDeviceProperties(self.device_index),
                                 "cudaGetDeviceProperties")
        name = properties.name
        return (name.decode() if isinstance(name, bytes) else str(name)).rstrip("\x00").strip()

    def allocate(self, nbytes: int) -> DeviceBuffer:
        return DeviceBuffer(int(self._check(self._rt.cudaMalloc(max(nbytes, 1)), "cudaMalloc")), nbytes)

    def to_device(self, buffer: DeviceBuffer, host: np.ndarray) -> None:
        self._check(self._rt.cudaMemcpyAsync(buffer.ptr, host.ctypes.data, host.nbytes,
                                             self._rt.cudaMemcpyKind.cudaMemcpyHostToDevice,
                                             self._stream), "cudaMemcpyAsync (to device)")

    def to_host(self, buffer: DeviceBuffer, host: np.ndarray) -> None:
        self._check(self._rt.cudaMemcpyAsync(host.ctypes.data, buffer.ptr, host.nbytes,
                                             self._rt.cudaMemcpyKind.cudaMemcpyDeviceToHost,
                                             self._stream), "cudaMemcpyAsync (to host)")

    @property
    def stream(self) -> int:
        return int(self._stream)

    def synchronize(self) -> None:
        self._check(self._rt.cudaStreamSynchronize(self._stream), "cudaStreamSynchronize")

    def free(self, buffer: DeviceBuffer) -> None:
        self._check(self._rt.cudaFree(buffer.ptr), "cudaFree")

    def close(self) -> None:
        if self._stream is not None:
            self._check(self._rt.cudaStreamDestroy(self._stream), "cudaStreamDestroy")
            self._stream = None


class TorchCudaMemory(DeviceMemory):
    name = "torch-cuda"

    def __init__(self, device_index: int = 0) -> None:
        import torch

        if not torch.cuda.is_available():
            raise BackendUnavailable(f"torch {torch.__version__} sees no CUDA device")
        self._torch = torch
        self._device = torch.device(f"cuda:{device_index}")
        self._stream = torch.cuda.Stream(device=self._device)

    def gpu_name(self) -> str:
        return self._torch.cuda.get_device_name(self._device)

    def allocate(self, nbytes: int) -> DeviceBuffer:
        tensor = self._torch.empty(max(nbytes, 1), dtype=self._torch.uint8, device=self._device)
        return DeviceBuffer(int(tensor.data_ptr()), nbytes, tensor)

    def _bytes(self, host: np.ndarray):
        return self._torch.from_numpy(host.reshape(-1).view(np.uint8))

    def to_device(self, buffer: DeviceBuffer, host: np.ndarray) -> None:
        with self._torch.cuda.stream(self._stream):
            buffer.handle[:host.nbytes].copy_(self._bytes(host))

    def to_host(self, buffer: DeviceBuffer, host: np.ndarray) -> None:
        with self._torch.cuda.stream(self._stream):
            self._bytes(host).copy_(buffer.handle[:host.nbytes])

    @property
    def stream(self) -> int:
        return int(self._stream.cuda_stream)

    def synchronize(self) -> None:
        self._stream.synchronize()

    def free(self, buffer: DeviceBuffer) -> None:
        buffer.handle = None


MEMORY_KINDS = {"cuda-python": CudaPythonMemory, "torch": TorchCudaMemory}


def _import_cudart():
    for module in ("cuda.bindings.runtime", "cuda.cudart"):
        try:
            return importlib.import_module(module)
        except ImportError:
            continue
    raise BackendUnavailable("cuda-python is not installed (pip install cuda-python)")


def unavailable_reason() -> str | None:
    """None when some GPU memory layer can be used, else why not (without touching the GPU)."""
    if _has_module("cuda.bindings.runtime") or _has_module("cuda.cudart"):
        return None
    if _has_module("torch"):
        import torch

        if torch.cuda.is_available():
            return None
        return f"no CUDA device: cuda-python is not installed and torch {torch.__version__} sees no GPU"
    return "no CUDA memory layer: install cuda-python (or torch with CUDA)"


def _has_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # a missing parent package
        return False


def open_device_memory(kind: str = "auto", device_index: int = 0) -> DeviceMemory:
    """kind: auto (cuda-python, else torch) | cuda-python | torch."""
    if kind != "auto":
        if kind not in MEMORY_KINDS:
            raise ValueError(f"cuda memory layer must be auto or one of {sorted(MEMORY_KINDS)}, got {kind!r}")
        return MEMORY_KINDS[kind](device_index)
    reasons = []
    for candidate in MEMORY_KINDS.values():
        try:
            return candidate(device_index)
        except (BackendUnavailable, ImportError) as error:
            reasons.append(f"{candidate.name}: {error}")
    raise BackendUnavailable("no CUDA memory layer works here: " + "; ".join(reasons))
