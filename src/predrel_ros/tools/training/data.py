"""Training data pipeline: labelled frames -> augmented, letterboxed network inputs and targets.

A `LabelledImage` is one RGB frame with the visible mask and class of every instance. `prepare`
maps it into the network input the way inference does (Ultralytics letterbox: aspect kept, grey 114
padding), optionally with augmentation: horizontal flip (with a class swap such as left hand <->
right hand), scale and translation jitter (zooming in crops the frame), random erasing with textured,
shaped occluders (procedural textures or patches cut from the frame itself, anywhere or from its
unlabelled background only; ellipses, blobs and arm-like shapes: `degradations/textures.py`), HSV
colour jitter, occasional blur and sensor noise.
An instance partly behind such an occluder keeps its whole mask as target (amodal): an occluder in
front of an object does not move or shrink it, and the clean frame's extent is what the evaluation
under occlusion and a clean twin expect; an instance hidden beyond `amodal_min_visible` keeps only
its visible pixels. The scene's own occlusions (one object in front of another) stay visible-only.
Boxes are the tight boxes of the (augmented) target masks; instances left with fewer than
`min_pixels` visible pixels are dropped from the targets. Masks are stored run-length encoded
(`predrel_ros.core.masks`), so thousands of frames fit in memory.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Sequence

import cv2
import numpy as np
import torch

from predrel_ros.core import masks as mask_codec
from predrel_ros.degradations import textures
from predrel_ros.perception import letterbox
from predrel_ros.tools.training.network import PROTOTYPE_STRIDE


@dataclass
class LabelledImage:
    """image: H x W x 3 uint8 RGB; labels: (M,) class indices; masks: (M, H, W) bool visible pixels;
    occluded: (H, W) bool pixels painted over by a synthetic occluder (evaluation under occlusion), or None."""

    image: np.ndarray
    labels: np.ndarray
    masks: np.ndarray
    occluded: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.image = np.asarray(self.image)
        if self.image.ndim != 3 or self.image.shape[2] != 3 or self.image.dtype != np.uint8:
            raise ValueError(f"LabelledImage.image must be H x W x 3 uint8, got {self.image.shape} {self.image.dtype}")
        self.labels = np.asarray(self.labels, dtype=np.int64).reshape(-1)
        self.masks = np.asarray(self.masks, dtype=bool).reshape(-1, *self.image.shape[:2])
        if self.masks.shape[0] != self.labels.shape[0]:
            raise ValueError(f"LabelledImage: {self.labels.shape[0]} labels but {self.masks.shape[0]} masks")
        if self.occluded is not None:
            self.occluded = np.asarray(self.occluded, dtype=bool)
            if self.occluded.shape != self.image.shape[:2]:
                raise ValueError(f"LabelledImage.occluded must be H x W {self.image.shape[:2]}, "
                                 f"got {self.occluded.shape}")


class CompactImage:
    """A LabelledImage held compactly: PNG-free raw pixels and run-length encoded masks."""

    def __init__(self, sample: LabelledImage) -> None:
        self.image = sample.image
        self.labels = sample.labels
        self.rles = [mask_codec.encode(m) for m in sample.masks]

    def expand(self) -> LabelledImage:
        h, w = self.image.shape[:2]
        masks = np.stack([mask_codec.decode(r, h, w) for r in self.rles]) if self.rles else np.zeros((0, h, w), bool)
        return LabelledImage(self.image, self.labels, masks)


def boxes_from_masks(masks: np.ndarray) -> np.ndarray:
    """Tight (x1, y1, x2, y2) pixel-edge boxes of (M, H, W) masks; zeros for empty masks."""
    boxes = np.zeros((masks.shape[0], 4), dtype=np.float64)
    for i, mask in enumerate(masks):
        rows, cols = np.flatnonzero(mask.any(1)), np.flatnonzero(mask.any(0))
        if rows.size:
            boxes[i] = (cols[0], rows[0], cols[-1] + 1, rows[-1] + 1)
    return boxes


@dataclass(frozen=True)
class AugmentConfig:
    """Training-time augmentation. flip_classes[i] is the class a horizontally flipped class i becomes
    (identity when empty); scale_jitter: relative zoom range; translate: fraction of the input side;
    hue_shift: rotation of the hue circle, as a fraction of it (colour is a weak cue in the
    controlled set: every object kind draws from the same palette); saturation_gain, value_gain:
    relative changes."""

    flip_probability: float = 0.5
    flip_classes: tuple[int, ...] = ()
    scale_jitter: float = 0.25
    translate: float = 0.1
    hue_shift: float = 0.1
    saturation_gain: float = 0.5
    value_gain: float = 0.35
    blur_probability: float = 0.1
    noise_probability: float = 0.1
    noise_sigma: float = 6.0
    erase_probability: float = 0.5  # a frame gets 1..erase_max textured occluders
    erase_max: int = 3
    erase_area: tuple[float, float] = (0.01, 0.08)  # share of the input area per occluder
    erase_patch_share: float = 0.5  # occluders filled with a patch of the frame itself (else a texture)
    erase_patches_from: str = "anywhere"  # where those patches are cut: textures.PATCH_SOURCES
    erase_object_share: float = 0.5  # occluders placed inside a random instance's box (object-aware erasing)
    erase_object_area: tuple[float, float] = (0.15, 0.6)  # share of that box per object-aware occluder
    # an erased instance keeps its whole (amodal) mask while at least this share of it stays visible;
    # below it only its visible pixels (1.0: visible pixels only, the targets before the amodal fine-tune)
    amodal_min_visible: float = 0.3

    def __post_init__(self) -> None:
        for name in ("flip_probability", "blur_probability", "noise_probability", "erase_probability",
                     "erase_patch_share", "erase_object_share", "amodal_min_visible"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"AugmentConfig.{name} must lie in [0, 1], got {getattr(self, name)}")
        for name in ("scale_jitter", "translate", "hue_shift", "saturation_gain", "value_gain"):
            if not 0.0 <= getattr(self, name) < 1.0:
                raise ValueError(f"AugmentConfig.{name} must lie in [0, 1), got {getattr(self, name)}")
        if self.noise_sigma < 0:
            raise ValueError(f"AugmentConfig.noise_sigma must be >= 0, got {self.noise_sigma}")
        if self.erase_patches_from not in textures.PATCH_SOURCES:
            raise ValueError(f"AugmentConfig.erase_patches_from must be one of {textures.PATCH_SOURCES}, "
                             f"got {self.erase_patches_from!r}")
        low, high = self.erase_area
        if self.erase_max < 1 or not 0 < low <= high < 1:
            raise ValueError(f"AugmentConfig needs erase_max >= 1 and 0 < erase_area[0] <= erase_area[1] < 1, "
                             f"got {self.erase_max} and {self.erase_area}")
        low, high = self.erase_object_area
        if not 0 < low <= high < 1:
            raise ValueError(f"AugmentConfig needs 0 < erase_object_area[0] <= erase_object_area[1] < 1, "
                             f"got {self.erase_object_area}")
        if self.flip_classes and sorted(self.flip_classes) != list(range(len(self.flip_classes))):
            raise ValueError(f"AugmentConfig.flip_classes must be a permutation of 0..n-1, got {self.flip_classes}")


@dataclass
class TrainingSample:
    """image (3, H, W) float in [0, 1]; boxes (M, 4) input pixels; labels (M,); masks (M, H/4, W/4)
    soft visible-mask targets at prototype resolution."""

    image: torch.Tensor
    boxes: torch.Tensor
    labels: torch.Tensor
    masks: torch.Tensor


def _affine(sample_hw: tuple[int, int], input_hw: tuple[int, int], rng: np.random.Generator | None,
            augment: AugmentConfig | None) -> tuple[np.ndarray, bool]:
    """2 x 3 cv2 matrix frame -> input pixels, and whether the frame is mirrored. The transform is
    built in continuous coordinates (pixel i spans [i, i + 1)) and converted to cv2's convention
    (pixel i at coordinate i), so a mirrored or zoomed mask keeps its exact pixel extent."""
    geometry = letterbox.plan(sample_hw[0], sample_hw[1], input_hw[0], input_hw[1])
    scale, tx, ty, flip = geometry.scale, float(geometry.pad_x), float(geometry.pad_y), False
    if augment is not None and rng is not None:
        zoom = rng.uniform(1 - augment.scale_jitter, 1 + augment.scale_jitter)
        centre_x, centre_y = input_hw[1] / 2, input_hw[0] / 2
        scale *= zoom  # zoom about the input centre, then shift
        tx = centre_x + (tx - centre_x) * zoom + rng.uniform(-1, 1) * augment.translate * input_hw[1]
        ty = centre_y + (ty - centre_y) * zoom + rng.uniform(-1, 1) * augment.translate * input_hw[0]
        flip = rng.random() < augment.flip_probability
    matrix = np.array([[scale, 0.0, tx], [0.0, scale, ty], [0.0, 0.0, 1.0]])
    if flip:
        matrix = np.array([[-1.0, 0.0, input_hw[1]], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]) @ matrix
    to_centres = np.array([[1.0, 0.0, 0.5], [0.0, 1.0, 0.5], [0.0, 0.0, 1.0]])
    return (np.linalg.inv(to_centres) @ matrix @ to_centres)[:2], flip


def _photometric(image: np.ndarray, rng: np.random.Generator, augment: AugmentConfig) -> np.ndarray:
    shift, saturation, value = rng.uniform(-1, 1, 3) * (augment.hue_shift, augment.saturation_gain, augment.value_gain)
    hue, sat, val = cv2.split(cv2.cvtColor(image, cv2.COLOR_RGB2HSV))
    lut = np.arange(256, dtype=np.float64)
    hue = cv2.LUT(hue, (np.round(lut + shift * 180).astype(np.int64) % 180).astype(np.uint8))  # OpenCV hue: 0..179
    sat = cv2.LUT(sat, np.clip(lut * (1 + saturation), 0, 255).astype(np.uint8))
    val = cv2.LUT(val, np.clip(lut * (1 + value), 0, 255).astype(np.uint8))
    image = cv2.cvtColor(cv2.merge((hue, sat, val)), cv2.COLOR_HSV2RGB)
    if rng.random() < augment.blur_probability:
        image = cv2.GaussianBlur(image, (0, 0), rng.uniform(0.5, 1.5))
    if rng.random() < augment.noise_probability:
        noise = rng.normal(0.0, augment.noise_sigma, image.shape)
        image = np.clip(image + noise, 0, 255).astype(np.uint8)
    return image


def _erase(image: np.ndarray, masks: np.ndarray, rng: np.random.Generator,
           augment: AugmentConfig) -> tuple[np.ndarray, np.ndarray]:
    """Random erasing (Zhong et al., AAAI 2020) with textured, shaped occluders instead of flat or
    noise boxes, anywhere in the frame or, object-aware, inside one instance's box (so the network
    sees partly hidden objects, not only occluders beside them). A patch of the frame is cut anywhere,
    or with `erase_patches_from` "background" from its unlabelled background only (else a procedural
    texture): a piece of a cylinder pasted over a cube, the cube's label kept, teaches the network to
    read one class as the other (docs/results.md, the stronger erasing recipe). The target masks: see
    the module docstring (amodal while `amodal_min_visible` of an instance stays visible)."""
    if rng.random() >= augment.erase_probability:
        return image, masks
    image = image.copy()
    height, width = image.shape[:2]
    covered = np.zeros((height, width), dtype=bool)
    background = ~masks.any(axis=0) if augment.erase_patches_from == "background" else None
    boxes = boxes_from_masks(masks)
    boxes = boxes[(boxes[:, 2] - boxes[:, 0] >= 2) & (boxes[:, 3] - boxes[:, 1] >= 2)].astype(int)
    for _ in range(int(rng.integers(1, augment.erase_max + 1))):
        if len(boxes) and rng.random() < augment.erase_object_share:
            left, top, right, bottom = boxes[int(rng.integers(len(boxes)))]
            area = rng.uniform(*augment.erase_object_area) * (right - left) * (bottom - top)
        else:
            left, top, right, bottom = 0, 0, width, height
            area = rng.uniform(*augment.erase_area) * height * width
        aspect = np.exp(rng.uniform(np.log(0.3), np.log(3.3)))
        h = int(np.clip(round(np.sqrt(area / aspect)), 2, bottom - top))
        w = int(np.clip(round(np.sqrt(area * aspect)), 2, right - left))
        y, x = int(rng.integers(top, bottom - h + 1)), int(rng.integers(left, right - w + 1))
        shape = textures.shape_mask(rng, h, w)
        fill = textures.cut_patch(image, rng, h, w, background) if rng.random() < augment.erase_patch_share else None
        if fill is None:
            fill = textures.procedural_texture(rng, h, w)
        image[y:y + h, x:x + w][shape] = fill[shape]
        covered[y:y + h, x:x + w] |= shape
    visible = masks & ~covered
    areas = masks.reshape(masks.shape[0], -1).sum(1)
    amodal = visible.reshape(masks.shape[0], -1).sum(1) >= augment.amodal_min_visible * np.maximum(areas, 1)
    return image, np.where(amodal[:, None, None], masks, visible)


def prepare(sample: LabelledImage, input_hw: tuple[int, int], min_pixels: int = 16,
            rng: np.random.Generator | None = None, augment: AugmentConfig | None = None) -> TrainingSample:
    """The network input and targets of one frame; augmented when both `rng` and `augment` are given."""
    height, width = input_hw
    matrix, flip = _affine(sample.image.shape[:2], input_hw, rng, augment)
    pad = (letterbox.PAD_VALUE,) * 3
    image = cv2.warpAffine(sample.image, matrix, (width, height), flags=cv2.INTER_LINEAR, borderValue=pad)
    masks = np.stack([cv2.warpAffine(m.astype(np.uint8) * 255, matrix, (width, height), flags=cv2.INTER_LINEAR)
                      >= 128 for m in sample.masks]) if len(sample.masks) else np.zeros((0, height, width), bool)
    labels = sample.labels
    if flip and augment is not None and augment.flip_classes:
        labels = np.asarray(augment.flip_classes)[labels]
    if augment is not None and rng is not None:
        image, masks = _erase(image, masks, rng, augment)
        image = _photometric(image, rng, augment)
    keep = masks.reshape(masks.shape[0], -1).sum(1) >= min_pixels
    masks, labels = masks[keep], labels[keep]
    proto_size = (width // PROTOTYPE_STRIDE, height // PROTOTYPE_STRIDE)
    proto_masks = np.stack([cv2.resize(m.astype(np.float32), proto_size, interpolation=cv2.INTER_AREA)
                            for m in masks]) if len(masks) else np.zeros((0, proto_size[1], proto_size[0]), np.float32)
    return TrainingSample(
        image=torch.from_numpy(np.ascontiguousarray(image.transpose(2, 0, 1))).float().div_(255.0),
        boxes=torch.from_numpy(boxes_from_masks(masks)).float(),
        labels=torch.from_numpy(np.asarray(labels, dtype=np.int64)),
        masks=torch.from_numpy(proto_masks))


@dataclass
class Batch:
    """Samples stacked; instances padded to the batch's largest count, `valid` marks the real ones."""

    images: torch.Tensor
    boxes: torch.Tensor
    labels: torch.Tensor
    masks: torch.Tensor
    valid: torch.Tensor


