import pytest

from predrel_ros.tools.cli.main import main


def test_help_shows_examples(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["eval", "--help"])
    assert exit_info.value.code == 0
    assert "predrel eval --data" in capsys.readouterr().out


@pytest.mark.parametrize("arguments, message", [
    (["--kinds", "fog"], "unknown kinds"), (["--severities", "7"], "severities"),
    (["--perception", "/nonexistent/model.onnx"], "does not exist"),
    (["--perception", "oracle", "--predicate-config", "/nonexistent/predicates.yaml"], "cannot read"),
    (["--perception", "oracle", "--reference", "clean", "--data", "/nonexistent"], "no such file"),
    (["--scheduler", "local:0"], "local:N needs"), (["--scheduler", "http://host:8786"], "Dask scheduler address"),
    (["--scheduler", "local:2", "--jobs", "2"], "give one of them"),
])
def test_bad_input_is_an_error_without_traceback(controlled_dataset, tmp_path, capsys, arguments, message):
    code = main(["eval", "--data", str(controlled_dataset), "--out", str(tmp_path / "out"), "--no-progress",
                 *arguments])
    assert code == 1
    assert message in capsys.readouterr().err


def test_no_validation_split_asks_for_a_predicate_config(controlled_dataset, tmp_path, capsys):
    code = main(["eval", "--data", str(controlled_dataset), "--out", str(tmp_path / "out"), "--no-progress",
                 "--perception", "oracle"])
    assert code == 1
    assert "--predicate-config" in capsys.readouterr().err


def test_kinds_none_is_the_clean_condition_alone():
    from predrel_ros.tools.cli.eval import _kinds
    assert _kinds(["none"]) == ()
    assert _kinds(["blur,occlusion"]) == ("blur", "occlusion")
    assert _kinds(["occlusion,occlusion_flat"]) == ("occlusion", "occlusion_flat")   # the flat look by name
    assert "occlusion_flat" not in _kinds(["all"])
