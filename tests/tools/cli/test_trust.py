import json

import pytest

from predrel_ros.core.config_io import write_data
from predrel_ros.predicates.config import PredicateConfig
from predrel_ros.reliability.trust_estimator import TrustModel
from predrel_ros.tools.cli import main as cli


@pytest.fixture(scope="module")
def run(controlled_dataset, tmp_path_factory):
    """An eval run of the oracle on one train episode, occlusion 3 and 5."""
    folder = tmp_path_factory.mktemp("trust-cli")
    predicates = write_data(folder / "predicates.yaml", {"predicates": PredicateConfig().to_dict()})
    out = folder / "run"
    assert cli.main(["eval", "--data", str(controlled_dataset), "--out", str(out), "--perception", "oracle",
                     "--predicate-config", str(predicates), "--kinds", "occlusion", "--severities", "3,5",
                     "--action-model", "none", "--split", "train", "--max-episodes", "1", "--trust-window", "20",
                     "--no-progress"]) == 0
    return out


def test_fit_then_evaluate_with_leave_one_kind_out(run, tmp_path, capsys):
    model_file = tmp_path / "model.json"
    assert cli.main(["trust", "fit", "--data", str(run), "--out", str(model_file), "--window", "20"]) == 0
    assert "written to" in capsys.readouterr().out
    model = TrustModel.load(model_file)
    assert model.window == 20 and model.provenance["fitted_on"] == [str(run)] and model.groups
    out = tmp_path / "judged"
    assert cli.main(["trust", "evaluate", "--data", str(run), "--model", str(model_file), "--out", str(out),
                     "--leave-one-kind-out", "--window", "20"]) == 0
    document = json.loads((out / "trust.json").read_text())
    assert set(document["summary"]["lok_recall_by_kind"]) == {"occlusion"}
    assert [c["kind"] for c in document["conditions"]] == ["none", "occlusion", "occlusion"]
    assert "## Trust" in (out / "trust.md").read_text() and (out / "trust.png").stat().st_size > 1000
    assert '"lok_recall_min"' in capsys.readouterr().out


def test_leave_one_episode_out_refuses_a_run_given_as_data_and_fit_data(run, tmp_path, capsys):
    assert cli.main(["trust", "evaluate", "--data", str(run), "--fit-data", str(run), "--out", str(tmp_path / "o"),
                     "--leave-one-episode-out", "--window", "20"]) == 1
    assert "put the left-out episode in its own fit" in capsys.readouterr().err


def test_bad_input_is_refused(run, tmp_path, capsys):
    assert cli.main(["trust", "fit", "--data", str(tmp_path), "--out", str(tmp_path / "m.json")]) == 1
    assert "no sequences/*.trust.npz" in capsys.readouterr().err
    assert cli.main(["trust", "evaluate", "--data", str(run), "--out", str(tmp_path / "o")]) == 1
    assert "give --model, or --fit-data" in capsys.readouterr().err
    (tmp_path / "bad.json").write_text("{}")
    assert cli.main(["trust", "evaluate", "--data", str(run), "--model", str(tmp_path / "bad.json"), "--out",
                     str(tmp_path / "o")]) == 1
    assert "--model" in capsys.readouterr().err


def test_run_reports_how_often_trust_flags_footage(run, controlled_dataset, tmp_path, capsys):
    from predrel_ros.sources.dataset import open_dataset

    model_file = tmp_path / "model.json"
    assert cli.main(["trust", "fit", "--data", str(run), "--out", str(model_file), "--window", "20"]) == 0
    episode = open_dataset(controlled_dataset).episodes()[0].directory
    out = tmp_path / "flags.json"
    assert cli.main(["trust", "run", "--input", str(episode), "--model", str(model_file), "--window", "20",
                     "--max-frames", "30", "--out", str(out)]) == 0
    result = json.loads(out.read_text())["sources"][str(episode)]
    assert result["frames"] == 30
    judged = {group: values for group, values in result["groups"].items() if values["judged_frames"]}
    assert judged and all(0.0 <= values["flagged_share"] <= 1.0 for values in judged.values())
    assert all(values["expected_agreement"] is not None for values in judged.values())
    assert "any group flagged on" in capsys.readouterr().out
    assert cli.main(["trust", "run", "--input", str(episode), "--model", str(model_file), "--out", str(out)]) == 1
    assert "give --window 20" in capsys.readouterr().err


