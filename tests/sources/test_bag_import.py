"""Bags -> a dataset folder (`predrel dataset import`): a bag of another driver (compressed colour,
compressedDepth png or rvl, its own topic names, no ground truth) and a predrel bag with ground
truth each become an episode whose frames are the bag's, read by the dataset, evaluation and
detection front ends; what the episode format cannot hold is refused and leaves nothing behind."""
import json
from dataclasses import replace

import numpy as np
import pytest

from predrel_ros.core.errors import UserError
from predrel_ros.sources.bag import BagReader, BagTopics, BagWriter, CameraTopics, write_bag
from predrel_ros.sources.bag_import import frame_rate, import_bags
from predrel_ros.sources.dataset import open_dataset
from predrel_ros.sources.open_source import open_frames
from predrel_ros.tools.cli import main as cli

ROBOT_TOPICS = BagTopics(color="/head_camera/rgb/image_raw/compressed",
                         depth="/head_camera/depth/image_raw/compressedDepth",
                         color_info="/head_camera/rgb/camera_info", depth_info="/head_camera/depth/camera_info")


def robot_bag(path, frames, depth_compression="rvl", topics=ROBOT_TOPICS):
    """A bag as a robot records one: png colour and compressedDepth on its own topics, no ground truth."""
    with BagWriter(path, topics=topics, image_codec="png", compressed_depth=depth_compression) as writer:
        for frame in frames:
            writer.write(replace(frame, entities=None, predicates=None, primitive=None))
    return path


@pytest.mark.parametrize("depth_compression", ["png", "rvl"])
def test_a_robot_bag_becomes_an_episode_with_its_frames(tmp_path, synthetic, depth_compression):
    frames = synthetic.make_frames(4)
    bag = robot_bag(tmp_path / "kitchen_run", frames, depth_compression)
    manifest = json.loads(import_bags([bag], tmp_path / "data").read_text())
    entry, = manifest["episodes"]
    assert (entry["name"], entry["split"], entry["num_frames"], entry["depth"], entry["ground_truth"]) == (
        "kitchen_run", "test", 4, True, False)
    assert entry["topics"]["color"] == ROBOT_TOPICS.color and entry["fps"] == pytest.approx(30.0, abs=0.01)
    episode, = open_dataset(tmp_path / "data").episodes("test")
    assert episode.meta.camera == synthetic.camera and (episode.meta.width, episode.meta.height) == (64, 48)
    for got, want in zip(episode.frames(), frames, strict=True):
        assert (got.index, got.stamp_ns) == (want.index, want.stamp_ns)
        np.testing.assert_array_equal(got.rgb, want.rgb)                            # png: exact
        np.testing.assert_allclose(got.depth, want.depth, atol=0.0006, equal_nan=True)  # millimetres
        assert got.entities in (None, [])
    # what predrel detect reads (open_source) is the same episode
    assert [f.stamp_ns for f in open_frames(tmp_path / "data" / "episodes" / "kitchen_run")] == \
        [f.stamp_ns for f in frames]


def test_a_bag_with_ground_truth_keeps_it_and_its_episode_metadata(tmp_path, synthetic):
    frames = synthetic.make_frames(3)
    bag = write_bag(tmp_path / "sim.mcap", frames, meta=synthetic.make_meta(3, name="ep00042"))
    import_bags([bag], tmp_path / "data", split="train")
    dataset = open_dataset(tmp_path / "data")
    episode, = dataset.episodes("train")
    assert episode.meta.name == "sim" and episode.meta.template == "pick_and_place" and episode.meta.seed == 7
    assert dataset.manifest["episodes"][0]["ground_truth"]
    for imported, recorded in zip(episode.frames(), BagReader(bag).frames(), strict=True):
        # (the bag's message sends an empty mask as none, the episode keeps it empty)
        synthetic.assert_same_ground_truth(recorded, imported, depth_atol=0.0006)


def test_the_evaluation_front_end_finds_the_imported_episodes(tmp_path, synthetic):
    from predrel_ros.tools.evaluation.data import resolve_data

    for name in ("run_a", "run_b"):
        robot_bag(tmp_path / "bags" / name, synthetic.make_frames(2))
    import_bags(sorted((tmp_path / "bags").iterdir()), tmp_path / "data")
    data = resolve_data(tmp_path / "data")
    assert [source.name for source in data.split("test")] == ["run_a", "run_b"]


