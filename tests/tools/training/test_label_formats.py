"""Reading YOLO-seg and COCO instance datasets (tools/training/label_formats.py)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from label_sets import rle_counts, rle_to_string, write_coco_set, write_yolo_set

from predrel_ros.core.errors import UserError
from predrel_ros.tools.training.label_formats import (
    coco_mask,
    is_labelled_set,
    open_labelled_set,
    polygon_mask,
    rle_counts_from_string,
    yolo_label_file,
)

CLASSES = ["hand", "table", "cube", "cylinder", "bar", "box", "bowl"]


def iou(a, b):
    return (a & b).sum() / max((a | b).sum(), 1)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.booleans(), min_size=12, max_size=12), st.integers(0, 2**31 - 1))
def test_compressed_rle_round_trips(flags, seed):
    mask = np.random.default_rng(seed).random((7, 9)) < 0.4
    mask[0, 0] = flags[0]
    counts = rle_counts(mask)
    assert rle_counts_from_string(rle_to_string(counts)) == counts
    segmentation = {"size": [7, 9], "counts": rle_to_string(counts)}
    np.testing.assert_array_equal(coco_mask(segmentation, 7, 9), mask)
    np.testing.assert_array_equal(coco_mask({"size": [7, 9], "counts": counts}, 7, 9), mask)


def test_a_polygon_covers_the_pixels_inside_it():
    square = np.array([[2.0, 1.0], [6.0, 1.0], [6.0, 4.0], [2.0, 4.0]])  # pixel edges: columns 2..5, rows 1..3
    expected = np.zeros((6, 8), bool)
    expected[1:4, 2:6] = True
    np.testing.assert_array_equal(polygon_mask([square], 6, 8), expected)


def test_yolo_label_files_sit_beside_the_images(tmp_path):
    assert yolo_label_file(tmp_path / "set/images/train/a.jpg") == tmp_path / "set/labels/train/a.txt"
    with pytest.raises(UserError, match="images/"):
        yolo_label_file(tmp_path / "a.jpg")


@pytest.mark.parametrize("writer", [write_yolo_set, write_coco_set])
def test_sets_written_from_ground_truth_read_back_its_masks(controlled_dataset, tmp_path, writer):
    from label_sets import labelled_frames

    path = writer(controlled_dataset, tmp_path / "set", CLASSES, frame_step=12)
    assert is_labelled_set(path) and not is_labelled_set(controlled_dataset)
    labelled = open_labelled_set(path)
    assert labelled.class_names == CLASSES and labelled.count("train") > 0 and labelled.count("val") > 0
    truth = {name: instances for split, name, _, instances in labelled_frames(controlled_dataset, 12)
             if split == "train"}
    assert labelled.count("train") + labelled.count("val") == len(truth)
    names = [item.stem if labelled.format == "yolo" else item[1]["file_name"][:-4] for item in labelled.splits["train"]]
    for image, name in zip(labelled.images("train"), names):
        instances = truth[name]
        assert image.image.shape == (96, 128, 3) and len(image.labels) == len(instances)
        for label, mask, (true_label, true_mask) in zip(image.labels, image.masks, instances):
            assert CLASSES[label] == true_label
            assert iou(mask, true_mask) > 0.6  # outer contours fill holes; small masks lose a rim


def test_a_set_without_validation_holds_out_every_tenth_image(controlled_dataset, tmp_path):
    path = write_yolo_set(controlled_dataset, tmp_path / "set", CLASSES, frame_step=3)
    text = path.read_text().replace("val: images/val\n", "")
    path.write_text(text)
    labelled = open_labelled_set(path)
    total = sum(1 for _ in (tmp_path / "set/images/train").iterdir())
    assert labelled.count("val") == total // 10 and labelled.count("train") == total - total // 10


def test_bad_labels_are_named(tmp_path):
    (tmp_path / "images/train").mkdir(parents=True)
    (tmp_path / "labels/train").mkdir(parents=True)
    import cv2

    for name in ("a", "b"):
        cv2.imwrite(str(tmp_path / f"images/train/{name}.png"), np.zeros((8, 8, 3), np.uint8))
    (tmp_path / "labels/train/a.txt").write_text("0 0.5 0.5 0.2 0.2\n")
    (tmp_path / "data.yaml").write_text("train: images/train\nnames: [cup]\n")
    labelled = open_labelled_set(tmp_path)
    with pytest.raises(UserError, match=r"a\.txt:1: expected"):
        list(labelled.images("train"))
    (tmp_path / "labels/train/a.txt").write_text("3 0.1 0.1 0.9 0.1 0.5 0.9\n")
    with pytest.raises(UserError, match="class 3 outside"):
        list(labelled.images("train"))
    (tmp_path / "images/train/b.png").unlink()
    with pytest.raises(UserError, match="one training image"):
        open_labelled_set(tmp_path / "data.yaml")
