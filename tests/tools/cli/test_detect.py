"""`predrel detect` on image folders, videos and episode folders (scene model from conftest)."""
import json

import cv2
import numpy as np
import pytest

from predrel_ros.core.frame import CameraIntrinsics, Frame
from predrel_ros.perception.entity_json import frame_from_json
from predrel_ros.sources.dataset import EpisodeMeta, write_episode
from predrel_ros.tools.cli import main as cli

BACKEND = ["--backend", "onnxruntime", "--device", "cpu"]


def test_image_folder_gives_json_overlays_and_summary(scene_model_dir, tmp_path, capsys):
    images = tmp_path / "images"
    images.mkdir()
    for i in range(3):
        cv2.imwrite(str(images / f"img{i}.png"), np.full((240, 320, 3), 40 * i, np.uint8))
    out = tmp_path / "out"
    assert cli.main(["detect", "--input", str(images), "--out", str(out), "--model", str(scene_model_dir)]
                    + BACKEND) == 0
    assert sorted(p.name for p in (out / "entities").iterdir()) == ["000000.json", "000001.json", "000002.json"]
    assert len(list((out / "overlays").glob("*.png"))) == 3
    entities = frame_from_json(json.loads((out / "entities" / "000002.json").read_text()))
    assert sorted(e.label for e in entities) == ["bowl", "cube", "hand"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["frames"] == 3 and summary["perception"]["backend"] == "onnxruntime"
    assert summary["detections_per_label"] == {"cube": 3, "bowl": 3, "hand": 3}
    assert summary["frame_time"]["n"] == 3 and summary["track_ids_issued"] == 3
    assert "3 frames" in capsys.readouterr().out


def test_video_with_max_frames_and_a_config_file(scene_model_dir, tmp_path):
    video = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 10, (320, 240))
    for i in range(6):
        writer.write(np.full((240, 320, 3), 20 * i, np.uint8))
    writer.release()
    config = tmp_path / "perception.yaml"
    config.write_text(f"perception:\n  model: {scene_model_dir}\n  decoder:\n    score_threshold: 0.75\n")
    out = tmp_path / "out"
    assert cli.main(["detect", "--input", str(video), "--out", str(out), "--config", str(config),
                     "--max-frames", "4", "--no-overlays"] + BACKEND) == 0
    assert len(list((out / "entities").glob("*.json"))) == 4 and not (out / "overlays").exists()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["detections_per_label"] == {"cube": 4, "bowl": 4}  # the 0.7 hand is below 0.75


def test_episode_with_depth_gives_3d_points(scene_model_dir, tmp_path):
    camera = CameraIntrinsics(320, 240, 300.0, 300.0, 160.0, 120.0)
    depth = np.full((240, 320), 0.9, np.float32)
    frames = [Frame(index=i, stamp_ns=i * 100_000_000, rgb=np.zeros((240, 320, 3), np.uint8), depth=depth,
                    camera=camera) for i in range(2)]
    meta = EpisodeMeta(name="ep0", num_frames=2, fps=10.0, width=320, height=240, camera=camera)
    episode = write_episode(tmp_path / "ep0", meta, frames)
    out = tmp_path / "out"
    assert cli.main(["detect", "--input", str(episode), "--out", str(out), "--model", str(scene_model_dir),
                     "--no-overlays"] + BACKEND) == 0
    cube = next(e for e in frame_from_json(json.loads((out / "entities" / "000001.json").read_text()))
                if e.label == "cube")
    assert cube.point3d[2] == pytest.approx(0.9, abs=1e-3)


def test_rosbag_input(scene_model_dir, tmp_path):
    from predrel_ros.sources.bag import write_bag

    frames = [Frame(index=i, stamp_ns=(i + 1) * 100_000_000, rgb=np.zeros((240, 320, 3), np.uint8)) for i in range(3)]
    bag = write_bag(tmp_path / "run", frames)
    out = tmp_path / "out"
    assert cli.main(["detect", "--input", str(bag), "--out", str(out), "--model", str(scene_model_dir),
                     "--no-overlays"] + BACKEND) == 0
    assert json.loads((out / "summary.json").read_text())["frames"] == 3


