"""The TensorRT backend's logic against the fake `tensorrt` module and fake device memory (no GPU here)."""
import json
import logging
import sys

import numpy as np
import pytest

from predrel_ros.core.errors import UserError
from predrel_ros.perception.backends.base import BackendUnavailable
from predrel_ros.perception.backends.tensorrt_backend import TensorRTBackend, TensorRTConfig

OUT0 = np.arange(2 * 5, dtype=np.float32).reshape(1, 2, 5)
OUT1 = np.ones((1, 32, 8, 10), np.float32)


@pytest.fixture
def model(make_yoloseg_onnx):
    return make_yoloseg_onnx(OUT0, OUT1, input_shape=(1, 3, 32, 40))


def open_backend(fake, path, cache, memory=None, input_shape=None, **config):
    backend = TensorRTBackend(TensorRTConfig(engine_cache_dir=str(cache), **config),
                              memory=memory or fake.FakeDeviceMemory())
    backend.load(path, input_shape)
    return backend


def engines(cache):
    return sorted(p.name for p in cache.glob("*.engine"))


def test_first_load_builds_and_caches_the_engine_and_runs_it(fake_tensorrt, model, tmp_path):
    cache = tmp_path / "cache"
    memory = fake_tensorrt.FakeDeviceMemory()
    backend = open_backend(fake_tensorrt, model, cache, memory)
    assert fake_tensorrt.build_count() == 1
    build = next(c for c in fake_tensorrt.calls if c[0] == "build")[1]
    assert build["fp16"] and build["workspace"] == 1 << 30 and build["flags"] == 0
    assert build["profile"] == {}  # static input: no optimisation profile

    (engine,) = cache.glob("model.*.engine")
    metadata = json.loads(engine.with_suffix(".json").read_text())
    assert metadata["tensorrt_version"] == "10.3.0"
    assert metadata["gpu_name"] == "NVIDIA Fake GPU"
    assert metadata["precision"] == "fp16"
    assert metadata["input_shape"] == [1, 3, 32, 40]
    assert len(metadata["onnx_sha256"]) == 64

    outputs = backend.run(np.zeros((1, 3, 32, 40), np.float32))
    np.testing.assert_array_equal(outputs["output0"], OUT0)
    np.testing.assert_array_equal(outputs["output1"], OUT1)
    kinds = [event[0] for event in memory.events]
    assert kinds.count("to_device") == 1 and kinds.count("to_host") == 2 and kinds[-1] == "synchronize"
    description = backend.describe()
    assert (description.backend, description.precision, description.provider) == ("tensorrt", "fp16", "TensorRT 10.3.0")
    assert description.device == "cuda:0 (NVIDIA Fake GPU)"
    assert description.details["engine_path"] == str(engine)
    backend.close()
    assert not memory.live and memory.events[-1] == ("close",)


def test_second_load_hits_the_cache(fake_tensorrt, model, tmp_path, caplog):
    open_backend(fake_tensorrt, model, tmp_path).close()
    caplog.set_level(logging.INFO)
    backend = open_backend(fake_tensorrt, model, tmp_path)
    assert fake_tensorrt.build_count() == 1
    assert "matches" in backend.describe().details["cache"]
    np.testing.assert_array_equal(backend.run(np.zeros((1, 3, 32, 40), np.float32))["output0"], OUT0)


@pytest.mark.parametrize("change, field, old_engine_kept", [
    ("onnx", "onnx_sha256", False),
    ("tensorrt_version", "tensorrt_version", False),
    ("gpu", "gpu_name", True),
    ("no_fp16_flag", "precision", True),
    ("no_fast_fp16", "precision", True),
    ("input_shape", "input_shape", True),
    ("max_batch", "max_batch_size", True),
    ("dla", "dla_core", True),
])
def test_any_changed_key_field_rebuilds(fake_tensorrt, make_yoloseg_onnx, tmp_path, change, field, old_engine_kept):
    dynamic = change in ("input_shape", "max_batch")
    shape = ("batch", 3, "h", "w") if dynamic else (1, 3, 32, 40)
    model = make_yoloseg_onnx(OUT0, OUT1, input_shape=shape)
    first_input = (1, 3, 32, 40)
    open_backend(fake_tensorrt, model, tmp_path, input_shape=first_input).close()
    (old,) = engines(tmp_path)

    config, memory, second_input = {}, fake_tensorrt.FakeDeviceMemory(), first_input
    if change == "onnx":
        make_yoloseg_onnx(OUT0 + 1, OUT1, input_shape=shape)
    elif change == "tensorrt_version":
        fake_tensorrt.__version__ = "10.4.1"
    elif change == "gpu":
        memory = fake_tensorrt.FakeDeviceMemory("NVIDIA Jetson AGX Orin")
    elif change == "no_fp16_flag":
        config = {"enable_fp16": False}
    elif change == "no_fast_fp16":
        fake_tensorrt.platform_has_fast_fp16 = False
    elif change == "input_shape":
        second_input = (1, 3, 64, 96)
    elif change == "max_batch":
        config = {"max_batch_size": 4}
    elif change == "dla":
        fake_tensorrt.num_dla_cores = 1
        config = {"dla_core": 0}
    backend = open_backend(fake_tensorrt, model, tmp_path, memory, second_input, **config)
    assert fake_tensorrt.build_count() == 2
    assert field in backend.describe().details["cache"]  # the log says which field differed
    assert (old in engines(tmp_path)) == old_engine_kept
    assert len(engines(tmp_path)) == (2 if old_engine_kept else 1)
    run_shape = (1,) + second_input[1:]
    expected = OUT0 + 1 if change == "onnx" else OUT0
    np.testing.assert_array_equal(backend.run(np.zeros(run_shape, np.float32))["output0"], expected)


