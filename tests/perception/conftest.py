"""Fixtures of the perception tests (tests/helpers/model_builders.py)."""
from model_builders import fake_tensorrt, make_constant_onnx, make_yoloseg_onnx, scene_model_dir, yolo  # noqa: F401
