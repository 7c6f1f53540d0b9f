import argparse

import pytest

from predrel_ros.core.errors import UserError
from predrel_ros.tools.benchmarks import TARGETS, trust


def test_trust_target_is_registered():
    assert TARGETS["trust"][0] == "predrel_ros.tools.benchmarks.trust"


def test_drawn_frames_paint_every_entity():
    from predrel_ros.tools.benchmarks.core import scripted_scene

    scene = scripted_scene(3, 160, 120)
    frames = trust.drawn_frames(scene, 160, 120)
    assert len(frames) == 3 and frames[0].shape == (120, 160, 3)
    cube = next(e for e in scene[0] if e.id == 3)
    assert len({tuple(pixel) for pixel in frames[0][cube.mask & ~next(e for e in scene[0] if e.id == 1).mask]}) == 1


def test_small_run_reports_every_stage_and_the_whole_monitor():
    result = trust.run(argparse.Namespace(frames=12, repeats=1, width=160, height=120, window=30))
    assert set(result["stages"]) == {"scene_memory", "detection_statistics", "image_quality", "update", "features",
                                     "deviations", "model", "frame"}
    assert all(stage["n"] == 12 and stage["median_ms"] > 0 for stage in result["stages"].values())
    whole = result["monitor"]
    timed = {"image_quality", "update", "report", "monitor", "all", "monitor_cpu", "all_cpu"}
    assert timed <= set(whole) and all(whole[name]["n"] == 12 for name in timed)
    assert whole["estimates_per_frame"] > 50                                    # the scene's many pairs
    assert whole["all"]["min_ms"] >= whole["monitor"]["min_ms"] > 0
    assert result["meets_goal"] == (whole["all"]["median_ms"] <= trust.GOAL_MS)
    assert result["monitor_meets_goal"] == (whole["monitor"]["median_ms"] <= trust.GOAL_MS)
    with pytest.raises(UserError, match="--frames"):
        trust.run(argparse.Namespace(frames=2, repeats=1, width=160, height=120, window=30))
    with pytest.raises(UserError, match="--window 30"):
        trust.run(argparse.Namespace(frames=12, repeats=1, width=160, height=120, window=5))
