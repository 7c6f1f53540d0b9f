"""The cuda-python memory layer against a fake `cuda.bindings.runtime` (no GPU here)."""
import sys
import types

import numpy as np
import pytest

from predrel_ros.perception.backends import device_memory
from predrel_ros.perception.backends.base import BackendUnavailable


class FakeCudart(types.ModuleType):
    """cuda-python's runtime API shape: every call returns (error, *values); records the calls."""

    class cudaMemcpyKind:
        cudaMemcpyHostToDevice = 1
        cudaMemcpyDeviceToHost = 2

    def __init__(self, fail: str | None = None) -> None:
        super().__init__("cuda.bindings.runtime")
        self.calls, self.fail, self.memory = [], fail, {}

    def _result(self, name, *values):
        self.calls.append(name)
        return (7 if name == self.fail else 0, *values)

    def cudaSetDevice(self, index):
        return self._result("cudaSetDevice")

    def cudaStreamCreate(self):
        return self._result("cudaStreamCreate", 99)

    def cudaGetDeviceProperties(self, index):
        return self._result("cudaGetDeviceProperties", types.SimpleNamespace(name=b"NVIDIA Orin\x00\x00"))

    def cudaMalloc(self, nbytes):
        address = 0x5000 + 0x1000 * len(self.memory)
        self.memory[address] = bytearray(nbytes)
        return self._result("cudaMalloc", address)

    def cudaMemcpyAsync(self, destination, source, nbytes, kind, stream):
        import ctypes

        assert stream == 99
        if kind == self.cudaMemcpyKind.cudaMemcpyHostToDevice:
            self.memory[destination][:nbytes] = ctypes.string_at(source, nbytes)
        else:
            ctypes.memmove(destination, bytes(self.memory[source][:nbytes]), nbytes)
        return self._result("cudaMemcpyAsync")

    def cudaStreamSynchronize(self, stream):
        return self._result("cudaStreamSynchronize")

    def cudaFree(self, address):
        del self.memory[address]
        return self._result("cudaFree")

    def cudaStreamDestroy(self, stream):
        return self._result("cudaStreamDestroy")


@pytest.fixture
def fake_cudart(monkeypatch):
    def install(fail=None):
        module = FakeCudart(fail)
        monkeypatch.setitem(sys.modules, "cuda", types.ModuleType("cuda"))
        monkeypatch.setitem(sys.modules, "cuda.bindings", types.ModuleType("cuda.bindings"))
        monkeypatch.setitem(sys.modules, "cuda.bindings.runtime", module)
        return module
    return install


def test_copies_round_trip_through_device_buffers(fake_cudart):
    runtime = fake_cudart()
    memory = device_memory.open_device_memory("cuda-python")
    assert memory.gpu_name() == "NVIDIA Orin" and memory.stream == 99
    host = np.arange(12, dtype=np.float32)
    buffer = memory.allocate(host.nbytes)
    memory.to_device(buffer, host)
    back = np.zeros(12, np.float32)
    memory.to_host(buffer, back)
    memory.synchronize()
    np.testing.assert_array_equal(back, host)
    memory.free(buffer)
    memory.close()
    assert runtime.calls[-2:] == ["cudaFree", "cudaStreamDestroy"] and not runtime.memory


def test_cuda_errors_name_the_call(fake_cudart):
    fake_cudart(fail="cudaMalloc")
    memory = device_memory.CudaPythonMemory()
    with pytest.raises(RuntimeError, match="CUDA cudaMalloc failed: 7"):
        memory.allocate(16)


def test_no_memory_layer_without_cuda_python_or_a_gpu(monkeypatch):
    monkeypatch.setitem(sys.modules, "cuda.bindings.runtime", None)
    monkeypatch.setitem(sys.modules, "cuda.cudart", None)
    import torch

    if torch.cuda.is_available():
        pytest.skip("this check is about machines without a GPU")
    assert "torch" in device_memory.unavailable_reason() and "sees no GPU" in device_memory.unavailable_reason()
    with pytest.raises(BackendUnavailable, match="no CUDA memory layer works here"):
        device_memory.open_device_memory("auto")
    with pytest.raises(ValueError, match="cuda memory layer"):
        device_memory.open_device_memory("opencl")
