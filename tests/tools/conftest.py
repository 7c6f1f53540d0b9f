"""Fixtures of the offline-tool tests: the scene model (tests/helpers/model_builders.py) and synthetic
labelled frames and datasets (tests/helpers/training_data.py)."""
from model_builders import scene_model_dir  # noqa: F401
from training_data import frames, make_frames, synthetic_classes, synthetic_dataset  # noqa: F401
