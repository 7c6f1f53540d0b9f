"""The perception benchmark target runs end to end on a tiny size (timing values are not checked)."""
import json

from predrel_ros.tools.cli import main as cli


def test_perception_bench_reports_each_backend_and_labels_the_stand_in_model(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("predrel_ros.perception.config.DEFAULT_MODEL_DIR", tmp_path / "no-default-model")
    out = tmp_path / "result.json"
    assert cli.main(["bench", "perception", "--sizes", "96x64", "--backends", "onnxruntime", "pytorch",
                     "tensorrt", "--repeats", "2", "--warmup", "0", "--threads", "1", "--out", str(out)]) == 0
    result = json.loads(out.read_text())["result"]
    assert [row["backend"] for row in result["results"]] == ["onnxruntime", "pytorch"]
    assert "tensorrt" in result["skipped_backends"]
    assert result["models"]["96x64"]["weights"].startswith("random")
    row = result["results"][0]
    assert row["network_input"] == "96x64" and row["inference_ratio_to_onnxruntime"] == 1.0
    for stage in ("preprocess", "inference", "decode", "end_to_end"):
        assert row[stage]["n"] == 2 and row[stage]["median_ms"] > 0
    (hands,) = result["hand_landmarks"]
    assert hands["palm_only"]["hands"] == 0 and hands["palm_and_two_hands"]["hands"] == 2
    assert hands["two_hands_followed"]["hands"] == 2
    assert "written to" in capsys.readouterr().out
