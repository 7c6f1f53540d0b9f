"""Backend selection and the ONNX Runtime / PyTorch backends (run for real on this CPU)."""
import logging

import numpy as np
import pytest

from predrel_ros.core.errors import UserError
from predrel_ros.perception.backends import BackendConfig, BackendUnavailable, create_backend, model_files
from predrel_ros.perception.backends.onnxruntime_backend import OnnxRuntimeBackend
from predrel_ros.perception.backends.tensorrt_backend import TensorRTBackend
from predrel_ros.perception.backends.torch_backend import TorchBackend

OUT0 = np.arange(12, dtype=np.float32).reshape(1, 3, 4)
OUT1 = np.full((1, 32, 2, 2), 0.5, np.float32)


def export_torch(path, dynamic=True):
    """A tiny conv net exported with torch.export (.pt2); returns the module to compare against."""
    import torch

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, 2, 1), torch.nn.ReLU()).eval()
    example = torch.zeros(1, 3, 32, 32)
    shapes = None
    if dynamic:
        shapes = {"input": {2: torch.export.Dim("h", min=16, max=1024), 3: torch.export.Dim("w", min=16, max=1024)}}
    torch.export.save(torch.export.export(net, (example,), dynamic_shapes=shapes), str(path))
    return net


def test_onnxruntime_backend_runs_and_describes(make_yoloseg_onnx):
    path = make_yoloseg_onnx(OUT0, OUT1, names={0: "cube", 1: "bowl", 2: "hand"})
    with OnnxRuntimeBackend(device="cpu", num_threads=1) as backend:
        backend.load(path)
        outputs = backend.run(np.zeros((1, 3, 64, 64), np.float32))
        np.testing.assert_array_equal(outputs["output0"], OUT0)
        assert backend.output_names == ("output0", "output1")
        assert backend.metadata()["names"] == "{0: 'cube', 1: 'bowl', 2: 'hand'}"
        description = backend.describe()
        assert (description.provider, description.device, description.precision) == \
            ("CPUExecutionProvider", "cpu", "fp32")
        assert description.details["threads"] == 1
        options = backend._session.get_session_options()  # idle threads sleep: the cores are shared
        assert options.intra_op_num_threads == 1 and options.inter_op_num_threads == 1
        assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
        with pytest.raises(ValueError, match=r"expects shape \(\?, 3, \?, \?\)"):
            backend.run(np.zeros((1, 4, 64, 64), np.float32))


def test_onnxruntime_cuda_without_the_provider_is_refused(make_yoloseg_onnx):
    with pytest.raises(BackendUnavailable, match="no CUDAExecutionProvider"):
        OnnxRuntimeBackend(device="cuda:0").load(make_yoloseg_onnx(OUT0, OUT1))


def test_onnxruntime_bad_model_is_a_user_error(tmp_path):
    (tmp_path / "bad.onnx").write_bytes(b"nope")
    with pytest.raises(UserError, match="cannot load"):
        OnnxRuntimeBackend().load(tmp_path / "bad.onnx")


def test_torch_backend_runs_exported_programs_with_dynamic_sizes(tmp_path):
    import torch

    net = export_torch(tmp_path / "model.pt2")
    with TorchBackend(device="cpu") as backend:
        backend.load(tmp_path / "model.pt2")
        assert backend.input_shape == (1, 3, None, None)
        batch = np.random.default_rng(0).random((1, 3, 48, 64), dtype=np.float32)
        outputs = backend.run(batch)
        assert list(outputs) == ["output0"]
        np.testing.assert_allclose(outputs["output0"], net(torch.from_numpy(batch)).detach().numpy(), atol=1e-6)
        assert backend.describe().precision == "fp32"


def test_torch_backend_fp16_on_cpu_warns_and_runs_fp32(tmp_path, caplog):
    export_torch(tmp_path / "model.pt2", dynamic=False)
    caplog.set_level(logging.WARNING)
    with TorchBackend(device="cpu", enable_fp16=True) as backend:
        backend.load(tmp_path / "model.pt2")
        assert backend.describe().precision == "fp32" and "fp16 asked for" in caplog.text
        with pytest.raises(ValueError, match="expects shape"):
            backend.run(np.zeros((1, 3, 48, 64), np.float32))


