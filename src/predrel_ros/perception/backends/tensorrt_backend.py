"""TensorRT backend: builds an engine from ONNX (FP16 when the GPU has fast FP16), caches it on disk,
and runs it with device buffers.

Parameters follow the Isaac ROS TensorRT node (engine_file_path, force_engine_update, enable_fp16,
max_workspace_size, dla_core), with the fixes its users ask for: the cache is keyed by ONNX content,
TensorRT version, GPU, precision and input shape and rebuilt on any mismatch (`engine_cache.py`),
and the build (minutes on a Jetson) logs its progress: per phase through TensorRT's
IProgressMonitor (TensorRT >= 10), else a line every `progress_interval_s` seconds.

Shapes: a static ONNX input is built as declared. A dynamic batch dimension gets an optimisation
profile from 1 to `max_batch_size`. Dynamic spatial dimensions are fixed at the shape given to
`load()`, or at the first batch `run()` sees; a later batch of another spatial size switches to
(and if needed builds) the engine for that size, with a warning.

Needs TensorRT >= 8.5 (the named-tensor API: set_tensor_address / execute_async_v3) and a CUDA
memory layer (`device_memory.py`: cuda-python or PyTorch CUDA tensors).
"""
from __future__ import annotations

import importlib.util
import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from predrel_ros.core.errors import UserError
from predrel_ros.perception.backends import device_memory
from predrel_ros.perception.backends.base import (
    BackendDescription,
    BackendUnavailable,
    InferenceBackend,
    Shape,
    shape_text,
)
from predrel_ros.perception.backends.engine_cache import EngineCache, EngineKey, sha256_of_file

log = logging.getLogger(__name__)

MIN_TENSORRT = (8, 5)
ENGINE_FILE_SUFFIXES = (".engine", ".plan")


@dataclass(frozen=True)
class TensorRTConfig:
    engine_cache_dir: str = "~/.cache/predrel_ros/engines"
    engine_file_path: str | None = None  # one fixed engine file instead of the cache directory
    force_engine_update: bool = False  # rebuild even when a matching engine is cached
    enable_fp16: bool = True  # used when the GPU has fast FP16
    max_workspace_size: int = 1 << 30  # bytes of scratch memory the builder may use
    dla_core: int = -1  # Jetson DLA core to build for (with GPU fallback); -1: GPU only
    max_batch_size: int = 1  # upper end of the profile for a dynamic batch dimension
    cuda_memory: str = "auto"  # auto | cuda-python | torch
    device_index: int = 0
    progress_interval_s: float = 15.0  # log period while building without IProgressMonitor

    def __post_init__(self) -> None:
        if self.max_workspace_size < 1 << 20:
            raise ValueError(f"tensorrt.max_workspace_size must be at least 1 MiB, "
                             f"got {self.max_workspace_size}")
        if self.max_batch_size < 1:
            raise ValueError(f"tensorrt.max_batch_size must be at least 1, got {self.max_batch_size}")
        if self.dla_core < -1:
            raise ValueError(f"tensorrt.dla_core must be -1 (GPU) or a DLA core index, got {self.dla_core}")
        if self.cuda_memory not in ("auto",) + tuple(device_memory.MEMORY_KINDS):
            raise ValueError(f"tensorrt.cuda_memory must be auto or one of "
                             f"{sorted(device_memory.MEMORY_KINDS)}, got {self.cuda_memory!r}")
        if self.progress_interval_s <= 0:
            raise ValueError(f"tensorrt.progress_interval_s must be positive, got {self.progress_interval_s}")


