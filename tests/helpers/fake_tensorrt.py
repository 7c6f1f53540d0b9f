"""A fake `tensorrt` module (and a fake CUDA memory layer) that records what the backend asks of it.

It mirrors the TensorRT >= 8.5 Python API the backend uses. The "ONNX parser" reads the real ONNX
file with the onnx package; a "serialized engine" is a JSON header (TensorRT version, precision,
profile) followed by the ONNX bytes, so a "deserialized engine" runs the model with ONNX Runtime and
the backend's outputs are real numbers. Like real TensorRT, an engine serialized by another version
does not deserialize (None). Knobs: `__version__`, `platform_has_fast_fp16`, `num_dla_cores`,
`fail_build`, `build_seconds`; everything is recorded in `calls`.
"""
from __future__ import annotations

import enum
import json
import time

import numpy as np

from predrel_ros.perception.backends.device_memory import DeviceBuffer, DeviceMemory

__version__ = "10.3.0"
platform_has_fast_fp16 = True
num_dla_cores = 0
fail_build = False
build_seconds = 0.0
calls: list[tuple] = []

MAGIC = b"FAKETRT\n"


class ILogger:
    class Severity(enum.IntEnum):
        INTERNAL_ERROR = 0
        ERROR = 1
        WARNING = 2
        INFO = 3
        VERBOSE = 4

    def __init__(self) -> None:
        pass


class IProgressMonitor:
    def __init__(self) -> None:
        pass


class NetworkDefinitionCreationFlag(enum.IntEnum):
    EXPLICIT_BATCH = 0


class MemoryPoolType(enum.Enum):
    WORKSPACE = 0


class BuilderFlag(enum.Enum):
    FP16 = 0
    GPU_FALLBACK = 1


class DeviceType(enum.Enum):
    GPU = 0
    DLA = 1


class TensorIOMode(enum.Enum):
    NONE = 0
    INPUT = 1
    OUTPUT = 2


class DataType(enum.Enum):
    FLOAT = 0
    HALF = 1


def nptype(dtype: DataType):
    return {DataType.FLOAT: np.float32, DataType.HALF: np.float16}[dtype]


class _Tensor:
    def __init__(self, name: str, shape: tuple[int, ...]) -> None:
        self.name = name
        self.shape = shape


class _Network:
    def __init__(self, flags: int) -> None:
        self.flags = flags
        self.inputs: list[_Tensor] = []
        self.outputs: list[_Tensor] = []
        self.onnx = b""

    @property
    def num_inputs(self) -> int:
        return len(self.inputs)

    def get_input(self, i: int) -> _Tensor:
        return self.inputs[i]


class OnnxParser:
    def __init__(self, network: _Network, logger: ILogger) -> None:
        self.network = network
        self.errors: list[str] = []

    def parse(self, data: bytes) -> bool:
        import onnx

        calls.append(("parse",))
        try:
            model = onnx.load_from_string(data)
        except Exception as error:  # noqa: BLE001 - the fake reports any failure as a parser error
            self.errors = [f"ModelImporter: cannot read the model: {type(error).__name__}"]
            return False
        self.network.onnx = data
        for value, target in ((model.graph.input, self.network.inputs), (model.graph.output, self.network.outputs)):
            for info in value:
                dims = tuple(d.dim_value if d.HasField("dim_value") else -1
                             for d in info.type.tensor_type.shape.dim)
                target.append(_Tensor(info.name, dims))
        return True

    @property
    def num_errors(self) -> int:
        return len(self.errors)

    def get_error(self, i: int) -> str:
        return self.errors[i]


class _Profile:
    def __init__(self) -> None:
        self.shapes: dict[str, tuple] = {}

    def set_shape(self, name, minimum, optimum, maximum) -> None:
        self.shapes[name] = (tuple(minimum), tuple(optimum), tuple(maximum))


