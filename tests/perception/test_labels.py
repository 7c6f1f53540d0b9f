import pytest

from predrel_ros.core.errors import UserError
from predrel_ros.perception.labels import labels_from_onnx_metadata, read_labels


def test_text_labels_skip_blank_and_comment_lines(tmp_path):
    path = tmp_path / "labels.txt"
    path.write_text("# classes of the default model\ncube\n\nbowl\n  left_hand \n")
    assert read_labels(path) == ["cube", "bowl", "left_hand"]


def test_yaml_labels_as_list_mapping_or_under_names(tmp_path):
    (tmp_path / "a.yaml").write_text("- cube\n- bowl\n")
    (tmp_path / "b.yaml").write_text("names:\n  1: bowl\n  0: cube\n")
    assert read_labels(tmp_path / "a.yaml") == ["cube", "bowl"]
    assert read_labels(tmp_path / "b.yaml") == ["cube", "bowl"]


@pytest.mark.parametrize("text, message", [("names:\n  0: a\n  2: b\n", "without gaps"),
                                           ("names: 3\n", "expected a list"),
                                           ("names: [\n", "not valid YAML")])
def test_bad_yaml_labels_say_what_is_wrong(tmp_path, text, message):
    (tmp_path / "l.yaml").write_text(text)
    with pytest.raises(UserError, match=message):
        read_labels(tmp_path / "l.yaml")


def test_missing_or_empty_label_files(tmp_path):
    with pytest.raises(UserError, match="does not exist"):
        read_labels(tmp_path / "nope.txt")
    (tmp_path / "empty.txt").write_text("\n# nothing\n")
    with pytest.raises(UserError, match="no class names"):
        read_labels(tmp_path / "empty.txt")


def test_names_from_ultralytics_metadata():
    assert labels_from_onnx_metadata({"names": "{0: 'cube', 1: 'bowl'}"}) == ["cube", "bowl"]
    assert labels_from_onnx_metadata({}) is None
    assert labels_from_onnx_metadata({"names": "not python"}) is None