def test_torch_backend_refuses_cuda_without_a_gpu(tmp_path):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this check is about machines without a GPU")
    export_torch(tmp_path / "model.pt2")
    with pytest.raises(BackendUnavailable, match="no CUDA device"):
        TorchBackend(device="cuda").load(tmp_path / "model.pt2")


def test_model_files_for_a_file_are_that_file_and_a_directory_offers_each_kind(tmp_path, make_yoloseg_onnx):
    onnx = make_yoloseg_onnx(OUT0, OUT1)
    export_torch(tmp_path / "model.pt2")
    (tmp_path / "other.onnx").write_bytes(onnx.read_bytes())
    assert model_files(onnx) == {"tensorrt": onnx, "onnxruntime": onnx}  # never the model.pt2 beside it
    # model.* comes first in a directory
    assert model_files(tmp_path) == {"tensorrt": onnx, "onnxruntime": onnx, "pytorch": tmp_path / "model.pt2"}
    with pytest.raises(UserError, match="does not exist"):
        model_files(tmp_path / "missing")


def test_auto_prefers_tensorrt_then_onnxruntime_then_pytorch_and_logs_why(tmp_path, make_yoloseg_onnx,
                                                                         caplog, fake_tensorrt, monkeypatch):
    onnx = make_yoloseg_onnx(OUT0, OUT1)
    export_torch(tmp_path / "model.pt2")
    caplog.set_level(logging.INFO)
    monkeypatch.setattr(TensorRTBackend, "unavailable_reason", classmethod(lambda cls: None))
    backend, path = create_backend(BackendConfig(), onnx)
    assert isinstance(backend, TensorRTBackend) and path == onnx
    monkeypatch.setattr(TensorRTBackend, "unavailable_reason", classmethod(lambda cls: "no GPU here"))
    backend, path = create_backend(BackendConfig(), onnx)
    assert isinstance(backend, OnnxRuntimeBackend)
    assert "chose onnxruntime" in caplog.text and "tensorrt skipped: no GPU here" in caplog.text
    monkeypatch.setattr(OnnxRuntimeBackend, "unavailable_reason", classmethod(lambda cls: "not installed"))
    backend, path = create_backend(BackendConfig(), tmp_path)   # a folder offers its model.pt2 too
    assert isinstance(backend, TorchBackend) and path == tmp_path / "model.pt2"
    with pytest.raises(BackendUnavailable, match="pytorch skipped: no .pt2.* file at .*model.onnx"):
        create_backend(BackendConfig(), onnx)                    # the file named, or nothing
    onnx.unlink()
    monkeypatch.setattr(TorchBackend, "unavailable_reason", classmethod(lambda cls: "no torch"))
    with pytest.raises(BackendUnavailable, match="no inference backend can run"):
        create_backend(BackendConfig(), tmp_path / "model.pt2")


def test_explicit_backend_without_a_model_file_for_it(tmp_path, make_yoloseg_onnx):
    corrupt = tmp_path / "model.onnx"
    corrupt.write_bytes(b"corrupt")
    export_torch(tmp_path / "model.pt2")  # beside it: not a stand-in for the file named
    with pytest.raises(UserError, match="backend pytorch loads .*pt2.* files; .*model.onnx is a .onnx file"):
        create_backend(BackendConfig(name="pytorch"), corrupt)
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match="has none"):
        create_backend(BackendConfig(name="pytorch"), tmp_path / "empty")
    onnx = make_yoloseg_onnx(OUT0, OUT1)
    backend, path = create_backend(BackendConfig(name="onnxruntime", device="cpu"), onnx)
    assert isinstance(backend, OnnxRuntimeBackend) and path == onnx


@pytest.mark.parametrize("kwargs, message", [({"name": "openvino"}, "backend.name"),
                                             ({"device": "gpu"}, "backend device"),
                                             ({"num_threads": -1}, "num_threads")])
def test_backend_config_is_validated(kwargs, message):
    with pytest.raises(ValueError, match=message):
        BackendConfig(**kwargs)