class _BuilderConfig:
    def __init__(self) -> None:
        self.flags: set = set()
        self.pools: dict = {}
        self.profiles: list[_Profile] = []
        self.progress_monitor = None
        self.default_device_type = DeviceType.GPU
        self.DLA_core = -1

    def set_memory_pool_limit(self, pool, size) -> None:
        self.pools[pool] = size

    def set_flag(self, flag) -> None:
        self.flags.add(flag)

    def add_optimization_profile(self, profile: _Profile) -> int:
        self.profiles.append(profile)
        return len(self.profiles) - 1


class Builder:
    def __init__(self, logger: ILogger) -> None:
        self.logger = logger

    @property
    def platform_has_fast_fp16(self) -> bool:
        return platform_has_fast_fp16

    @property
    def num_DLA_cores(self) -> int:
        return num_dla_cores

    def create_network(self, flags: int = 0) -> _Network:
        return _Network(flags)

    def create_builder_config(self) -> _BuilderConfig:
        return _BuilderConfig()

    def create_optimization_profile(self) -> _Profile:
        return _Profile()

    def build_serialized_network(self, network: _Network, config: _BuilderConfig):
        profile = config.profiles[0].shapes if config.profiles else {}
        calls.append(("build", {"fp16": BuilderFlag.FP16 in config.flags, "profile": profile,
                                "workspace": config.pools.get(MemoryPoolType.WORKSPACE),
                                "dla_core": config.DLA_core, "flags": network.flags}))
        monitor = config.progress_monitor
        if monitor is not None:
            monitor.phase_start("Building engine", None, 3)
            for step in range(3):
                if not monitor.step_complete("Building engine", step):
                    return None
            monitor.phase_finish("Building engine")
        if build_seconds:
            time.sleep(build_seconds)
        if fail_build:
            self.logger.log(ILogger.Severity.ERROR, "fake build failure")
            return None
        inputs = {t.name: t.shape for t in network.inputs}
        header = {"version": __version__, "fp16": BuilderFlag.FP16 in config.flags,
                  "inputs": inputs, "outputs": {t.name: t.shape for t in network.outputs},
                  "profile": {k: [list(s) for s in v] for k, v in profile.items()}}
        return MAGIC + json.dumps(header).encode() + b"\n" + network.onnx


class Runtime:
    def __init__(self, logger: ILogger) -> None:
        self.logger = logger

    def deserialize_cuda_engine(self, data: bytes):
        calls.append(("deserialize",))
        if not data.startswith(MAGIC):
            self.logger.log(ILogger.Severity.ERROR, "not an engine")
            return None
        header_line, onnx_bytes = data[len(MAGIC):].split(b"\n", 1)
        header = json.loads(header_line)
        if header["version"] != __version__:
            self.logger.log(ILogger.Severity.ERROR, "engine built by another TensorRT version")
            return None
        return _Engine(header, onnx_bytes)


class _Engine:
    def __init__(self, header: dict, onnx_bytes: bytes) -> None:
        import onnxruntime as ort

        self.header = header
        self.session = ort.InferenceSession(onnx_bytes, providers=["CPUExecutionProvider"])
        self.names = list(header["inputs"]) + list(header["outputs"])

    @property
    def num_io_tensors(self) -> int:
        return len(self.names)

    def get_tensor_name(self, i: int) -> str:
        return self.names[i]

    def get_tensor_mode(self, name: str) -> TensorIOMode:
        return TensorIOMode.INPUT if name in self.header["inputs"] else TensorIOMode.OUTPUT

    def get_tensor_dtype(self, name: str) -> DataType:
        return DataType.FLOAT

    def get_tensor_shape(self, name: str) -> tuple[int, ...]:
        return tuple(self.header["inputs"].get(name) or self.header["outputs"][name])

    def get_tensor_profile_shape(self, name: str, profile: int):
        return [tuple(s) for s in self.header["profile"][name]]

    def create_execution_context(self) -> "_Context":
        return _Context(self)


