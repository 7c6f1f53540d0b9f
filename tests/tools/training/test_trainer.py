import json

import numpy as np
import pytest

from predrel_ros.tools.training.data import AugmentConfig, CompactImage
from predrel_ros.tools.training.network import NetworkConfig
from predrel_ros.tools.training.trainer import TrainConfig, load_checkpoint, train

TINY = dict(stage_widths=(8, 16, 16, 32, 32), stage_depths=(0, 1, 1, 1, 1), neck_width=32, head_width=32)


def test_one_epoch_writes_checkpoints_and_history(tmp_path, make_frames, synthetic_classes):
    images = [CompactImage(f) for f in make_frames(8, seed=0)]
    config = TrainConfig(epochs=1, batch_size=4, warmup_iterations=1, validate_every=1)
    result = train(images, images[:2], synthetic_classes, tmp_path, config,
                   NetworkConfig(num_classes=3, **TINY), progress=False)
    assert result.best_checkpoint.is_file() and (tmp_path / "last.pt").is_file()
    history = json.loads((tmp_path / "history.json").read_text())
    assert history[0]["epoch"] == 1 and np.isfinite(history[0]["loss"]) and "validation" in history[0]
    net, names, data = load_checkpoint(result.best_checkpoint)
    assert names == list(synthetic_classes) and net.config.num_classes == 3
    assert data["train_config"]["batch_size"] == 4


def test_training_is_reproducible_given_the_seed(tmp_path, make_frames, synthetic_classes):
    images = [CompactImage(f) for f in make_frames(8, seed=1)]
    config = TrainConfig(epochs=1, batch_size=4, warmup_iterations=1, validate_every=1, seed=7)
    runs = [train(images, [], synthetic_classes, tmp_path / str(i), config, NetworkConfig(num_classes=3, **TINY),
                  progress=False).history[0]["loss"] for i in range(2)]
    assert runs[0] == runs[1]


def test_refuses_too_few_images_and_mismatched_classes(tmp_path, make_frames, synthetic_classes):
    images = [CompactImage(f) for f in make_frames(2, seed=0)]
    with pytest.raises(ValueError, match="fewer than one batch"):
        train(images, [], synthetic_classes, tmp_path, TrainConfig(batch_size=4), progress=False)
    with pytest.raises(ValueError, match="class names"):
        train(images, [], synthetic_classes, tmp_path, TrainConfig(batch_size=2), NetworkConfig(num_classes=2),
              progress=False)
    with pytest.raises(ValueError, match="multiples of 32"):
        TrainConfig(input_height=250)


@pytest.mark.slow
def test_learns_synthetic_shapes(tmp_path, make_frames, synthetic_classes):
    """A few hundred steps on synthetic scenes reach high box AP50 and mask IoU on unseen scenes."""
    train_images = [CompactImage(f) for f in make_frames(96, seed=2, max_objects=2)]
    validation = [CompactImage(f) for f in make_frames(16, seed=3, max_objects=2)]
    config = TrainConfig(epochs=16, batch_size=8, warmup_iterations=30, validate_every=4, learning_rate=3e-3,
                         augment=AugmentConfig(scale_jitter=0.1, translate=0.05))
    result = train(train_images, validation, synthetic_classes, tmp_path, config,
                   NetworkConfig(num_classes=3, **TINY), progress=False)
    assert result.best_validation["box_ap50"] > 0.8
    assert result.best_validation["mean_mask_iou"] > 0.7