def collate(samples: Sequence[TrainingSample]) -> Batch:
    count = max((s.labels.shape[0] for s in samples), default=0)
    batch = len(samples)
    h, w = samples[0].masks.shape[-2:] if samples else (0, 0)
    boxes = torch.zeros(batch, count, 4)
    labels = torch.zeros(batch, count, dtype=torch.long)
    masks = torch.zeros(batch, count, h, w)
    valid = torch.zeros(batch, count, dtype=torch.bool)
    for i, s in enumerate(samples):
        k = s.labels.shape[0]
        boxes[i, :k], labels[i, :k], masks[i, :k], valid[i, :k] = s.boxes, s.labels, s.masks, True
    return Batch(torch.stack([s.image for s in samples]), boxes, labels, masks, valid)


def repeat_factors(images: Sequence[CompactImage], num_classes: int, threshold: float, min_pixels: int) -> np.ndarray:
    """Repeat-factor sampling (Gupta et al., LVIS 2019): frames showing a rare class are drawn more
    often. f_c is the fraction of frames where class c has at least `min_pixels` visible pixels;
    a frame's factor is the largest max(1, sqrt(threshold / f_c)) over its classes (1 when
    threshold is 0), its expected number of draws per epoch."""
    if threshold <= 0 or len(images) == 0:
        return np.ones(len(images))
    present = np.zeros((len(images), num_classes), dtype=bool)
    for row, image in zip(present, images):
        for label, rle in zip(image.labels, image.rles):
            if rle.area >= min_pixels:
                row[label] = True
    frequency = present.mean(0)
    class_factor = np.maximum(1.0, np.sqrt(threshold / np.maximum(frequency, 1e-12)))
    return np.array([class_factor[row].max() if row.any() else 1.0 for row in present])


def epoch_order(factors: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Shuffled frame indices of one epoch: frame i appears floor(r_i) or ceil(r_i) times, with
    expectation r_i (stochastic rounding)."""
    whole = np.floor(factors)
    counts = whole + (rng.random(len(factors)) < factors - whole)
    return rng.permutation(np.repeat(np.arange(len(factors)), counts.astype(np.int64)))


def training_batches(images: Sequence[CompactImage], order: np.ndarray, batch_size: int, input_hw: tuple[int, int],
                     rng: np.random.Generator, augment: AugmentConfig, min_pixels: int) -> Iterator[Batch]:
    """Augmented batches of the frames in `order` (the last, incomplete batch is dropped)."""
    for start in range(0, len(order) - batch_size + 1, batch_size):
        yield collate([prepare(images[i].expand(), input_hw, min_pixels, rng, augment)
                       for i in order[start:start + batch_size]])