class _Context:
    def __init__(self, engine: _Engine) -> None:
        self.engine = engine
        self.input_shapes = {name: tuple(shape) for name, shape in engine.header["inputs"].items()}
        self.addresses: dict[str, int] = {}

    def set_input_shape(self, name: str, shape) -> bool:
        calls.append(("set_input_shape", name, tuple(shape)))
        profile = self.engine.header["profile"].get(name)
        if profile and not all(lo <= s <= hi for lo, s, hi in zip(profile[0], shape, profile[2])):
            return False
        self.input_shapes[name] = tuple(shape)
        return True

    def _outputs_for_current_shapes(self) -> dict[str, np.ndarray]:
        feeds = {name: np.zeros(shape, np.float32) for name, shape in self.input_shapes.items()}
        return dict(zip(self.engine.header["outputs"], self.engine.session.run(None, feeds)))

    def get_tensor_shape(self, name: str) -> tuple[int, ...]:
        if name in self.input_shapes:
            return self.input_shapes[name]
        return tuple(self._outputs_for_current_shapes()[name].shape)

    def set_tensor_address(self, name: str, address: int) -> bool:
        self.addresses[name] = address
        return True

    def execute_async_v3(self, stream: int) -> bool:
        calls.append(("execute", stream))
        feeds = {}
        for name, shape in self.input_shapes.items():
            feeds[name] = np.frombuffer(FakeDeviceMemory.read(self.addresses[name], int(np.prod(shape)) * 4),
                                        np.float32).reshape(shape)
        outputs = self.engine.session.run(None, feeds)
        for name, value in zip(self.engine.header["outputs"], outputs):
            FakeDeviceMemory.write(self.addresses[name], np.ascontiguousarray(value, np.float32).tobytes())
        return True


class FakeDeviceMemory(DeviceMemory):
    """The device-memory layer (predrel_ros.perception.backends.device_memory.DeviceMemory API) over
    host bytearrays, sharing its address space with the fake execution context."""

    name = "fake-cuda"
    _storage: dict[int, bytearray] = {}
    _next = [0x1000]

    def __init__(self, gpu: str = "NVIDIA Fake GPU") -> None:
        self.gpu = gpu
        self.events: list[tuple] = []
        self.live: set[int] = set()

    def gpu_name(self) -> str:
        return self.gpu

    def allocate(self, nbytes: int) -> DeviceBuffer:
        ptr = FakeDeviceMemory._next[0]
        FakeDeviceMemory._next[0] += max(nbytes, 1) + 256
        FakeDeviceMemory._storage[ptr] = bytearray(max(nbytes, 1))
        self.live.add(ptr)
        self.events.append(("allocate", nbytes))
        return DeviceBuffer(ptr, nbytes)

    @classmethod
    def read(cls, ptr: int, nbytes: int) -> bytes:
        storage = cls._storage[ptr]
        if nbytes > len(storage):
            raise AssertionError(f"read of {nbytes} bytes overruns a {len(storage)}-byte buffer")
        return bytes(storage[:nbytes])

    @classmethod
    def write(cls, ptr: int, data: bytes) -> None:
        storage = cls._storage[ptr]
        if len(data) > len(storage):
            raise AssertionError(f"write of {len(data)} bytes overruns a {len(storage)}-byte buffer")
        storage[:len(data)] = data

    def to_device(self, buffer, host: np.ndarray) -> None:
        self.events.append(("to_device", host.nbytes))
        self.write(buffer.ptr, host.tobytes())

    def to_host(self, buffer, host: np.ndarray) -> None:
        self.events.append(("to_host", host.nbytes))
        host.reshape(-1).view(np.uint8)[:] = np.frombuffer(self.read(buffer.ptr, host.nbytes), np.uint8)

    @property
    def stream(self) -> int:
        return 77

    def synchronize(self) -> None:
        self.events.append(("synchronize",))

    def free(self, buffer) -> None:
        self.events.append(("free", buffer.nbytes))
        self.live.discard(buffer.ptr)
        FakeDeviceMemory._storage.pop(buffer.ptr, None)

    def close(self) -> None:
        self.events.append(("close",))


def build_count() -> int:
    return sum(1 for call in calls if call[0] == "build")

