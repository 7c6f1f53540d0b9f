import json

import pytest
from reliability_scenarios import oracle_profile

from predrel_ros.reliability.trust import CleanProfile
from predrel_ros.sources.dataset import open_dataset
from predrel_ros.tools.cli import main as cli


def test_profile_command_writes_the_oracle_profile_of_the_split(controlled_dataset, tmp_path, capsys):
    out = tmp_path / "profiles" / "clean.json"
    assert cli.main(["profile", "--data", str(controlled_dataset), "--split", "train", "--out", str(out),
                     "--no-progress"]) == 0
    written = CleanProfile.load(out)
    episodes = open_dataset(controlled_dataset).episodes("train")
    expected = oracle_profile(episodes)
    assert written.to_dict() == json.loads(json.dumps(expected.to_dict()))
    contact = written.baselines["contact"]
    assert 0.5 < contact.confidence <= 1 and contact.calibration.samples > 50
    assert 0.5 < contact.calibration.agreement_rate <= 1
    printed = capsys.readouterr().out
    assert printed.splitlines()[0].split()[:3] == ["predicate", "confidence>=", "TPC-S>="]
    assert f"wrote {out} ({len(episodes)} train episodes, source oracle)" in printed


def test_profile_command_refuses_bad_input(controlled_dataset, tmp_path, capsys):
    assert cli.main(["profile", "--data", str(tmp_path), "--out", str(tmp_path / "p.json")]) == 1
    assert "not a dataset folder" in capsys.readouterr().err
    assert cli.main(["profile", "--data", str(controlled_dataset), "--out", str(tmp_path / "p.txt")]) == 1
    assert "--out must end in .json" in capsys.readouterr().err
    assert cli.main(["profile", "--data", str(controlled_dataset), "--split", "val", "--out",
                     str(tmp_path / "p.json")]) == 1
    assert "no episodes in split 'val'" in capsys.readouterr().err
    for option, value, message in (("--window", "1", "--window must be >= 2"), ("--quantile", "0.1", "--quantile")):
        assert cli.main(["profile", "--data", str(controlled_dataset), "--out", str(tmp_path / "p.json"), option,
                         value]) == 1
        assert message in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["profile", "--data", str(controlled_dataset)])


def test_with_depth_the_profile_is_of_the_predicates_a_depth_node_extracts(controlled_dataset, tmp_path):
    """--depth gives the extractor each frame's depth and intrinsics, as a predicate_node with use_depth:
    the profile then equals one built from an extractor fed so, and differs from the image-only one."""
    from predrel_ros.action.streams import OracleEntities
    from predrel_ros.predicates import PredicateExtractor
    from predrel_ros.tools.cli.profile import dataset_profile

    out = tmp_path / "depth.json"
    assert cli.main(["profile", "--data", str(controlled_dataset), "--split", "train", "--out", str(out),
                     "--depth", "--no-progress"]) == 0
    episodes = open_dataset(controlled_dataset).episodes("train")
    expected = dataset_profile(episodes, OracleEntities(), PredicateExtractor(), depth=True)
    assert CleanProfile.load(out).to_dict() == json.loads(json.dumps(expected.to_dict()))
    assert expected.to_dict() != oracle_profile(episodes).to_dict()
