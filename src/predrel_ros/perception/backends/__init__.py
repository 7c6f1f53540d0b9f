"""Inference backends behind one interface (base.py): TensorRT, ONNX Runtime, PyTorch."""
from predrel_ros.perception.backends.base import BackendDescription, BackendUnavailable, InferenceBackend
from predrel_ros.perception.backends.selection import AUTO_ORDER, BACKENDS, BackendConfig, create_backend, model_files

__all__ = ["AUTO_ORDER", "BACKENDS", "BackendConfig", "BackendDescription", "BackendUnavailable",
           "InferenceBackend", "create_backend", "model_files"]