class TensorRTBackend(InferenceBackend):
    name = "tensorrt"
    model_suffixes = (".onnx",) + ENGINE_FILE_SUFFIXES
    runtime_module = "tensorrt"

    def __init__(self, config: TensorRTConfig | None = None,
                 memory: device_memory.DeviceMemory | None = None) -> None:
        """`memory`: the device-memory layer to use (default: opened per `config.cuda_memory`)."""
        self.config = config or TensorRTConfig()
        self._memory = memory
        self._trt = None
        self._logger = None
        self._runtime = None
        self._onnx_path: Path | None = None
        self._engine_path: Path | None = None
        self._declared: Shape = ()
        self._input_name = ""
        self._engine = None
        self._context = None
        self._built_shape: tuple[int, ...] | None = None
        self._buffers: dict[str, device_memory.DeviceBuffer] = {}
        self._precision = "fp32"
        self._key: EngineKey | None = None
        self._cache_note = ""

    @classmethod
    def unavailable_reason(cls) -> str | None:
        if importlib.util.find_spec("tensorrt") is None:
            return "the tensorrt module is not installed (TensorRT ships with JetPack and NVIDIA's containers)"
        return device_memory.unavailable_reason()

    # --- loading -------------------------------------------------------------------------------
    def load(self, model_path: str | Path, input_shape: tuple[int, ...] | None = None) -> None:
        try:
            import tensorrt as trt
        except ImportError as error:
            raise BackendUnavailable(f"the tensorrt module cannot be imported: {error}") from error
        version = _version_tuple(trt.__version__)
        if version < MIN_TENSORRT:
            raise BackendUnavailable(f"TensorRT {trt.__version__} is too old: this backend needs "
                                     f">= {'.'.join(map(str, MIN_TENSORRT))} (named-tensor API)")
        model_path = self._model_file(model_path)
        self._trt = trt
        self._logger = _python_logger(trt)
        self._runtime = trt.Runtime(self._logger)
        if self._memory is None:
            self._memory = device_memory.open_device_memory(self.config.cuda_memory,
                                                            self.config.device_index)
        if model_path.suffix in ENGINE_FILE_SUFFIXES:
            self._load_prebuilt(model_path, input_shape)
            return
        self._onnx_path = model_path
        self._onnx_sha256 = sha256_of_file(model_path)
        parsed = self._parse()
        self._input_name, self._declared = _network_input(parsed[1], model_path)
        if input_shape is not None:
            self._prepare(self._build_shape(tuple(input_shape)), parsed)
        elif all(dim is not None for dim in self._declared[1:]):
            self._prepare(self._build_shape(tuple(1 if d is None else d for d in self._declared)), parsed)
        else:
            log.info("tensorrt: %s has dynamic spatial dimensions %s; the engine is built for the "
                     "first input size seen", model_path.name, shape_text(self._declared))

    def _load_prebuilt(self, path: Path, input_shape: tuple[int, ...] | None) -> None:
        engine = self._runtime.deserialize_cuda_engine(path.read_bytes())
        if engine is None:
            raise UserError(f"TensorRT {self._trt.__version__} cannot load the engine {path}: engines "
                            f"only run on the TensorRT version and GPU they were built with; give the "
                            f"ONNX model instead so the engine is rebuilt here")
        self._engine_path = path
        self._cache_note = f"prebuilt engine {path} (not checked: no ONNX to rebuild from)"
        self._activate(engine, input_shape)

    def _build_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        """The concrete shape to build for: `shape`, checked against the declared dims, with the
        batch raised to max_batch_size when the batch is dynamic."""
        declared = self._declared
        if len(shape) != len(declared) or any(want is not None and want != got
                                             for want, got in zip(declared, shape)):
            raise ValueError(f"tensorrt: input {self._input_name!r} of {self._onnx_path.name} is "
                             f"{shape_text(declared)}; cannot build it for {shape}")
        if declared[0] is None:
            shape = (self.config.max_batch_size,) + tuple(shape[1:])
        return tuple(int(d) for d in shape)

    def _prepare(self, shape: tuple[int, ...], parsed: tuple | None = None) -> None:
        """Make the engine for `shape` current: from the cache when it matches, else built.
        `parsed`: (builder, network, parser) of the ONNX file when already at hand."""
        trt = self._trt
        builder = parsed[0] if parsed else trt.Builder(self._logger)
        precision = self._precision_for(builder)
        key = EngineKey(self._onnx_sha256, trt.__version__, self._memory.gpu_name(), precision,
                        shape, self.config.max_batch_size if self._declared[0] is None else shape[0],
                        self.config.dla_core)
        cache = EngineCache(self.config.engine_cache_dir, self._onnx_path.stem,
                            self.config.engine_file_path)
        engine = None
        if self.config.force_engine_update:
            note = "force_engine_update is set; rebuilding"
        else:
            path, note = cache.lookup(key)
            if path is not None:
                engine = self._runtime.deserialize_cuda_engine(path.read_bytes())
                if engine is None:
                    note = f"cached engine {path} failed to deserialize; rebuilding"
                else:
                    self._engine_path = path
        log.info("tensorrt: %s", note)
        self._cache_note = note
        if engine is None:
            builder, network, _parser = parsed or self._parse()
            serialized, seconds = self._build(builder, network, shape, precision)
            self._engine_path = cache.store(key, serialized, seconds)
            log.info("tensorrt: engine for %s built in %.1f s, saved to %s", self._onnx_path.name,
                     seconds, self._engine_path)
            engine = self._runtime.deserialize_cuda_engine(serialized)
            if engine is None:
                raise RuntimeError(f"TensorRT built an engine for {self._onnx_path} that it cannot load")
        self._precision = precision
        self._key = key
        self._activate(engine, shape)

    def _parse(self):
        trt = self._trt
        builder = trt.Builder(self._logger)
        flags = 0
        if _version_tuple(trt.__version__) < (10, 0):
            flags = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)
        network = builder.create_network(flags)
        parser = trt.OnnxParser(network, self._logger)
        if not parser.parse(self._onnx_path.read_bytes()):
            errors = [str(parser.get_error(i)) for i in range(parser.num_errors)]
            raise UserError(f"TensorRT cannot parse {self._onnx_path}: " + "; ".join(errors or ["unknown error"]))
        return builder, network, parser

    def _precision_for(self, builder) -> str:
        if not self.config.enable_fp16:
            precision = "fp32"
        elif getattr(builder, "platform_has_fast_fp16", True):
            precision = "fp16"
        else:
            log.info("tensorrt: this GPU has no fast FP16; building FP32")
            precision = "fp32"
        if self.config.dla_core >= 0 and precision != "fp16":
            raise UserError("tensorrt: building for a DLA core needs enable_fp16 (DLA runs FP16/INT8 only)")
        return precision

    def _build(self, builder, network, shape: tuple[int, ...], precision: str) -> tuple[bytes, float]:
        trt = self._trt
        cfg = self.config
        config = builder.create_builder_config()
        config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, cfg.max_workspace_size)
        if precision == "fp16":
            config.set_flag(trt.BuilderFlag.FP16)
        if cfg.dla_core >= 0:
            if cfg.dla_core >= builder.num_DLA_cores:
                raise UserError(f"tensorrt.dla_core {cfg.dla_core} asked for, but this device has "
                                f"{builder.num_DLA_cores} DLA cores")
            config.default_device_type = trt.DeviceType.DLA
            config.DLA_core = cfg.dla_core
            config.set_flag(trt.BuilderFlag.GPU_FALLBACK)
        if any(dim is None for dim in self._declared):
            profile = builder.create_optimization_profile()
            minimum = (1,) + shape[1:] if self._declared[0] is None else shape
            profile.set_shape(self._input_name, minimum, shape, shape)
            config.add_optimization_profile(profile)
        monitor = _progress_monitor(trt, self._onnx_path.name)
        if monitor is not None:
            config.progress_monitor = monitor
        log.info("tensorrt: building a %s engine for %s, input %s (first builds take minutes on a "
                 "Jetson)", precision, self._onnx_path.name, list(shape))
        start = time.monotonic()
        heartbeat = None if monitor is not None else _Heartbeat(self._onnx_path.name, cfg.progress_interval_s)
        try:
            serialized = builder.build_serialized_network(network, config)
        finally:
            if heartbeat is not None:
                heartbeat.stop()
        if serialized is None:
            raise RuntimeError(f"TensorRT failed to build an engine for {self._onnx_path} "
                               f"(input {list(shape)}, {precision}); see the TensorRT errors logged above")
        return bytes(serialized), time.monotonic() - start

    def _activate(self, engine, shape: tuple[int, ...] | None) -> None:
        """Make `engine` current: execution context and device buffers sized for `shape`."""
        trt = self._trt
        self._release_buffers()
        self._engine = engine
        self._context = engine.create_execution_context()
        names = [engine.get_tensor_name(i) for i in range(engine.num_io_tensors)]
        inputs = [n for n in names if engine.get_tensor_mode(n) == trt.TensorIOMode.INPUT]
        if len(inputs) != 1:
            raise UserError(f"expected an engine with one image input, it has {inputs}")
        self._input_name = inputs[0]
        self._outputs = [n for n in names if n not in inputs]
        declared = tuple(int(d) for d in engine.get_tensor_shape(self._input_name))
        if not self._declared:
            self._declared = tuple(None if d < 0 else d for d in declared)
        if shape is None:
            if any(d < 0 for d in declared):
                profile = engine.get_tensor_profile_shape(self._input_name, 0)
                shape = tuple(int(d) for d in profile[2])
            else:
                shape = declared
        self._built_shape = tuple(shape)
        if any(d < 0 for d in declared):
            self._context.set_input_shape(self._input_name, self._built_shape)
        for name in names:
            dims = self._built_shape if name == self._input_name else tuple(self._context.get_tensor_shape(name))
            if any(d < 0 for d in dims):
                raise UserError(f"TensorRT cannot tell the size of output {name!r} for input "
                                f"{list(self._built_shape)}: {list(dims)}")
            dtype = np.dtype(trt.nptype(engine.get_tensor_dtype(name)))
            self._buffers[name] = self._memory.allocate(int(np.prod(dims)) * dtype.itemsize)

    # --- running -------------------------------------------------------------------------------
    @property
    def input_name(self) -> str:
        return self._input_name

    @property
    def input_shape(self) -> Shape:
        return self._declared

    @property
    def output_names(self) -> tuple[str, ...]:
        return tuple(getattr(self, "_outputs", ()))

    def run(self, batch: np.ndarray) -> dict[str, np.ndarray]:
        if self._trt is None:
            raise RuntimeError("tensorrt backend: call load() first")
        trt = self._trt
        batch = self._check_batch(batch)
        self._ensure_engine_for(batch.shape)
        engine, context = self._engine, self._context
        batch = np.ascontiguousarray(batch, dtype=np.dtype(trt.nptype(engine.get_tensor_dtype(self._input_name))))
        if any(dim is None for dim in self._declared):
            context.set_input_shape(self._input_name, tuple(batch.shape))
        self._memory.to_device(self._buffers[self._input_name], batch)
        for name, buffer in self._buffers.items():
            context.set_tensor_address(name, buffer.ptr)
        if not context.execute_async_v3(self._memory.stream):
            raise RuntimeError(f"TensorRT inference failed for input {batch.shape}")
        results = {}
        for name in self._outputs:
            dims = tuple(int(d) for d in context.get_tensor_shape(name))
            host = np.empty(dims, dtype=np.dtype(trt.nptype(engine.get_tensor_dtype(name))))
            self._memory.to_host(self._buffers[name], host)
            results[name] = host
        self._memory.synchronize()
        return {name: value.astype(np.float32, copy=False) for name, value in results.items()}

    def _ensure_engine_for(self, shape: tuple[int, ...]) -> None:
        if self._built_shape is not None:
            spatial_ok = tuple(shape[1:]) == self._built_shape[1:]
            batch_ok = shape[0] <= self._built_shape[0] if self._declared[0] is None \
                else shape[0] == self._built_shape[0]
            if spatial_ok and batch_ok:
                return
            if spatial_ok:
                raise ValueError(f"tensorrt: batch of {shape[0]} exceeds the engine's maximum "
                                 f"{self._built_shape[0]} (raise tensorrt.max_batch_size)")
            if self._onnx_path is None:
                raise ValueError(f"tensorrt: the prebuilt engine takes input {list(self._built_shape)}, "
                                 f"got {list(shape)}")
            log.warning("tensorrt: input size changed from %s to %s; switching engines",
                        list(self._built_shape), list(shape))
        self._prepare(self._build_shape(tuple(shape)))

    def describe(self) -> BackendDescription:
        if self._trt is None:
            raise RuntimeError("tensorrt backend: call load() first")
        details = {"engine_path": str(self._engine_path) if self._engine_path else None,
                   "cache": self._cache_note, "cuda_memory": self._memory.name,
                   "built_shape": list(self._built_shape) if self._built_shape else None}
        gpu = self._memory.gpu_name()
        return BackendDescription(self.name, f"TensorRT {self._trt.__version__}",
                                  f"cuda:{self.config.device_index} ({gpu})", self._precision,
                                  str(self._onnx_path or self._engine_path), self._input_name,
                                  self._declared, details)

    def _release_buffers(self) -> None:
        for buffer in self._buffers.values():
            self._memory.free(buffer)
        self._buffers = {}

    def close(self) -> None:
        if self._memory is not None:
            self._release_buffers()
            self._memory.close()
        self._context = self._engine = self._runtime = None
        self._trt = None


