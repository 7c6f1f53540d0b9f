import argparse

import pytest

from predrel_ros.core.errors import UserError
from predrel_ros.tools.benchmarks import TARGETS, core


def test_core_target_is_registered():
    assert TARGETS["core"][0] == "predrel_ros.tools.benchmarks.core"


def test_scripted_scene_has_eight_entities_with_full_frame_masks():
    scene = core.scripted_scene(20, 320, 240)
    assert len(scene) == 20
    assert all(len(entities) == 8 for entities in scene)
    assert all(entity.mask.shape == (240, 320) and entity.mask.any() for entity in scene[0])


def test_small_run_reports_every_stage():
    result = core.run(argparse.Namespace(frames=12, repeats=1, width=160, height=120, window=5))
    assert set(result["stages"]) == {"extract_and_confidence", "rolling_metrics", "logic_rules", "trust",
                                     "core_frame", "full_frame"}
    assert all(stage["n"] == 12 and stage["median_ms"] > 0 for stage in result["stages"].values())
    assert result["estimates_per_frame"] > 50
    assert result["core_share_of_camera_period"] == pytest.approx(
        result["stages"]["core_frame"]["median_ms"] / core.CAMERA_PERIOD_MS)
    with pytest.raises(UserError, match="--frames"):
        core.run(argparse.Namespace(frames=2, repeats=1, width=160, height=120, window=5))
