import hashlib
import json

import numpy as np
import pytest

from predrel_ros.core.errors import UserError
from predrel_ros.core.frame import Frame
from predrel_ros.sources.dataset import (
    EpisodeReader,
    EpisodeWriter,
    decode_depth_mm,
    encode_depth_mm,
    open_dataset,
    write_episode,
    write_manifest,
)


def test_episode_round_trip(tmp_path, synthetic):
    frames = synthetic.make_frames()
    write_episode(tmp_path / "ep", synthetic.make_meta(), frames)
    episode = EpisodeReader(tmp_path / "ep")
    assert episode.meta.template == "pick_and_place" and len(episode) == 4
    read = list(episode.frames())
    for got, want in zip(read, frames):
        synthetic.assert_same_ground_truth(got, want, depth_atol=0.0006)
        assert got.attributes == want.attributes
    assert episode.frame_attribute("script_primitive") == ["approach", "lift", "approach", "lift"]
    assert episode.primitives() == ["approach", "grasp", "approach", "grasp"]


def test_predicate_codes_give_one_stream_per_key(tmp_path, synthetic):
    write_episode(tmp_path / "ep", synthetic.make_meta(), synthetic.make_frames())
    codes = EpisodeReader(tmp_path / "ep").predicate_codes()
    assert set(codes) == {("contact", 1, 3), ("static", 3, 1), ("active_hand", 1, -1)}
    assert codes[("contact", 1, 3)].tolist() == [0, 1, 0, 1]
    assert codes[("static", 3, 1)].tolist() == [3, 3, 3, 3]


def test_ground_truth_files_are_byte_identical(tmp_path, synthetic):
    for name in ("a", "b"):
        write_episode(tmp_path / name, synthetic.make_meta(), synthetic.make_frames())
    for relative in ("ground_truth.npz", "meta.json", "rgb/000002.png", "depth/000002.png"):
        digests = {hashlib.sha256((tmp_path / name / relative).read_bytes()).hexdigest() for name in "ab"}
        assert len(digests) == 1, relative


def test_frames_without_images_skip_png_reads(tmp_path, synthetic):
    write_episode(tmp_path / "ep", synthetic.make_meta(), synthetic.make_frames())
    (tmp_path / "ep" / "rgb" / "000001.png").unlink()
    frame = EpisodeReader(tmp_path / "ep").frame(1, images=False)
    assert frame.depth is None and frame.rgb.shape == (48, 64, 3) and frame.entities
    with pytest.raises(UserError, match="missing or unreadable"):
        EpisodeReader(tmp_path / "ep").frame(1)


def test_writer_refuses_out_of_order_and_wrong_count(tmp_path, synthetic):
    frames = synthetic.make_frames()
    writer = EpisodeWriter(tmp_path / "ep", synthetic.make_meta())
    with pytest.raises(ValueError, match="expected frame 0"):
        writer.write(frames[1])
    writer.write(frames[0])
    with pytest.raises(ValueError, match="meta says 4 frames"):
        writer.close()


def test_depth_millimetre_encoding():
    depth = np.array([[0.0, np.nan, 0.5004, 70.0], [1.0, -1.0, 65.535, 0.0004]], np.float32)
    encoded = encode_depth_mm(depth)
    assert encoded.tolist() == [[0, 0, 500, 0], [1000, 0, 65535, 0]]
    decoded = decode_depth_mm(encoded)
    assert np.isnan(decoded[0, 0]) and decoded[0, 2] == pytest.approx(0.5)


def test_dataset_manifest_and_splits(tmp_path, synthetic):
    for index, _split in enumerate(("train", "train", "test")):
        meta = synthetic.make_meta(2, name=f"ep{index}")
        write_episode(tmp_path / "episodes" / f"ep{index}", meta, synthetic.make_frames(2))
    write_manifest(tmp_path, {"episodes": [{"name": f"ep{i}", "split": s}
                                           for i, s in enumerate(("train", "train", "test"))]})
    dataset = open_dataset(tmp_path)
    assert dataset.splits == {"train": ["ep0", "ep1"], "val": [], "test": ["ep2"]}
    assert [e.meta.name for e in dataset.episodes(split="test")] == ["ep2"]
    assert len(dataset) == 3
    with pytest.raises(UserError, match="unknown split"):
        dataset.episodes(split="training")
    with pytest.raises(UserError, match="no episode"):
        dataset.episode("missing")


def test_open_dataset_errors_name_the_problem(tmp_path, synthetic):
    with pytest.raises(UserError, match="not a dataset folder"):
        open_dataset(tmp_path)
    (tmp_path / "manifest.json").write_text(json.dumps({"format": "predrel_ros.dataset", "format_version": 99,
                                                        "episodes": []}))
    with pytest.raises(UserError, match="newer"):
        open_dataset(tmp_path)


def test_frames_without_ground_truth_round_trip(tmp_path, synthetic):
    frames = [Frame(index=i, stamp_ns=i, rgb=f.rgb) for i, f in enumerate(synthetic.make_frames(2))]
    meta = synthetic.make_meta(2)
    write_episode(tmp_path / "ep", meta, frames)
    read = list(EpisodeReader(tmp_path / "ep").frames())
    assert read[0].entities is None and read[0].predicates is None and read[0].primitive is None
    assert read[1].depth is None


def test_bag_only_episodes_point_to_their_bag(tmp_path):
    write_manifest(tmp_path, {"episodes": [{"name": "ep0", "split": "train", "paths": {"mcap": "bags/ep0"}}]})
    with pytest.raises(UserError, match="not written as a dataset folder.*bags/ep0"):
        open_dataset(tmp_path).episode("ep0")