def test_compressed_bag_of_another_driver_detects_without_renaming(scene_model_dir, tmp_path, capsys):
    """/camera/image_raw/compressed (jpeg) found by type; a second image topic needs --image-topic."""
    from predrel_ros.sources.bag import BagTopics, BagWriter

    frames = [Frame(index=i, stamp_ns=(i + 1) * 100_000_000, rgb=np.zeros((240, 320, 3), np.uint8)) for i in range(2)]
    topics = BagTopics(color="/camera/image_raw/compressed", depth=None, color_info=None, depth_info=None)
    with BagWriter(tmp_path / "run", topics=topics, image_codec="jpeg") as writer:
        for frame in frames:
            writer.write(frame)
    out = tmp_path / "out"
    assert cli.main(["detect", "--input", str(tmp_path / "run"), "--out", str(out), "--model", str(scene_model_dir),
                     "--no-overlays"] + BACKEND) == 0
    assert json.loads((out / "summary.json").read_text())["frames"] == 2
    with BagWriter(tmp_path / "two", topics=topics, image_codec="jpeg") as writer:
        writer.write(frames[0])
        writer.topics = BagTopics(color="/other/image_raw", depth=None, color_info=None, depth_info=None)
        writer.image_codec = "raw"  # a second camera, raw, in the same bag
        writer.write(frames[1])
    assert cli.main(["detect", "--input", str(tmp_path / "two"), "--out", str(out), "--model", str(scene_model_dir),
                     "--no-overlays"] + BACKEND) == 1
    assert ("several colour image topics: /camera/image_raw/compressed (CompressedImage), /other/image_raw (Image)"
            in capsys.readouterr().err)
    assert cli.main(["detect", "--input", str(tmp_path / "two"), "--out", str(tmp_path / "o2"), "--model",
                     str(scene_model_dir), "--no-overlays", "--image-topic", "/other/image_raw"] + BACKEND) == 0
    assert json.loads((tmp_path / "o2" / "summary.json").read_text())["frames"] == 1


def test_errors_are_reported_without_traceback(scene_model_dir, tmp_path, capsys):
    assert cli.main(["detect", "--input", str(tmp_path / "missing.mp4"), "--out", str(tmp_path / "o"),
                     "--model", str(scene_model_dir)] + BACKEND) == 1
    assert "no such file" in capsys.readouterr().err
    bad = tmp_path / "bad.yaml"
    bad.write_text("tracker:\n  lost_bufer: 3\n")
    assert cli.main(["detect", "--input", str(tmp_path), "--out", str(tmp_path / "o"), "--config", str(bad)]) == 1
    assert "unknown key" in capsys.readouterr().err


def test_a_dataset_imported_from_a_robot_bag_detects_per_episode(scene_model_dir, tmp_path):
    """`predrel dataset import` of a compressed bag on a driver's own topics, then detect on the
    dataset root: one output folder per episode, every frame."""
    from predrel_ros.sources.bag import BagTopics, BagWriter

    topics = BagTopics(color="/head_camera/rgb/image_raw/compressed", depth=None,
                       color_info="/head_camera/rgb/camera_info", depth_info=None)
    camera = CameraIntrinsics(width=320, height=240, fx=250.0, fy=250.0, cx=160.0, cy=120.0)
    with BagWriter(tmp_path / "robot_run", topics=topics, image_codec="png") as writer:
        for i in range(3):
            writer.write(Frame(index=i, stamp_ns=(i + 1) * 100_000_000, rgb=np.zeros((240, 320, 3), np.uint8),
                               camera=camera))
    assert cli.main(["dataset", "import", str(tmp_path / "robot_run"), "--out", str(tmp_path / "data")]) == 0
    out = tmp_path / "out"
    assert cli.main(["detect", "--input", str(tmp_path / "data"), "--out", str(out), "--model", str(scene_model_dir),
                     "--no-overlays"] + BACKEND) == 0
    assert json.loads((out / "robot_run" / "summary.json").read_text())["frames"] == 3
