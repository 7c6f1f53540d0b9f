from pathlib import Path

import model_builders
import pytest

from predrel_ros.core.errors import UserError
from predrel_ros.tools import demo
from predrel_ros.tools.simulator.config import GenerationConfig


def test_the_sweep_plays_each_severity_for_one_episode():
    assert demo.sweep_schedule(["occlusion"], 60) == "sweep:occlusion:60:0,1,2,3,4,5"
    assert demo.sweep_schedule(["blur", "low_resolution"], 40) == "sweep:blur,low_resolution:40:0,1,2,3,4,5"


def test_the_episode_key_follows_settings_and_code(monkeypatch, tmp_path):
    config = GenerationConfig(frames=60, formats=("mcap",))
    key = demo.episode_key(config, "pick_and_place", 3)
    assert key == demo.episode_key(GenerationConfig(frames=60, formats=("mcap",)), "pick_and_place", 3)
    assert key != demo.episode_key(GenerationConfig(frames=61, formats=("mcap",)), "pick_and_place", 3)
    assert key != demo.episode_key(config, "pick_and_place", 4)
    changed = tmp_path / "templates.py"
    changed.write_text("# a change to the generator\n")
    files = demo._source_files()
    assert any(path.name == "templates.py" for path in files) and any(path.suffix == ".msg" for path in files)
    monkeypatch.setattr(demo, "_source_files", lambda: files[:-1] + [changed])
    assert demo.episode_key(config, "pick_and_place", 3) != key


def test_the_episode_is_generated_once(monkeypatch, tmp_path):
    calls = []

    def fake_generate(out, episodes, seed, config, templates, **kwargs):
        calls.append((Path(out), episodes, seed, config.frames, templates))
        (Path(out) / "bags" / f"ep0000_{templates[0]}").mkdir(parents=True)

    monkeypatch.setattr("predrel_ros.tools.simulator.generate.generate_dataset", fake_generate)
    first = demo.demo_episode(tmp_path / "cache", frames=30)
    second = demo.demo_episode(tmp_path / "cache", frames=30)
    assert first == second and first.is_dir() and first.name == "ep0000_pick_and_place"
    assert len(calls) == 1 and calls[0][1:] == (1, demo.SEED, 30, ("pick_and_place",))
    assert calls[0][0].name.endswith(f".partial-{__import__('os').getpid()}")  # renamed when complete
    assert not list((tmp_path / "cache").glob("*.partial-*"))
    demo.demo_episode(tmp_path / "cache", frames=30, regenerate=True)
    assert len(calls) == 2


def test_the_summary_table():
    summary = {"conditions": [
        {"kind": "none", "severity": 0, "frames": {"degraded": 60},
         "prs": {"contact": 0.91, "static": 0.85, "dynamic": None, "derived": 0.9},
         "agreement": {"contact": 1.0, "static": 0.95, "dynamic": None, "derived": 1.0},
         "entities": {"per_frame": 4.0, "extra_per_frame": 0.05, "relabelled_per_frame": 0.03,
                      "false_per_frame": 0.02, "missed_per_frame": 0.0},
         "trust": {"reliability": {"contact": {"OK": 50, "WARN": 0, "ERROR": 0, "STALE": 10}},
                   "self_reliability": {"contact": {"OK": 30, "WARN": 30, "ERROR": 0, "STALE": 0}}},
         "action": {"accuracy": 0.8, "trusted_fraction": 0.9, "accuracy_trusted": 0.85}},
        {"kind": "occlusion", "severity": 5, "frames": {"degraded": 60},
         "prs": {"contact": 0.41, "static": 0.5, "dynamic": 0.3, "derived": 0.2},
         "agreement": {"contact": 0.5, "static": 0.6, "dynamic": 0.4, "derived": 0.3},
         "trust": {"reliability": {"contact": {"OK": 0, "WARN": 15, "ERROR": 45, "STALE": 0}}},
         "action": {"accuracy": 0.4, "trusted_fraction": 0.1, "accuracy_trusted": None}}]}
    lines = demo.format_summary(summary).splitlines()
    assert lines[0].split()[6:8] == ["extra/f", "false/f"]
    assert lines[0].split()[8:10] == ["reliability", "W/E"] and lines[0].split()[10:12] == ["self_reliability", "W/E"]
    assert lines[2] == ("clean                60    1.00/0.91    0.95/0.85          -/-    1.00/0.90     0.05     0.02"
                        "                 0%/0%                50%/0%    0.80       0.90   0.85")
    # a summary without entity counts (no association) shows none
    assert lines[3] == ("occlusion 5          60    0.50/0.41    0.60/0.50    0.40/0.30    0.30/0.20      -        -  "
                        "               25%/75%                     -    0.40       0.10    -  ")
    assert lines[-1].startswith("agreement/PRS: ")


def test_the_clean_profile_is_measured_once_per_model_with_the_nodes_window(controlled_dataset, tmp_path,
                                                                            monkeypatch):
    from predrel_ros.core.package_files import config_file
    from predrel_ros.reliability.trust import CleanProfile
    from predrel_ros.ros.kit.parameter_specs import read_params_file

    model = model_builders.scene_model(tmp_path / "model")
    measured = []
    monkeypatch.setattr(demo, "profile_dataset", lambda cache_dir, frames, regenerate: controlled_dataset)
    from predrel_ros.tools.cli import profile as profile_command
    original = profile_command.dataset_profile
    monkeypatch.setattr(profile_command, "dataset_profile",
                        lambda *args, **kwargs: measured.append((kwargs["window"], kwargs["depth"]))
                        or original(*args, **kwargs))
    first = demo.demo_profile(tmp_path / "cache", str(model), frames=36)
    assert demo.demo_profile(tmp_path / "cache", str(model), frames=36) == first and len(measured) == 1
    profile = CleanProfile.load(first)
    window = read_params_file(config_file("reliability_node.yaml"), "reliability")["window"]
    # the demo's predicate nodes use depth (demo.run.yaml): the profile's predicates are extracted so too
    assert demo.predicate_depth() is True
    assert measured == [(window, True)] and profile.window == window and "contact" in profile.baselines
    (model / "labels.txt").write_text("cube\nbowl\nhand\n\n")          # another model: measured again
    assert demo.demo_profile(tmp_path / "cache", str(model), frames=36) != first and len(measured) == 2
    with pytest.raises(UserError, match="does not exist"):
        demo.demo_profile(tmp_path / "cache", str(tmp_path / "nowhere"))
