"""Evaluation data from bags of any camera driver: the camera topics are checked when the data is
resolved (before a sweep) and travel with each episode to the process that loads it."""
import pickle

import numpy as np
import pytest

from predrel_ros.core.errors import UserError
from predrel_ros.core.frame import Frame
from predrel_ros.sources.bag import BagTopics, BagWriter, CameraTopics
from predrel_ros.tools.evaluation.data import load_episode, resolve_data


def two_camera_bag(path):
    rng = np.random.default_rng(2)
    frames = [Frame(index=k, stamp_ns=(k + 1) * 10_000_000, rgb=rng.integers(0, 256, (8, 10, 3), dtype=np.uint8))
              for k in range(3)]
    with BagWriter(path, topics=BagTopics(color="/left/image_raw/compressed", depth=None, color_info=None,
                                          depth_info=None), image_codec="png") as writer:
        for frame in frames:
            writer.write(frame)
        writer.topics = BagTopics(color="/right/image_raw", depth=None, color_info=None, depth_info=None)
        writer.image_codec = "raw"
        writer.write(frames[0])
    return frames


def test_an_ambiguous_bag_fails_when_resolved_and_a_chosen_topic_loads(tmp_path):
    frames = two_camera_bag(tmp_path / "bag")
    with pytest.raises(UserError, match="several colour image topics"):
        resolve_data(tmp_path / "bag")
    data = resolve_data(tmp_path / "bag", camera=CameraTopics(image="/left/image_raw/compressed"))
    [source] = data.split("test")
    source = pickle.loads(pickle.dumps(source))  # as a worker process receives it
    episode = load_episode(source)
    assert episode.num_frames == 3
    for got, want in zip(episode.frames, frames):
        np.testing.assert_array_equal(got.rgb, want.rgb)
    folder = resolve_data(tmp_path, camera=CameraTopics(image="/right/image_raw"))
    assert load_episode(folder.split("test")[0]).num_frames == 1
