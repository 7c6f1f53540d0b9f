"""Dataset generation: plan, manifest, both formats, the CLI and the statistics."""
import json

import numpy as np
import pytest

from predrel_ros.core.errors import UserError
from predrel_ros.predicates import vocabulary
from predrel_ros.sources.bag import BagReader
from predrel_ros.sources.dataset import open_dataset
from predrel_ros.tools.cli.main import main as predrel
from predrel_ros.tools.simulator.generate import episode_seed, plan_dataset
from predrel_ros.tools.simulator.stats import dataset_statistics, format_tables, missing_values
from predrel_ros.tools.simulator.templates import TEMPLATES, allocate_frames, build_script


def test_plan_splits_70_15_15_and_cycles_templates():
    plans = plan_dataset(20, seed=3)
    assert [p.split for p in plans].count("train") == 14
    assert [p.split for p in plans].count("val") == 3 and [p.split for p in plans].count("test") == 3
    assert {p.template for p in plans[:10]} == set(TEMPLATES)
    assert plans == plan_dataset(20, seed=3)
    assert plans != plan_dataset(20, seed=4)
    assert [p.seed for p in plans] == [episode_seed(3, i) for i in range(20)]
    assert len({p.seed for p in plans}) == 20
    with pytest.raises(UserError, match="unknown templates"):
        plan_dataset(3, 0, ("juggle",))


def test_frames_are_allocated_by_weight_with_a_minimum():
    phases = build_script("handover", 0).phases
    counts = allocate_frames(phases, 150)
    assert sum(counts) == 150 and min(counts) >= 2
    assert sum(allocate_frames(phases, 2 * len(phases))) == 2 * len(phases)
    with pytest.raises(UserError, match="cannot hold"):
        allocate_frames(phases, 2 * len(phases) - 1)


def test_manifest_describes_the_dataset(controlled_dataset):
    dataset = open_dataset(controlled_dataset)
    manifest = dataset.manifest
    assert len(dataset) == 3 and manifest["seed"] == 0
    assert sorted(e["template"] for e in manifest["episodes"]) == ["handover", "insert", "stack"]
    assert sum(len(names) for names in dataset.splits.values()) == 3
    for entry in manifest["episodes"]:
        episode = dataset.episode(entry["name"])
        assert episode.meta.seed == entry["seed"] and episode.meta.split == entry["split"]
        assert episode.meta.scenario_group == TEMPLATES[entry["template"]][0]
        streams = episode.predicate_codes()
        assert sum(sum(v.values()) for v in entry["predicate_counts"].values()) == len(streams) * len(episode)
        assert (controlled_dataset / entry["paths"]["mcap"]).is_dir()
    totals = manifest["predicate_counts"]
    assert totals["contact"]["T"] == sum(e["predicate_counts"]["contact"].get("T", 0) for e in manifest["episodes"])
    assert manifest["mean_bytes_per_episode"]["folder"] > 0


def test_bag_and_folder_hold_the_same_episode(controlled_dataset):
    """A written bag opens with rosbags and its frames decode to the folder's frames."""
    dataset = open_dataset(controlled_dataset)
    entry = dataset.manifest["episodes"][0]
    folder = list(dataset.episode(entry["name"]).frames())
    reader = BagReader(controlled_dataset / entry["paths"]["mcap"])
    assert reader.meta.name == entry["name"] and reader.meta.camera == folder[0].camera
    bag = list(reader.frames())
    assert len(bag) == len(folder)
    for from_bag, from_folder in zip(bag, folder):
        assert from_bag.stamp_ns == from_folder.stamp_ns and from_bag.primitive == from_folder.primitive
        np.testing.assert_array_equal(from_bag.rgb, from_folder.rgb)
        np.testing.assert_allclose(from_bag.depth, from_folder.depth, atol=0.0005)  # folder: millimetres
        assert [(e.id, e.label, e.role) for e in from_bag.entities] == \
            [(e.id, e.label, e.role) for e in from_folder.entities]
        for a, b in zip(from_bag.entities, from_folder.entities):
            assert (a.mask is None and not b.mask.any()) or np.array_equal(a.mask, b.mask)
            np.testing.assert_allclose(a.box, b.box)
            assert a.visibility == pytest.approx(b.visibility, abs=1e-6)
        assert [(p.key, p.value) for p in from_bag.predicates] == [(p.key, p.value) for p in from_folder.predicates]


def test_stats_command_prints_tables_and_json(controlled_dataset, capsys):
    assert predrel(["dataset", "stats", str(controlled_dataset)]) == 0
    text = capsys.readouterr().out
    assert "value counts" in text and "transitions" in text and "bimanual" in text
    assert predrel(["dataset", "stats", str(controlled_dataset), "--json"]) == 0
    statistics = json.loads(capsys.readouterr().out)
    assert set(statistics) == {"bimanual", "object_container", "object_object", "all"}
    assert statistics["all"]["episodes"] == 3 and statistics["all"]["values"]["static"]["In"] > 0
    assert statistics["all"]["transitions"]["contact"]["N>T"] >= 3


def test_generate_command_refuses_a_used_folder(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("mine")
    assert predrel(["dataset", "generate", "--episodes", "1", "--seed", "0", "--out", str(tmp_path)]) == 1
    assert "not an empty folder" in capsys.readouterr().err
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_generate_refuses_too_few_frames_before_any_work(tmp_path, capsys):
    out = tmp_path / "set"
    assert predrel(["dataset", "generate", "--episodes", "3", "--seed", "0", "--out", str(out),
                    "--frames", "24", "--templates", "insert,handover"]) == 1
    assert "--frames 28" in capsys.readouterr().err
    assert not out.exists()


def test_generate_command_writes_a_folder_dataset(tmp_path, capsys):
    out = tmp_path / "set"
    assert predrel(["dataset", "generate", "--episodes", "2", "--seed", "5", "--out", str(out), "--size", "64x48",
                    "--frames", "30", "--format", "folder", "--templates", "slide,remove", "--quiet"]) == 0
    assert "frames/s" in capsys.readouterr().err
    dataset = open_dataset(out)
    assert sorted(e["template"] for e in dataset.manifest["episodes"]) == ["remove", "slide"]
    assert not (out / "bags").exists()
    frame = dataset.episodes()[0].frame(3)
    assert frame.rgb.shape == (48, 64, 3) and frame.entities and frame.predicates


def test_statistics_find_missing_values(controlled_dataset):
    statistics = dataset_statistics(open_dataset(controlled_dataset))
    missing = missing_values(statistics)
    seen = statistics["all"]["values"]
    assert all(not seen.get(name, {}).get(value) for name, value in missing)
    every = [(n, v) for n in vocabulary.PREDICATES for v in vocabulary.values_of(n)]
    assert len(missing) < len(every)
    assert "missing values:" in format_tables(statistics)


@pytest.mark.slow
def test_thirty_episodes_cover_every_predicate_value(tmp_path):
    """The acceptance check of the controlled set: every value of the vocabulary occurs."""
    from predrel_ros.tools.simulator.config import GenerationConfig
    from predrel_ros.tools.simulator.generate import generate_dataset

    config = GenerationConfig(width=64, height=48, frames=100, formats=("folder",))
    generate_dataset(tmp_path / "set", 30, 1, config, progress=False)
    assert missing_values(dataset_statistics(open_dataset(tmp_path / "set"))) == []
