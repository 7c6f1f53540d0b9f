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
