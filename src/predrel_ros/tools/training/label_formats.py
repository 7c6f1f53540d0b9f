"""Instance-segmentation datasets in the formats people label in, read as `LabelledImage`s for training.

Ultralytics YOLO segmentation (what Roboflow, CVAT and Label Studio export as "YOLO seg"):

    data.yaml            path: . (optional root), train: images/train, val: images/val, test: ...,
                         names: [cup, bowl] or {0: cup, 1: bowl}
    images/train/a.jpg   one label file per image: the image path with images/ -> labels/ and .txt;
    labels/train/a.txt   one instance a line: `class x1 y1 x2 y2 ...`, a polygon normalised to [0, 1]

COCO instances JSON (`images`, `annotations` with `segmentation` as polygons or RLE, uncompressed or
compressed, and `categories`): a JSON file for the train split; its val split is the file of the same
name with `train` -> `val` when it exists. Images are looked up under the JSON's folder, its parent
and their `images/` folders. Crowd annotations (`iscrowd: 1`) are left out: they are no instances.

A missing val split is carved from train: every `HOLD_OUT`-th image in file order (at least one).
Class indices follow `names` (YOLO) or the categories sorted by id (COCO).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import cv2
import numpy as np

from predrel_ros.core.config_io import read_data
from predrel_ros.core.errors import UserError
from predrel_ros.tools.training.data import LabelledImage

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff")
HOLD_OUT = 10
SPLITS = ("train", "val", "test")


@dataclass
class LabelledSet:
    """A labelled image set: class names and, per split, the images with how to read their labels."""

    format: str
    root: Path
    class_names: list[str]
    splits: dict[str, list] = field(default_factory=dict)  # split -> items for `reader`
    reader: object = None  # item -> LabelledImage

    def count(self, split: str) -> int:
        return len(self.splits.get(split, []))

    def images(self, split: str, step: int = 1) -> Iterator[LabelledImage]:
        for item in self.splits.get(split, [])[::step]:
            yield self.reader(item)


def is_labelled_set(path: Path) -> bool:
    """Whether `path` is a YOLO data.yaml (or a folder holding one) or a COCO JSON file."""
    path = Path(path)
    return (path.suffix in (".yaml", ".yml") or path.suffix == ".json" or (path / "data.yaml").is_file()
            or (path / "data.yml").is_file())


def open_labelled_set(path: Path) -> LabelledSet:
    path = Path(path)
    if not path.exists():
        raise UserError(f"{path} does not exist")
    if path.suffix == ".json":
        return _open_coco(path)
    if path.is_dir():
        path = next((path / name for name in ("data.yaml", "data.yml") if (path / name).is_file()), path)
    if path.suffix in (".yaml", ".yml"):
        return _open_yolo(path)
    raise UserError(f"{path}: neither a YOLO data.yaml nor a COCO instances JSON")


def _with_validation(splits: dict[str, list]) -> dict[str, list]:
    if not splits.get("train"):
        raise UserError("the labelled set has no training images")
    if not splits.get("val"):
        train = splits["train"]
        if len(train) < 2:
            raise UserError("the labelled set has one training image and no validation images")
        held = set(range(HOLD_OUT - 1, len(train), HOLD_OUT)) or {len(train) - 1}
        splits = {**splits, "val": [train[i] for i in sorted(held)],
                  "train": [item for i, item in enumerate(train) if i not in held]}
    return splits


# --- Ultralytics YOLO segmentation -------------------------------------------------------------

def _open_yolo(data_file: Path) -> LabelledSet:
    try:
        data = read_data(data_file) or {}
    except ValueError as error:
        raise UserError(str(error)) from None
    names = data.get("names")
    if isinstance(names, dict):
        names = [str(names[key]) for key in sorted(names, key=int)]
    if not isinstance(names, list) or not names:
        raise UserError(f"{data_file}: `names` must list the class names")
    root = Path(data.get("path") or ".")
    root = root if root.is_absolute() else (data_file.parent / root).resolve()
    splits = {}
    for split in SPLITS:
        entry = data.get(split)
        if entry:
            splits[split] = sorted(image for item in (entry if isinstance(entry, list) else [entry])
                                   for image in _yolo_images(root / item, data_file))
    return LabelledSet("yolo", root, [str(n) for n in names], _with_validation(splits),
                       lambda image: _read_yolo(image, len(names)))


def _yolo_images(entry: Path, data_file: Path) -> list[Path]:
    if entry.is_dir():
        return [p for p in entry.rglob("*") if p.suffix.lower() in IMAGE_SUFFIXES]
    if entry.suffix == ".txt" and entry.is_file():  # a list of image paths
        return [(entry.parent / line.strip()).resolve() for line in entry.read_text().splitlines() if line.strip()]
    raise UserError(f"{data_file}: {entry} is neither an image folder nor a list of images")


def yolo_label_file(image: Path) -> Path:
    """Ultralytics' rule: the last `images` folder of the path becomes `labels`, the suffix `.txt`."""
    parts = list(image.parts)
    if "images" not in parts:
        raise UserError(f"{image}: a YOLO image must lie under an images/ folder (labels/ beside it)")
    index = len(parts) - 1 - parts[::-1].index("images")
    parts[index] = "labels"
    return Path(*parts).with_suffix(".txt")


