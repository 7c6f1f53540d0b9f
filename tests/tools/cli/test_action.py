"""`predrel action fit` and `evaluate` end to end on the tiny controlled dataset."""
from __future__ import annotations

import json
import shutil

import pytest

from predrel_ros.action.model import PrimitiveModel
from predrel_ros.sources.dataset import MANIFEST_FILE, open_dataset, write_manifest
from predrel_ros.tools.cli.main import main


@pytest.fixture(scope="module")
def split_dataset(controlled_dataset, tmp_path_factory):
    """The tiny dataset with every split populated: train = the first two episodes, val = test = the third."""
    root = tmp_path_factory.mktemp("action") / "dataset"
    shutil.copytree(controlled_dataset, root, ignore=shutil.ignore_patterns("bags"))
    manifest = json.loads((root / MANIFEST_FILE).read_text())
    names = [episode["name"] for episode in manifest["episodes"]]
    manifest["episodes"] = [{**episode, "split": "train" if episode["name"] in names[:2] else "val"}
                            for episode in manifest["episodes"]]
    write_manifest(root, manifest)
    data = json.loads((root / MANIFEST_FILE).read_text())
    data["splits"]["test"] = list(data["splits"]["val"])
    (root / MANIFEST_FILE).write_text(json.dumps(data))
    assert len(open_dataset(root).episodes("test")) == 1
    return root


def test_fit_then_evaluate(split_dataset, tmp_path, capsys):
    model_path = tmp_path / "model.json"
    assert main(["action", "fit", "--data", str(split_dataset), "--out", str(model_path), "--hidden", "0",
                 "--l2", "0.01", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "selected:" in out and "macro-F1" in out and "confusion" in out
    model = PrimitiveModel.load(model_path)
    assert model.hidden == 0 and model.confidence_weighted
    assert model.training["source"] == "oracle"
    assert model.training["data"]["episodes"] == {"train": 2, "val": 1, "test": 1}
    assert len(model.training["trials"]) == 5
    assert "--hidden 0 --l2 0.01" in model.training["command"]

    json_path, png = tmp_path / "eval.json", tmp_path / "confusion.png"
    assert main(["action", "evaluate", "--data", str(split_dataset), "--model", str(model_path), "--json",
                 str(json_path), "--plot", str(png), "--no-progress"]) == 0
    result = json.loads(json_path.read_text())
    assert result["accuracy"] == pytest.approx(model.training["test"]["accuracy"], abs=1e-4)
    assert png.stat().st_size > 1000 and png.read_bytes()[:4] == b"\x89PNG"

    assert main(["action", "evaluate", "--data", str(split_dataset), "--model", str(model_path),
                 "--mask", "contact,derived", "--degradation", "detection_noise", "--severity", "3",
                 "--json", str(json_path), "--no-progress"]) == 0
    masked = json.loads(json_path.read_text())
    assert masked["condition"] == "detection_noise s=3" and masked["masked"] == ["contact", "derived"]
    capsys.readouterr()


def test_usage_errors(split_dataset, tmp_path, capsys):
    model_path = tmp_path / "missing.json"
    assert main(["action", "evaluate", "--data", str(split_dataset), "--model", str(model_path)]) == 1
    assert "cannot read action model" in capsys.readouterr().err
    assert main(["action", "evaluate", "--data", str(split_dataset), "--degradation", "blur", "--no-progress"]) == 1
    assert "--source perception" in capsys.readouterr().err
    assert main(["action", "evaluate", "--data", str(split_dataset), "--mask", "touch"]) == 1
    assert "cannot mask 'touch'" in capsys.readouterr().err
    assert main(["action", "fit", "--data", str(tmp_path), "--out", str(tmp_path / "m.json")]) == 1
    assert "not a dataset folder" in capsys.readouterr().err