def test_the_cli_names_the_topics_and_lists_the_candidates_when_there_are_several(tmp_path, synthetic, capsys):
    frames = synthetic.make_frames(3)
    with BagWriter(tmp_path / "two_cameras", topics=ROBOT_TOPICS, image_codec="png") as writer:
        writer.write(frames[0])
        writer.topics = BagTopics(color="/wrist/image_raw", depth=None, color_info="/wrist/camera_info",
                                  depth_info=None)
        writer.image_codec = "raw"
        writer.write(replace(frames[1], depth=None))
    assert cli.main(["dataset", "import", str(tmp_path / "two_cameras"), "--out", str(tmp_path / "a")]) == 1
    err = capsys.readouterr().err
    assert "several colour image topics" in err and "/wrist/image_raw (Image)" in err
    assert not (tmp_path / "a").exists()                        # nothing left behind
    assert cli.main(["dataset", "import", str(tmp_path / "two_cameras"), "--out", str(tmp_path / "b"),
                     "--image-topic", "/wrist/image_raw", "--depth-topic", "none", "--max-frames", "1"]) == 0
    assert "two_cameras: 1 frames at 0 fps from color /wrist/image_raw, color_info /wrist/camera_info; with ground " \
        "truth" in capsys.readouterr().err
    episode, = open_dataset(tmp_path / "b").episodes("test")
    np.testing.assert_array_equal(next(episode.frames()).rgb, frames[1].rgb)


def test_what_an_episode_cannot_hold_is_refused_and_leaves_nothing(tmp_path, synthetic):
    frames = synthetic.make_frames(3)
    moved = replace(synthetic.camera, cx=20.0)
    bag = robot_bag(tmp_path / "zoom", [frames[0], frames[1], replace(frames[2], camera=moved)])
    with pytest.raises(UserError, match="camera intrinsics change at frame 2"):
        import_bags([bag], tmp_path / "data")
    assert not (tmp_path / "data").exists()
    with pytest.raises(UserError, match="not an empty folder"):
        import_bags([bag], tmp_path)
    with pytest.raises(UserError, match="several bags would be the episode zoom"):
        import_bags([bag, bag], tmp_path / "twice")
    with pytest.raises(UserError, match="no colour image topic '/nothing'"):
        import_bags([bag], tmp_path / "named", camera=CameraTopics(image="/nothing"))


def test_frame_rate_is_the_median_step():
    assert frame_rate([0, 10**8, 2 * 10**8, 5 * 10**8]) == 10.0
    assert frame_rate([5]) == 0.0


def test_evaluating_the_imported_bags_equals_evaluating_the_dataset_they_were_recorded_from(
        controlled_dataset, tmp_path):
    """The controlled set's train bags imported, then `predrel eval` (oracle perception, one
    degradation): the same summary as on the set's own episode folders."""
    from predrel_ros.core.config_io import write_data
    from predrel_ros.predicates.config import PredicateConfig

    source = open_dataset(controlled_dataset)
    bags = [controlled_dataset / "bags" / name for name in source.names("train")]
    imported = tmp_path / "imported" / controlled_dataset.name          # the same name: the same report title
    assert cli.main(["dataset", "import", *map(str, bags), "--out", str(imported), "--split", "train"]) == 0
    predicates = write_data(tmp_path / "predicates.yaml", {"predicates": PredicateConfig().to_dict()})
    summaries = []
    for data, out in ((controlled_dataset, tmp_path / "original"), (imported, tmp_path / "from_bags")):
        assert cli.main(["eval", "--data", str(data), "--out", str(out), "--perception", "oracle",
                         "--predicate-config", str(predicates), "--split", "train", "--selection-split", "train",
                         "--kinds", "occlusion", "--severities", "3", "--action-model", "committed",
                         "--no-progress"]) == 0
        text = (out / "summary.json").read_text().replace(str(out), "OUT").replace(str(data), "DATA")
        summary = json.loads(text)
        summary.pop("timing")                                             # seconds
        for episode in summary["episodes"]:
            episode.pop("timings")
        summaries.append(summary)
    assert summaries[0]["episodes"] and summaries[0] == summaries[1]