def _read_yolo(image_path: Path, num_classes: int) -> LabelledImage:
    image = _read_image(image_path)
    height, width = image.shape[:2]
    label_file = yolo_label_file(image_path)
    labels, masks = [], []
    lines = label_file.read_text().splitlines() if label_file.is_file() else []  # no file: no instances
    for number, line in enumerate(lines, 1):
        values = line.split()
        if not values:
            continue
        if len(values) < 7 or len(values) % 2 == 0:
            raise UserError(f"{label_file}:{number}: expected `class x1 y1 x2 y2 x3 y3 ...` (a polygon of at "
                            f"least 3 points; box-only detection labels have no masks)")
        cls = int(values[0])
        if not 0 <= cls < num_classes:
            raise UserError(f"{label_file}:{number}: class {cls} outside 0..{num_classes - 1}")
        points = np.asarray(values[1:], dtype=np.float64).reshape(-1, 2) * (width, height)
        labels.append(cls)
        masks.append(polygon_mask([points], height, width))
    return LabelledImage(image, np.asarray(labels, np.int64),
                         np.stack(masks) if masks else np.zeros((0, height, width), bool))


# --- COCO instances ----------------------------------------------------------------------------

def _open_coco(train_file: Path) -> LabelledSet:
    documents = {"train": _load_json(train_file)}
    for split in ("val", "test"):
        sibling = train_file.with_name(train_file.name.replace("train", split))
        if sibling != train_file and sibling.is_file():
            documents[split] = _load_json(sibling)
    categories = sorted(documents["train"].get("categories", []), key=lambda c: c["id"])
    if not categories:
        raise UserError(f"{train_file}: no categories")
    class_of = {c["id"]: i for i, c in enumerate(categories)}
    splits = {}
    for split, document in documents.items():
        by_image: dict[int, list] = {}
        for annotation in document.get("annotations", []):
            if not annotation.get("iscrowd", 0):
                by_image.setdefault(annotation["image_id"], []).append(annotation)
        splits[split] = [(train_file.parent, info, by_image.get(info["id"], []), class_of)
                         for info in sorted(document.get("images", []), key=lambda i: i["file_name"])]
    return LabelledSet("coco", train_file.parent, [str(c["name"]) for c in categories], _with_validation(splits),
                       _read_coco)


def _load_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise UserError(f"{path}: {error}") from None


def _coco_image_path(folder: Path, file_name: str) -> Path:
    for base in (folder, folder / "images", folder.parent, folder.parent / "images"):
        if (base / file_name).is_file():
            return base / file_name
    raise UserError(f"image {file_name} not found under {folder}, its parent or their images/ folders")


