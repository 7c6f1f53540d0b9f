import cv2
import numpy as np
import pytest

from predrel_ros.core.errors import UserError
from predrel_ros.sources.bag import write_bag
from predrel_ros.sources.dataset import write_episode
from predrel_ros.sources.open_source import open_frames, source_kind
from predrel_ros.sources.video import ImageFolderReader, VideoReader


def test_image_folder_in_name_order(tmp_path):
    images = [np.full((8, 10, 3), value, np.uint8) for value in (10, 200, 90)]
    for name, image in zip(("b.png", "a.png", "c.jpg"), images):
        cv2.imwrite(str(tmp_path / name), image)
    (tmp_path / "notes.txt").write_text("ignored")
    frames = list(ImageFolderReader(tmp_path, fps=10).frames())
    assert [int(f.rgb[0, 0, 0]) for f in frames[:2]] == [200, 10]
    assert [f.stamp_ns for f in frames] == [0, 100_000_000, 200_000_000]
    assert frames[0].entities is None and frames[0].source == "images"


def test_video_file_frames(tmp_path):
    path = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 15.0, (32, 24))
    assert writer.isOpened(), "OpenCV build lacks the MJPG writer"
    for value in range(5):
        frame = np.zeros((24, 32, 3), np.uint8)
        frame[..., 2] = value * 50  # red in BGR
        writer.write(frame)
    writer.release()
    reader = VideoReader(path)
    assert reader.fps == pytest.approx(15.0)
    frames = list(reader.frames())
    assert len(frames) == 5 and frames[4].rgb.shape == (24, 32, 3)
    assert abs(int(frames[4].rgb[12, 16, 0]) - 200) < 8  # red channel first after conversion
    assert frames[1].stamp_ns == pytest.approx(1e9 / 15, abs=1)


def test_sources_are_detected(tmp_path, synthetic):
    write_episode(tmp_path / "ep", synthetic.make_meta(2), synthetic.make_frames(2))
    write_bag(tmp_path / "bag", synthetic.make_frames(2))
    assert source_kind(tmp_path / "ep") == "episode"
    assert source_kind(tmp_path / "bag") == "bag"
    assert source_kind(next((tmp_path / "bag").glob("*.mcap"))) == "bag"
    assert source_kind(tmp_path / "ep" / "rgb") == "images"
    assert [f.source for f in open_frames(tmp_path / "bag")] == ["bag", "bag"]
    assert len(list(open_frames(tmp_path / "ep"))) == 2
    with pytest.raises(UserError, match="no such file"):
        source_kind(tmp_path / "missing.mp4")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match="not an episode folder"):
        source_kind(tmp_path / "empty")