def _scene_clip(folder, frames=40):
    """A 320x240 clip for the scene model (tests/helpers/model_builders.py: a cube, a bowl and a hand
    with an empty mask at fixed boxes), its labels every 6th frame (the hand touches nothing, the cube
    lies on a table the model does not detect) and a perception config with that model."""
    import cv2
    import numpy as np

    video = folder / "clip.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 10, (320, 240))
    for index in range(frames):
        writer.write(np.full((240, 320, 3), 60 + index, np.uint8))
    writer.release()
    rows = [{"clip": "clip", "frame_index": index,
             "hands": [{"id": "hand_R", "visible": True, "box": [22, 182, 58, 218], "in_contact_with": None,
                        "holding": None}],
             "objects": [{"name": "cube", "visible": True, "box": [82, 72, 118, 128], "lifted": False, "on": "table"},
                         {"name": "bowl", "visible": True, "box": [222, 128, 282, 172], "lifted": False, "on": None},
                         {"name": "table", "role": "surface", "visible": True, "box": [0, 150, 320, 240]}]}
            for index in range(0, frames, 6)]
    labels = folder / "clip.jsonl"
    labels.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return video, labels


def test_run_against_labels(scene_model_dir, tmp_path, capsys):
    video, labels = _scene_clip(tmp_path)
    config = tmp_path / "perception.yaml"
    # the drawn clip's hand is no person's: the scene model's hand class is kept beside the landmarks
    config.write_text(f"perception:\n  model: {scene_model_dir}\n  backend: {{name: onnxruntime, device: cpu}}\n"
                      f"  hand_landmarks: {{model_hands: true}}\n")
    out = tmp_path / "labelled.json"
    assert cli.main(["trust", "run", "--input", str(video), "--labels", str(labels), "--perception-config",
                     str(config), "--hand-landmarks", "--out", str(out)]) == 0
    document = json.loads(out.read_text())
    assert document["hand_landmarks"] is True
    result = document["sources"][str(video)]
    compared = result["labels"]
    assert compared["clip"] == "clip" and compared["labelled_frames"] == 7
    # every labelled hand and object is found; the table is not (the model has no surface class)
    assert compared["entities_found"] == {"hand": {"labelled": 7, "found_share": 1.0, "unmatched_per_frame": 0.0},
                                          "object": {"labelled": 14, "found_share": 1.0, "unmatched_per_frame": 0.0},
                                          "surface": {"labelled": 7, "found_share": 0.0, "unmatched_per_frame": 0.0}}
    assert compared["hand_sides"] == {"hands": 0, "agreement": None}       # no side labelled
    # no hand holds anything, and the pipeline says so (its hand, without mask pixels, is a box-only detection)
    assert compared["predicates"]["grasp"] == {"reference_streams": 14, "found_share": 1.0, "agreement": 1.0}
    assert set(compared["groups"]) == {"contact", "static", "derived"}      # the labels give no dynamic relation
    contact = compared["groups"]["contact"]
    # per frame contact(hand, cube), contact(hand, bowl) found; contact(cube, table) not
    assert contact["reference_streams"] == 21 and contact["found_share"] == pytest.approx(2 / 3)
    # the hand's two pairs agree (no contact, as labelled); contact(cube, table) is lost with the table
    assert contact["agreement"] == pytest.approx(2 / 3)
    assert contact["windows"] == result["groups"]["contact"]["judged_frames"] > 0    # a labelled frame in every window
    assert contact["true_agreement"] == pytest.approx(2 / 3)
    assert contact["mae"] == pytest.approx(abs(contact["expected_agreement"] - 2 / 3))
    assert contact["low_windows"] == 0 and contact["flagged_share_low"] is None
    static = compared["groups"]["static"]                     # on(cube, table): lost with the table, never agrees
    assert static["true_agreement"] == 0.0 and static["mae"] == pytest.approx(static["expected_agreement"])
    assert static["low_windows"] == static["windows"] > 0 and static["flagged_share_low"] == static["flagged_share"]
    printed = capsys.readouterr().out
    assert "against the labels (7 labelled frames, window 30; found 100 % of 7 hands" in printed
    assert "side right on n/a of 0 found hands" in printed and "agreement contact 67 % of 21" in printed
    assert "| contact | 21 (0.67) |" in printed


def test_run_needs_one_label_file_per_input(scene_model_dir, tmp_path, capsys):
    video, labels = _scene_clip(tmp_path, frames=6)
    assert cli.main(["trust", "run", "--input", str(video), str(video), "--labels", str(labels), "--out",
                     str(tmp_path / "o.json")]) == 1
    assert "one label file per --input (2), got 1" in capsys.readouterr().err
    broken = tmp_path / "broken.jsonl"
    broken.write_text("not json\n")
    assert cli.main(["trust", "run", "--input", str(video), "--labels", str(broken), "--out",
                     str(tmp_path / "o.json")]) == 1
    assert "not a footage label file" in capsys.readouterr().err