def test_force_engine_update_rebuilds_a_matching_engine(fake_tensorrt, model, tmp_path):
    open_backend(fake_tensorrt, model, tmp_path).close()
    backend = open_backend(fake_tensorrt, model, tmp_path, force_engine_update=True)
    assert fake_tensorrt.build_count() == 2
    assert "force_engine_update" in backend.describe().details["cache"]
    assert len(engines(tmp_path)) == 1


def test_explicit_engine_file_is_rebuilt_when_its_metadata_differs(fake_tensorrt, model, tmp_path):
    engine = tmp_path / "fixed" / "detector.plan"
    open_backend(fake_tensorrt, model, tmp_path, engine_file_path=str(engine)).close()
    assert engine.is_file() and (tmp_path / "fixed" / "detector.plan.json").is_file()
    open_backend(fake_tensorrt, model, tmp_path, engine_file_path=str(engine)).close()
    assert fake_tensorrt.build_count() == 1
    fake_tensorrt.__version__ = "10.5.0"
    open_backend(fake_tensorrt, model, tmp_path, engine_file_path=str(engine)).close()
    assert fake_tensorrt.build_count() == 2
    assert json.loads((tmp_path / "fixed" / "detector.plan.json").read_text())["tensorrt_version"] == "10.5.0"


def test_unreadable_cached_engine_or_metadata_is_rebuilt(fake_tensorrt, model, tmp_path):
    open_backend(fake_tensorrt, model, tmp_path).close()
    (engine,) = tmp_path.glob("*.engine")
    engine.write_bytes(b"garbage")
    backend = open_backend(fake_tensorrt, model, tmp_path)
    assert fake_tensorrt.build_count() == 2 and "failed to deserialize" in backend.describe().details["cache"]
    engine.with_suffix(".json").write_text("{not json")
    backend = open_backend(fake_tensorrt, model, tmp_path)
    assert fake_tensorrt.build_count() == 3 and "no readable metadata" in backend.describe().details["cache"]


def test_dynamic_batch_gets_a_profile_up_to_max_batch(fake_tensorrt, make_yoloseg_onnx, tmp_path):
    out0 = np.ones((1, 6, 4), np.float32)
    model = make_yoloseg_onnx(out0, None, input_shape=("batch", 3, 32, 40))
    backend = open_backend(fake_tensorrt, model, tmp_path, max_batch_size=4)
    build = next(c for c in fake_tensorrt.calls if c[0] == "build")[1]
    assert build["profile"] == {"images": ((1, 3, 32, 40), (4, 3, 32, 40), (4, 3, 32, 40))}
    assert backend.input_shape == (None, 3, 32, 40)
    backend.run(np.zeros((2, 3, 32, 40), np.float32))
    assert ("set_input_shape", "images", (2, 3, 32, 40)) in fake_tensorrt.calls
    with pytest.raises(ValueError, match="exceeds the engine's maximum 4"):
        backend.run(np.zeros((5, 3, 32, 40), np.float32))


def test_dynamic_spatial_size_builds_at_first_run_and_switches_with_a_warning(
        fake_tensorrt, make_yoloseg_onnx, tmp_path, caplog):
    model = make_yoloseg_onnx(OUT0, OUT1, input_shape=(1, 3, "h", "w"))
    backend = open_backend(fake_tensorrt, model, tmp_path)
    assert fake_tensorrt.build_count() == 0
    backend.run(np.zeros((1, 3, 64, 64), np.float32))
    assert fake_tensorrt.build_count() == 1
    caplog.set_level(logging.WARNING)
    backend.run(np.zeros((1, 3, 96, 128), np.float32))
    assert fake_tensorrt.build_count() == 2 and "input size changed" in caplog.text
    backend.run(np.zeros((1, 3, 64, 64), np.float32))  # back to the first size: cached
    assert fake_tensorrt.build_count() == 2
    assert len(engines(tmp_path)) == 2