def _read_coco(item) -> LabelledImage:
    folder, info, annotations, class_of = item
    image = _read_image(_coco_image_path(folder, info["file_name"]))
    height, width = image.shape[:2]
    labels, masks = [], []
    for annotation in annotations:
        if annotation["category_id"] not in class_of:
            raise UserError(f"{info['file_name']}: annotation {annotation.get('id')} has unknown category "
                            f"{annotation['category_id']}")
        labels.append(class_of[annotation["category_id"]])
        masks.append(coco_mask(annotation["segmentation"], height, width))
    return LabelledImage(image, np.asarray(labels, np.int64),
                         np.stack(masks) if masks else np.zeros((0, height, width), bool))


def coco_mask(segmentation, height: int, width: int) -> np.ndarray:
    """(H, W) bool of a COCO segmentation: a list of polygons, or RLE {size, counts} (list or string)."""
    if isinstance(segmentation, list):
        return polygon_mask([np.asarray(p, np.float64).reshape(-1, 2) for p in segmentation if len(p) >= 6],
                            height, width)
    size = tuple(segmentation["size"])
    if size != (height, width):
        raise UserError(f"RLE of size {list(size)} on an image of {height}x{width}")
    counts = segmentation["counts"]
    counts = rle_counts_from_string(counts) if isinstance(counts, str) else list(counts)
    flat = np.zeros(height * width, bool)
    position = 0
    for index, run in enumerate(counts):
        if index % 2:
            flat[position:position + run] = True
        position += run
    return flat.reshape(width, height).T  # COCO runs go down the columns


def rle_counts_from_string(text: str) -> list[int]:
    """Run lengths of COCO's compressed RLE string (pycocotools' rleFrString): 5 bits a character,
    0x20 continues, the last chunk's 0x10 is the sign; runs from the third on are differences to the
    run two before."""
    counts, position = [], 0
    while position < len(text):
        value, shift, more = 0, 0, True
        while more:
            chunk = ord(text[position]) - 48
            value |= (chunk & 0x1F) << (5 * shift)
            more = bool(chunk & 0x20)
            position += 1
            shift += 1
            if not more and chunk & 0x10:
                value |= -1 << (5 * shift)
        if len(counts) > 2:
            value += counts[-2]
        counts.append(value)
    return counts


# --- shared ------------------------------------------------------------------------------------

def polygon_mask(polygons: list[np.ndarray], height: int, width: int, supersample: int = 4) -> np.ndarray:
    """(H, W) bool of polygons in continuous pixel coordinates (pixel i spans [i, i + 1)): the pixels
    at least half covered, rasterised at `supersample` times the resolution over the polygons' box."""
    mask = np.zeros((height, width), bool)
    polygons = [np.asarray(p, np.float64) for p in polygons if len(p) >= 3]
    if not polygons:
        return mask
    every = np.concatenate(polygons)
    x0, y0 = np.clip(np.floor(every.min(axis=0)).astype(int), 0, [width, height])
    x1, y1 = np.clip(np.ceil(every.max(axis=0)).astype(int), 0, [width, height])
    if x1 <= x0 or y1 <= y0:
        return mask
    fine = np.zeros(((y1 - y0) * supersample, (x1 - x0) * supersample), np.uint8)
    scaled = [np.round(((p - (x0, y0)) * supersample - 0.5) * 16).astype(np.int32) for p in polygons]
    cv2.fillPoly(fine, scaled, 1, lineType=cv2.LINE_8, shift=4)  # 4 fraction bits
    coverage = fine.reshape(y1 - y0, supersample, x1 - x0, supersample).mean(axis=(1, 3))
    mask[y0:y1, x0:x1] = coverage >= 0.5
    return mask


def _read_image(path: Path) -> np.ndarray:
    image = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if image is None:
        raise UserError(f"cannot read image {path}")
    return cv2.cvtColor(image, cv2.COLOR_BGR2RGB)
