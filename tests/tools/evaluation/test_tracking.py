import json

import numpy as np
import pytest

from predrel_ros.tools.cli import main as cli
from predrel_ros.core.entities import MANIPULATED_OBJECT, Entity
from predrel_ros.sources.dataset import EpisodeMeta, write_episode, write_manifest
from predrel_ros.core.frame import Frame
from predrel_ros.tools.evaluation.synthetic_tracks import SyntheticSceneConfig, synthetic_episode
from predrel_ros.tools.evaluation.tracking import (Condition, conditions, evaluate_sequence,
                                                        ground_truth_detector)

CONFIG = SyntheticSceneConfig(frames=60)


def frames_of(episode):
    return [(t, entities, CONFIG.height, CONFIG.width, None) for t, entities in enumerate(episode)]


def test_synthetic_episodes_are_deterministic_and_well_formed():
    a, b = synthetic_episode(3, CONFIG), synthetic_episode(3, CONFIG)
    assert len(a) == 60 and all(len(f) == 6 for f in a)
    for fa, fb in zip(a, b):
        for ea, eb in zip(fa, fb):
            np.testing.assert_array_equal(ea.box, eb.box)
            assert ea.visibility == eb.visibility
    boxes = np.array([e.box for f in a for e in f])
    assert boxes.min() >= 0 and boxes[:, 2].max() <= 320 and boxes[:, 3].max() <= 240
    assert all(f[0].visibility == 1.0 for f in a)  # the frontmost entity is never covered
    assert min(e.visibility for f in a for e in f) < 1.0  # something gets occluded
    assert not np.array_equal(synthetic_episode(4, CONFIG)[0][0].box, a[0][0].box)


def test_clean_ground_truth_is_tracked_almost_perfectly_and_noise_hurts():
    episode = synthetic_episode(0, CONFIG)
    clean = evaluate_sequence(frames_of(episode), Condition("none", 0), 0, ground_truth_detector)
    noisy = evaluate_sequence(frames_of(episode), Condition("detection_noise", 5), 0, ground_truth_detector)
    assert clean.idf1 > 0.95 and clean.id_switches <= 1
    assert noisy.idf1 < clean.idf1 and noisy.misses > clean.misses


def test_dropped_frames_are_not_scored():
    episode = synthetic_episode(1, CONFIG)
    clean = evaluate_sequence(frames_of(episode), Condition("none", 0), 0, ground_truth_detector)
    dropped = evaluate_sequence(frames_of(episode), Condition("frame_drop", 5), 0, ground_truth_detector)
    assert dropped.frames < clean.frames == 60


def test_conditions_put_clean_first_and_skip_severity_zero_per_kind():
    assert conditions(["detection_noise", "frame_drop"], [0, 2]) == [
        Condition("none", 0), Condition("detection_noise", 2), Condition("frame_drop", 2)]
    assert conditions(["frame_drop"], [3]) == [Condition("frame_drop", 3)]


def test_command_on_synthetic_tracks_writes_json_and_plot(tmp_path, capsys):
    out = tmp_path / "idf1.json"
    assert cli.main(["track-eval", "--synthetic", "2", "--frames", "40", "--severities", "0", "4",
                     "--kinds", "detection_noise", "--out", str(out)]) == 0
    document = json.loads(out.read_text())
    assert [(r["kind"], r["severity"]) for r in document["results"]] == [("none", 0), ("detection_noise", 4)]
    assert set(document["results"][0]["episodes"]) == {"synthetic-0", "synthetic-1"}
    assert out.with_suffix(".png").is_file()
    assert "IDF1" in capsys.readouterr().out


def test_command_on_a_dataset_with_ground_truth(tmp_path, capsys):
    root = tmp_path / "data"
    names = []
    for n in range(2):
        frames = []
        for t in range(20):
            entities = [Entity(id=1, label="cube", role=MANIPULATED_OBJECT, box=[10 + 3 * t, 40, 40 + 3 * t, 70]),
                        Entity(id=2, label="bowl", role="container", box=[200, 100, 260, 150])]
            frames.append(Frame(index=t, stamp_ns=t * 10**8, rgb=np.zeros((240, 320, 3), np.uint8), entities=entities))
        meta = EpisodeMeta(name=f"ep{n}", num_frames=20, fps=10.0, width=320, height=240, split="test")
        write_episode(root / "episodes" / f"ep{n}", meta, frames)
        names.append(f"ep{n}")
    write_manifest(root, {"episodes": [{"name": name, "split": "test"} for name in names]})
    out = tmp_path / "scores.json"
    assert cli.main(["track-eval", "--dataset", str(root), "--split", "test", "--severities", "0",
                     "--out", str(out)]) == 0
    (clean,) = json.loads(out.read_text())["results"]
    assert clean["idf1"] == 1.0 and clean["id_switches"] == 0 and clean["ground_truth"] == 80


def test_command_with_a_model_detecting_on_the_images(tmp_path, scene_model_dir):
    # the scene model sees a cube, a bowl and a hand at fixed places; the ground truth agrees
    truth = [(1, "cube", MANIPULATED_OBJECT, [80, 70, 120, 130]), (2, "bowl", "container", [220, 130, 280, 170]),
             (3, "hand", "right_hand", [25, 185, 55, 215])]
    frames = [Frame(index=t, stamp_ns=t * 10**8, rgb=np.zeros((240, 320, 3), np.uint8),
                    entities=[Entity(id=i, label=label, role=role, box=box) for i, label, role, box in truth])
              for t in range(6)]
    root = tmp_path / "data"
    write_episode(root / "episodes" / "ep0", EpisodeMeta(name="ep0", num_frames=6, fps=10.0, width=320, height=240,
                                                         split="test"), frames)
    write_manifest(root, {"episodes": [{"name": "ep0", "split": "test"}]})
    out = tmp_path / "scores.json"
    assert cli.main(["track-eval", "--dataset", str(root), "--model", str(scene_model_dir), "--severities", "0",
                     "--out", str(out)]) == 0
    document = json.loads(out.read_text())
    (clean,) = document["results"]
    assert document["detector"] == str(scene_model_dir)
    assert clean["idf1"] == 1.0 and clean["ground_truth"] == 18 and clean["id_switches"] == 0


def test_bad_arguments(capsys):
    assert cli.main(["track-eval", "--synthetic", "1", "--severities", "7"]) == 1
    assert "0..5" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["track-eval"])


def test_command_on_the_controlled_set(controlled_dataset, tmp_path):
    out = tmp_path / "controlled.json"
    assert cli.main(["track-eval", "--dataset", str(controlled_dataset), "--severities", "0", "5",
                     "--kinds", "detection_noise", "--out", str(out)]) == 0
    clean, noisy = json.loads(out.read_text())["results"]
    assert len(clean["episodes"]) == 3 and clean["ground_truth"] > 100
    assert clean["idf1"] > 0.9 and noisy["idf1"] < clean["idf1"]
