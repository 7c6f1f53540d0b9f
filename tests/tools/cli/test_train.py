import json

import onnx
import pytest
import yaml

from predrel_ros.perception.labels import labels_from_onnx_metadata
from predrel_ros.tools.cli.main import main


@pytest.fixture(scope="module")
def trained(synthetic_dataset, tmp_path_factory):
    """fit (one short epoch) with --export: the recipe of the default model, in miniature."""
    out = tmp_path_factory.mktemp("run")
    model = out / "model"
    assert main(["train", "fit", "--data", str(synthetic_dataset), "--out", str(out / "run"), "--epochs", "1",
                 "--batch-size", "4", "--train-frame-step", "1", "--val-frame-step", "2", "--export", str(model),
                 "--no-progress"]) == 0
    return out / "run", model


def test_fit_writes_the_run_record_and_export_the_model_folder(trained):
    run_dir, model = trained
    run = json.loads((run_dir / "run.json").read_text())
    assert run["class_names"] == ["bar", "box", "disc"] and run["data"]["train_frames"] == 8
    assert run["command"].startswith("predrel ") and run["wall_seconds"] > 0
    assert "--erase-probability 0.5" in run["command"] and run["config"]["augment"]["erase_probability"] == 0.5
    assert "--erase-patches anywhere" in run["command"]
    assert run["config"]["augment"]["erase_patches_from"] == "anywhere"
    assert {p.name for p in model.iterdir()} == {"model.onnx", "model.pt2", "labels.txt", "roles.yaml",
                                                 "metrics.json", "MODEL_CARD.md"}
    metadata = {p.key: p.value for p in onnx.load(str(model / "model.onnx")).metadata_props}
    assert labels_from_onnx_metadata(metadata) == ["bar", "box", "disc"]
    metrics = json.loads((model / "metrics.json").read_text())
    assert list(metrics["conditions"]) == ["clean", "blur@3", "occlusion@3", "occlusion_flat@3", "illumination@3",
                                           "low_resolution@3"]
    assert all(("occluder_detections_per_frame" in result) == name.startswith("occlusion")
               for name, result in metrics["conditions"].items())
    roles = metrics["conditions"]["clean"]["per_group"]["per_class"]
    assert set(roles) == set(yaml.safe_load((model / "roles.yaml").read_text()).values())
    card = (model / "MODEL_CARD.md").read_text()
    assert "| clean | box AP50 |" in card and "synthetic test dataset" in card and "predrel train fit" in card
    assert "By entity role" in card and "| condition | metric | " + " | ".join(roles) + " |" in card


def test_evaluate_reruns_the_metrics_of_the_card(trained, synthetic_dataset, tmp_path, capsys):
    _, model = trained
    out = tmp_path / "m.json"
    assert main(["train", "evaluate", "--model", str(model), "--data", str(synthetic_dataset), "--json", str(out),
                 "--degradation", "all", "--no-progress"]) == 0
    rerun = json.loads(out.read_text())["conditions"]
    assert rerun == json.loads((model / "metrics.json").read_text())["conditions"]
    assert "clean (4 frames)" in capsys.readouterr().out


def test_evaluate_a_checkpoint_and_the_pt2_program(trained, synthetic_dataset, tmp_path):
    run_dir, model = trained
    for args in (["--model", str(run_dir / "best.pt")], ["--model", str(model / "model.pt2"), "--backend", "pytorch"]):
        out = tmp_path / "r.json"
        assert main(["train", "evaluate", *args, "--data", str(synthetic_dataset), "--split", "val",
                     "--json", str(out), "--no-progress"]) == 0
        assert json.loads(out.read_text())["conditions"]["clean"]["num_images"] == 4


@pytest.mark.parametrize("args, message", [
    (["--degradation", "frame_drop"], "do not change images"),
    (["--degradation", "blur", "--severity", "9"], "--severity"),
    (["--frame-step", "0"], "frame step"),
])
def test_evaluate_refuses_bad_options(trained, synthetic_dataset, args, message, capsys):
    _, model = trained
    assert main(["train", "evaluate", "--model", str(model), "--data", str(synthetic_dataset), *args]) == 1
    assert message in capsys.readouterr().err


