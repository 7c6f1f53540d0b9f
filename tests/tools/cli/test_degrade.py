import csv

import cv2
import numpy as np
import pytest

from predrel_ros.tools.cli import main as cli

IMAGE = np.random.default_rng(0).integers(0, 256, (48, 64, 3), dtype=np.uint8)


@pytest.fixture
def image_path(tmp_path):
    path = tmp_path / "frame.png"
    cv2.imwrite(str(path), IMAGE)
    return path


def test_apply_to_an_image_matches_the_degrader(image_path, tmp_path):
    from predrel_ros.degradations import Degrader

    out = tmp_path / "out" / "blurred.png"
    assert cli.main(["degrade", "--input", str(image_path), "--kind", "blur", "--severity", "3", "--seed", "4",
                     "--frame-index", "9", "--out", str(out)]) == 0
    np.testing.assert_array_equal(cv2.imread(str(out)), Degrader("blur", 3, 4).apply_image(IMAGE, 9))


def test_occlusion_boxes_and_table_overrides(image_path, tmp_path):
    table = tmp_path / "table.json"
    table.write_text('{"occlusion": {"area_ratio": [0, 0.2, 0.4, 0.6, 0.8, 0.9]}}')
    out = tmp_path / "occluded.png"
    assert cli.main(["degrade", "--input", str(image_path), "--kind", "occlusion", "--severity", "5",
                     "--boxes", "0,0,32,24;40,30,60,44", "--table", str(table), "--out", str(out)]) == 0
    changed = np.any(cv2.imread(str(out)) != IMAGE, axis=2)
    assert changed[:24, :32].mean() > 0.8 and not changed[24:30].any()


def test_video_keeps_every_index_in_the_sidecar(tmp_path):
    video = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 10, (64, 48))
    for i in range(30):
        writer.write(np.roll(IMAGE, i, axis=1))
    writer.release()
    out = tmp_path / "dropped.avi"
    assert cli.main(["degrade", "--input", str(video), "--kind", "frame_drop", "--severity", "5", "--seed", "2",
                     "--out", str(out)]) == 0
    rows = list(csv.DictReader((tmp_path / "dropped.avi.frames.csv").open()))
    assert [int(r["frame_index"]) for r in rows] == list(range(30))
    written = sum(r["action"] != "drop" for r in rows)
    capture = cv2.VideoCapture(str(out))
    assert int(capture.get(cv2.CAP_PROP_FRAME_COUNT)) == written < 30
    capture.release()


def test_folder_of_images(image_path, tmp_path):
    out = tmp_path / "frames_out"
    assert cli.main(["degrade", "--input", str(image_path.parent), "--schedule", "sweep:low_resolution:1",
                     "--out", str(out)]) == 0
    assert (out / "frame.png").exists()
    rows = list(csv.DictReader((out / "frames.csv").open()))
    assert rows[0]["kind"] == "low_resolution" and rows[0]["action"] == "deliver"


def test_preview_and_table(image_path, tmp_path, capsys):
    sheet = tmp_path / "sheet.png"
    assert cli.main(["degrade", "preview", "--input", str(image_path), "--out", str(sheet)]) == 0
    assert cv2.imread(str(sheet)).shape == (8 * 78 + 7 * 4, 150 + 6 * 68, 3)   # 8 rows: occlusion_flat too
    assert cli.main(["degrade", "table"]) == 0
    assert "| blur | motion_sigma_px | 0 | 1.5 | 2.5 | 3.5 | 5 | 7 |" in capsys.readouterr().out


@pytest.mark.parametrize("arguments, message", [
    (["--kind", "fog", "--severity", "1"], "kind must be one of"),
    (["--kind", "blur", "--severity", "6"], "severity must lie in 0..5"),
    (["--kind", "blur"], "apply needs --kind and --severity"),
    (["--kind", "detection_noise", "--severity", "2"], "acts on perception output"),
    (["--kind", "blur", "--severity", "2", "--schedule", "blur:3"], "either --schedule or --kind"),
    (["--schedule", "sweep:blur:x"], "sweep period must be an integer"),
    (["--kind", "occlusion", "--severity", "2", "--boxes", "1,2,3"], "--boxes must be x1,y1,x2,y2"),
    (["--kind", "illumination", "--severity", "2", "--illumination-mode", "dusk"], "illumination_mode"),
])
def test_bad_input_exits_1_with_a_clear_message(image_path, tmp_path, capsys, arguments, message):
    argv = ["degrade", "--input", str(image_path), "--out", str(tmp_path / "x.png")] + arguments
    assert cli.main(argv) == 1
    assert message in capsys.readouterr().err


def test_missing_or_unreadable_input(tmp_path, capsys):
    assert cli.main(["degrade", "--input", str(tmp_path / "none.png"), "--kind", "blur", "--severity", "1",
                     "--out", str(tmp_path / "x.png")]) == 1
    assert "does not exist" in capsys.readouterr().err
    junk = tmp_path / "junk.mp4"
    junk.write_text("not a video")
    assert cli.main(["degrade", "--input", str(junk), "--kind", "blur", "--severity", "1",
                     "--out", str(tmp_path / "x.mp4")]) == 1
    assert "not a video OpenCV can open" in capsys.readouterr().err