def test_build_progress_is_logged_through_the_progress_monitor(fake_tensorrt, model, tmp_path, caplog):
    caplog.set_level(logging.INFO)
    open_backend(fake_tensorrt, model, tmp_path)
    assert "Building engine, 3 steps" in caplog.text and "Building engine done" in caplog.text
    assert "first builds take minutes" in caplog.text


def test_without_a_progress_monitor_a_heartbeat_is_logged(fake_tensorrt, model, tmp_path, caplog):
    del fake_tensorrt.IProgressMonitor  # TensorRT < 10
    fake_tensorrt.__version__ = "8.6.1"
    fake_tensorrt.build_seconds = 0.25
    caplog.set_level(logging.INFO)
    open_backend(fake_tensorrt, model, tmp_path, progress_interval_s=0.05)
    assert "still building the engine for model.onnx" in caplog.text
    build = next(c for c in fake_tensorrt.calls if c[0] == "build")[1]
    assert build["flags"] == 1  # explicit batch flag before TensorRT 10


def test_prebuilt_engine_file_loads_without_onnx(fake_tensorrt, model, tmp_path):
    open_backend(fake_tensorrt, model, tmp_path).close()
    (engine,) = tmp_path.glob("*.engine")
    backend = open_backend(fake_tensorrt, engine, tmp_path / "unused")
    np.testing.assert_array_equal(backend.run(np.zeros((1, 3, 32, 40), np.float32))["output0"], OUT0)
    assert "prebuilt" in backend.describe().details["cache"]
    fake_tensorrt.__version__ = "10.9.0"
    with pytest.raises(UserError, match="give the ONNX model instead"):
        open_backend(fake_tensorrt, engine, tmp_path / "unused")


def test_errors_are_clear(fake_tensorrt, model, make_yoloseg_onnx, tmp_path):
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"not a model")
    with pytest.raises(UserError, match="cannot parse .*broken.onnx: ModelImporter"):
        open_backend(fake_tensorrt, broken, tmp_path)
    fake_tensorrt.fail_build = True
    with pytest.raises(RuntimeError, match="failed to build an engine"):
        open_backend(fake_tensorrt, model, tmp_path)
    assert engines(tmp_path) == []  # nothing half-written is cached
    fake_tensorrt.fail_build = False
    with pytest.raises(UserError, match="dla_core 0 .* 0 DLA cores"):
        open_backend(fake_tensorrt, model, tmp_path, dla_core=0)
    with pytest.raises(UserError, match="DLA .* needs enable_fp16"):
        open_backend(fake_tensorrt, model, tmp_path, dla_core=0, enable_fp16=False)
    with pytest.raises(ValueError, match="cannot build it for"):
        open_backend(fake_tensorrt, model, tmp_path, input_shape=(1, 3, 64, 64))
    with pytest.raises(UserError, match="does not exist"):
        open_backend(fake_tensorrt, tmp_path / "missing.onnx", tmp_path)
    backend = open_backend(fake_tensorrt, model, tmp_path)
    with pytest.raises(ValueError, match=r"expects shape \(1, 3, 32, 40\)"):
        backend.run(np.zeros((1, 3, 32, 41), np.float32))
    fake_tensorrt.__version__ = "8.4.3"
    with pytest.raises(BackendUnavailable, match="too old"):
        open_backend(fake_tensorrt, model, tmp_path)


def test_dla_build_sets_the_core_with_gpu_fallback(fake_tensorrt, model, tmp_path):
    fake_tensorrt.num_dla_cores = 2
    open_backend(fake_tensorrt, model, tmp_path, dla_core=1)
    build = next(c for c in fake_tensorrt.calls if c[0] == "build")[1]
    assert build["dla_core"] == 1


def test_availability_reason_without_tensorrt(monkeypatch):
    monkeypatch.setitem(sys.modules, "tensorrt", None)
    monkeypatch.setattr("importlib.util.find_spec", lambda name, *a: None)
    assert "tensorrt module is not installed" in TensorRTBackend.unavailable_reason()
    with pytest.raises(BackendUnavailable, match="cannot be imported"):
        TensorRTBackend().load("model.onnx")


def test_config_is_validated():
    with pytest.raises(ValueError, match="max_batch_size"):
        TensorRTConfig(max_batch_size=0)
    with pytest.raises(ValueError, match="cuda_memory"):
        TensorRTConfig(cuda_memory="opencl")
    with pytest.raises(ValueError, match="max_workspace_size"):
        TensorRTConfig(max_workspace_size=10)