def test_fit_from_an_exported_model_starts_from_its_weights(trained, synthetic_dataset, tmp_path, capsys):
    import torch

    from predrel_ros.tools.training.trainer import initial_weights, load_checkpoint

    run_dir, model = trained
    start, classes = initial_weights(model)
    exported, _, _ = load_checkpoint(run_dir / "best.pt")
    assert classes == ["bar", "box", "disc"]
    assert all(torch.equal(start[name], value) for name, value in exported.state_dict().items())
    out = tmp_path / "tuned"
    assert main(["train", "fit", "--data", str(synthetic_dataset), "--init", str(model), "--out", str(out), "--epochs",
                 "1", "--batch-size", "4", "--train-frame-step", "1", "--val-frame-step", "2", "--no-progress"]) == 0
    run = json.loads((out / "run.json").read_text())
    assert "--init " + str(model) in run["command"] and run["init"] == str(model)
    baseline = tmp_path / "before.json"
    assert main(["train", "evaluate", "--model", str(model), "--data", str(synthetic_dataset), "--degradation", "all",
                 "--json", str(baseline), "--no-progress"]) == 0
    tuned = tmp_path / "tuned-model"
    assert main(["train", "export", "--checkpoint", str(out / "best.pt"), "--out", str(tuned), "--data",
                 str(synthetic_dataset), "--baseline", str(baseline), "--no-progress"]) == 0
    card = (tuned / "MODEL_CARD.md").read_text()
    assert "Fine-tuned by the project's own code" in card and f"from `{model}`" in card
    before = json.loads(baseline.read_text())["conditions"]["occlusion@3"]["box_ap50"]
    after = json.loads((tuned / "metrics.json").read_text())["conditions"]["occlusion@3"]["box_ap50"]
    assert f"| occlusion@3 | {before:.3f} | {after:.3f} |" in card
    assert main(["train", "export", "--checkpoint", str(out / "best.pt"), "--out", str(tuned), "--data",
                 str(synthetic_dataset), "--baseline", str(baseline), "--eval-seed", "4", "--no-progress"]) == 1
    assert "not comparable with this evaluation" in capsys.readouterr().err
    assert main(["train", "fit", "--data", str(synthetic_dataset), "--init", str(model), "--classes", "box,bar,disc",
                 "--out", str(tmp_path / "other")]) == 1
    assert "needs the same classes in the same order" in capsys.readouterr().err
    assert main(["train", "fit", "--data", str(synthetic_dataset), "--init", str(tmp_path / "nothing.onnx"),
                 "--out", str(tmp_path / "other")]) == 1
    assert "expected a training checkpoint" in capsys.readouterr().err


def test_fit_refuses_an_erase_probability_outside_0_1(synthetic_dataset, tmp_path, capsys):
    assert main(["train", "fit", "--data", str(synthetic_dataset), "--out", str(tmp_path / "run"),
                 "--erase-probability", "1.5", "--no-progress"]) == 1
    assert "erase_probability must lie in [0, 1]" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_fit_refuses_a_missing_dataset(tmp_path, capsys):
    assert main(["train", "fit", "--data", str(tmp_path / "none"), "--out", str(tmp_path / "run")]) == 1
    assert "not a dataset folder" in capsys.readouterr().err


@pytest.mark.slow
def test_fit_on_a_yolo_set_exports_a_model_that_predrel_detect_loads(controlled_dataset, tmp_path):
    """Your own data, end to end: YOLO-seg labels (written from generated episodes) -> fit -> export ->
    predrel detect. One short epoch: this checks the path, not the accuracy."""
    from label_sets import write_yolo_set

    classes = ["hand", "table", "cube", "cylinder", "bar", "box", "bowl"]
    data = write_yolo_set(controlled_dataset, tmp_path / "labels", classes, frame_step=6)
    roles = tmp_path / "roles.yaml"
    roles.write_text("table: surface\nbox: container\nbowl: container\nhand: right_hand\n")
    model = tmp_path / "model"
    assert main(["train", "fit", "--data", str(data), "--roles", str(roles), "--out", str(tmp_path / "run"),
                 "--epochs", "1", "--batch-size", "4", "--export", str(model), "--no-progress"]) == 0
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["class_names"] == classes and run["data"]["format"] == "yolo" and run["data"]["train_images"] > 4
    assert {"model.onnx", "labels.txt", "roles.yaml", "MODEL_CARD.md"} <= {p.name for p in model.iterdir()}
    assert yaml.safe_load((model / "roles.yaml").read_text())["bowl"] == "container"
    assert main(["detect", "--input", str(data.parent / "images" / "test"), "--model", str(model),
                 "--out", str(tmp_path / "detect"), "--backend", "onnxruntime", "--no-overlays"]) == 0
    summary = json.loads((tmp_path / "detect" / "summary.json").read_text())
    assert summary["frames"] == sum(1 for _ in (data.parent / "images" / "test").iterdir())
    assert summary["perception"]["labels"] == classes and summary["perception"]["roles"]["table"] == "surface"


def test_fit_refuses_classes_for_a_labelled_set_and_roles_for_a_dataset(synthetic_dataset, tmp_path, capsys):
    (tmp_path / "data.yaml").write_text("train: images\nnames: [cup]\n")
    assert main(["train", "fit", "--data", str(tmp_path / "data.yaml"), "--classes", "cup", "--out",
                 str(tmp_path / "run")]) == 1
    assert "a labelled set names its classes" in capsys.readouterr().err
    assert main(["train", "fit", "--data", str(synthetic_dataset), "--roles", str(tmp_path / "r.yaml"), "--out",
                 str(tmp_path / "run")]) == 1
    assert "--roles is for labelled images" in capsys.readouterr().err