def _network_input(network, path: Path) -> tuple[str, Shape]:
    if network.num_inputs != 1:
        names = [network.get_input(i).name for i in range(network.num_inputs)]
        raise UserError(f"{path}: expected a model with one image input, it has {names}")
    tensor = network.get_input(0)
    return tensor.name, tuple(None if int(d) < 0 else int(d) for d in tensor.shape)


def _version_tuple(text: str) -> tuple[int, ...]:
    parts = []
    for part in str(text).split(".")[:3]:
        digits = "".join(ch for ch in part if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def _python_logger(trt):
    """A TensorRT logger that forwards to Python logging (so ROS and the CLI see TensorRT's words)."""
    severity = trt.ILogger.Severity
    levels = {severity.INTERNAL_ERROR: logging.CRITICAL, severity.ERROR: logging.ERROR,
              severity.WARNING: logging.WARNING, severity.INFO: logging.INFO,
              severity.VERBOSE: logging.DEBUG}

    class PythonLogger(trt.ILogger):
        def __init__(self) -> None:
            trt.ILogger.__init__(self)

        def log(self, level, message) -> None:
            log.log(levels.get(level, logging.INFO), "TensorRT: %s", message)

    return PythonLogger()


def _progress_monitor(trt, model_name: str, min_interval_s: float = 2.0):
    """An IProgressMonitor (TensorRT >= 10) that logs phases and, at most every `min_interval_s`,
    steps; None when this TensorRT has none."""
    if not hasattr(trt, "IProgressMonitor"):
        return None

    class BuildProgress(trt.IProgressMonitor):
        def __init__(self) -> None:
            trt.IProgressMonitor.__init__(self)
            self._steps: dict[str, int] = {}
            self._last_log = 0.0

        def phase_start(self, phase_name, parent_phase, num_steps) -> None:
            self._steps[phase_name] = num_steps
            within = f" (in {parent_phase})" if parent_phase else ""
            log.info("tensorrt build %s: %s%s, %d steps", model_name, phase_name, within, num_steps)

        def step_complete(self, phase_name, step) -> bool:
            now = time.monotonic()
            if now - self._last_log >= min_interval_s:
                self._last_log = now
                log.info("tensorrt build %s: %s step %d/%d", model_name, phase_name, step + 1,
                         self._steps.get(phase_name, 0))
            return True  # False would cancel the build

        def phase_finish(self, phase_name) -> None:
            log.info("tensorrt build %s: %s done", model_name, phase_name)

    return BuildProgress()


class _Heartbeat:
    """Logs 'still building' every `interval_s` seconds from a daemon thread until stopped."""

    def __init__(self, model_name: str, interval_s: float) -> None:
        self._stop = threading.Event()
        self._start = time.monotonic()
        self._thread = threading.Thread(target=self._beat, args=(model_name, interval_s), daemon=True,
                                        name="tensorrt-build-heartbeat")
        self._thread.start()

    def _beat(self, model_name: str, interval_s: float) -> None:
        while not self._stop.wait(interval_s):
            log.info("tensorrt: still building the engine for %s, %.0f s so far", model_name,
                     time.monotonic() - self._start)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
