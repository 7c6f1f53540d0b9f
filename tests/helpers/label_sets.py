"""Labelled image sets in the YOLO-seg and COCO formats, written from a controlled dataset's frames
(ground-truth visible masks -> polygons or RLE), for the tests of reading and training on them."""
from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np


def mask_polygons(mask: np.ndarray) -> list[np.ndarray]:
    """Outer contours of a mask as polygons in continuous pixel coordinates, largest first."""
    contours, _ = cv2.findContours(mask.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    contours = sorted((c for c in contours if len(c) >= 3), key=cv2.contourArea, reverse=True)
    return [c.reshape(-1, 2).astype(np.float64) + 0.5 for c in contours]


def rle_counts(mask: np.ndarray) -> list[int]:
    """COCO's uncompressed RLE: alternating runs of 0s and 1s down the columns, starting with 0s."""
    flat = mask.T.reshape(-1).astype(np.int8)
    changes = np.flatnonzero(np.diff(np.concatenate([[0], flat, [1 - flat[-1]]])))
    return np.diff(np.concatenate([[0], changes])).tolist()


def rle_to_string(counts: list[int]) -> str:
    """COCO's compressed RLE string (pycocotools' rleToString)."""
    chars = []
    for index, value in enumerate(counts):
        if index > 2:
            value -= counts[index - 2]
        more = True
        while more:
            chunk = value & 0x1F
            value >>= 5
            more = value != -1 if chunk & 0x10 else value != 0
            chars.append(chr((chunk | (0x20 if more else 0)) + 48))
    return "".join(chars)


def labelled_frames(dataset_root: Path, frame_step: int, min_pixels: int = 16):
    """(split, name, rgb, [(label, mask)]) of every `frame_step`-th frame, hands and table included."""
    from predrel_ros.sources.dataset import open_dataset

    dataset = open_dataset(dataset_root)
    for split in ("train", "val", "test"):
        for episode in dataset.episodes(split):
            for number, frame in enumerate(episode.frames()):
                if number % frame_step == 0:
                    instances = [(e.label, e.mask) for e in frame.entities
                                 if e.mask is not None and e.mask.sum() >= min_pixels]
                    yield split, f"{episode.meta.name}_{number:04d}", frame.rgb, instances


def write_yolo_set(dataset_root: Path, out: Path, classes: list[str], frame_step: int = 6) -> Path:
    """An Ultralytics YOLO-seg folder (data.yaml, images/<split>/, labels/<split>/); returns data.yaml."""
    for split, name, rgb, instances in labelled_frames(dataset_root, frame_step):
        (out / "images" / split).mkdir(parents=True, exist_ok=True)
        (out / "labels" / split).mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(out / "images" / split / f"{name}.png"), rgb[:, :, ::-1])
        height, width = rgb.shape[:2]
        lines = []
        for label, mask in instances:
            for polygon in mask_polygons(mask)[:1]:  # one polygon an instance: its largest part
                coords = " ".join(f"{x / width:.6f} {y / height:.6f}" for x, y in polygon)
                lines.append(f"{classes.index(label)} {coords}")
        (out / "labels" / split / f"{name}.txt").write_text("\n".join(lines) + "\n")
    splits = "".join(f"{s}: images/{s}\n" for s in ("train", "val", "test") if (out / "images" / s).is_dir())
    (out / "data.yaml").write_text(f"path: .\n{splits}names: {json.dumps(classes)}\n")
    return out / "data.yaml"


def write_coco_set(dataset_root: Path, out: Path, classes: list[str], frame_step: int = 6) -> Path:
    """COCO instance JSONs (instances_<split>.json, polygons for even, RLE strings for odd
    annotation ids) with the images under out/images; returns instances_train.json."""
    (out / "images").mkdir(parents=True, exist_ok=True)
    documents = {}
    for split, name, rgb, instances in labelled_frames(dataset_root, frame_step):
        document = documents.setdefault(split, {"images": [], "annotations": [], "categories": [
            {"id": 10 + i, "name": c} for i, c in enumerate(classes)]})
        image_id = len(document["images"]) + 1
        cv2.imwrite(str(out / "images" / f"{name}.png"), rgb[:, :, ::-1])
        height, width = rgb.shape[:2]
        document["images"].append({"id": image_id, "file_name": f"{name}.png", "height": height, "width": width})
        for label, mask in instances:
            annotation_id = len(document["annotations"]) + 1
            segmentation = ({"size": [height, width], "counts": rle_to_string(rle_counts(mask))}
                            if annotation_id % 2 else [p.reshape(-1).tolist() for p in mask_polygons(mask)])
            document["annotations"].append({"id": annotation_id, "image_id": image_id, "iscrowd": 0,
                                            "category_id": 10 + classes.index(label),
                                            "segmentation": segmentation})
    for split, document in documents.items():
        (out / f"instances_{split}.json").write_text(json.dumps(document))
    return out / "instances_train.json"
