import json

import numpy as np
import pytest

from predrel_ros.core.entities import MANIPULATED_OBJECT, Entity
from predrel_ros.core.frame import Frame
from predrel_ros.sources.dataset import EpisodeMeta, write_episode, write_manifest
from predrel_ros.tools.cli import main as cli


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
