"""Synthetic labelled frames for the training and `predrel train` tests: coloured rectangles and ellipses on a textured
table, one class per shape kind, with exact visible masks (later shapes occlude earlier ones)."""
from __future__ import annotations

import cv2
import numpy as np
import pytest

from predrel_ros.tools.training.data import LabelledImage

SYNTHETIC_CLASSES = ("box", "disc", "bar")
COLOURS = {0: (220, 40, 40), 1: (40, 200, 60), 2: (50, 80, 230)}


def synthetic_frame(rng: np.random.Generator, height: int = 240, width: int = 320,
                    max_objects: int = 3) -> LabelledImage:
    image = np.empty((height, width, 3), np.uint8)
    image[:] = rng.integers(90, 170, 3)
    image = np.clip(image + rng.normal(0, 4, image.shape), 0, 255).astype(np.uint8)
    owner = np.full((height, width), -1, np.int64)
    labels = []
    for index in range(int(rng.integers(1, max_objects + 1))):
        label = int(rng.integers(0, len(SYNTHETIC_CLASSES)))
        canvas = np.zeros((height, width), np.uint8)
        cx, cy = int(rng.integers(40, width - 40)), int(rng.integers(40, height - 40))
        size = int(rng.integers(14, 36))
        if label == 0:
            cv2.rectangle(canvas, (cx - size, cy - size), (cx + size, cy + size), 1, -1)
        elif label == 1:
            cv2.ellipse(canvas, (cx, cy), (size, int(size * 0.7)), float(rng.uniform(0, 180)), 0, 360, 1, -1)
        else:
            cv2.rectangle(canvas, (cx - 2 * size, cy - size // 3), (cx + 2 * size, cy + size // 3), 1, -1)
        shade = np.clip(np.array(COLOURS[label]) + rng.integers(-25, 25, 3), 0, 255).astype(np.uint8)
        image[canvas > 0] = shade
        owner[canvas > 0] = index
        labels.append(label)
    masks = np.stack([owner == i for i in range(len(labels))])
    return LabelledImage(image, np.asarray(labels), masks)


def synthetic_frames(count: int, seed: int, **kwargs) -> list[LabelledImage]:
    rng = np.random.default_rng(seed)
    return [synthetic_frame(rng, **kwargs) for _ in range(count)]


@pytest.fixture
def frames() -> list[LabelledImage]:
    return synthetic_frames(8, seed=3)


@pytest.fixture
def make_frames():
    """synthetic_frames(count, seed, max_objects=3): reproducible labelled frames of SYNTHETIC_CLASSES."""
    return synthetic_frames


@pytest.fixture
def synthetic_classes() -> tuple[str, ...]:
    return SYNTHETIC_CLASSES


def write_synthetic_dataset(root, frames_per_episode: int = 4, episodes_per_split=(2, 1, 1), seed: int = 0):
    """A dataset folder (predrel_ros.sources.dataset layout) of synthetic episodes, entities labelled by shape."""
    from predrel_ros.core.entities import DISTRACTOR, MANIPULATED_OBJECT, Entity
    from predrel_ros.core.frame import Frame
    from predrel_ros.sources.dataset import EpisodeMeta, write_episode, write_manifest
    from predrel_ros.tools.training.data import boxes_from_masks

    rng = np.random.default_rng(seed)
    manifest = []
    for split, count in zip(("train", "val", "test"), episodes_per_split):
        for number in range(count):
            name = f"{split}_{number:02d}"
            frames = []
            for index in range(frames_per_episode):
                sample = synthetic_frame(rng)
                boxes = boxes_from_masks(sample.masks)
                # bars are distractors in the first episode of each split, manipulated elsewhere
                entities = [Entity(id=i, label=SYNTHETIC_CLASSES[label], box=box, mask=mask,
                                   role=DISTRACTOR if label == 2 and number == 0 else MANIPULATED_OBJECT)
                            for i, (label, box, mask) in enumerate(zip(sample.labels, boxes, sample.masks))]
                frames.append(Frame(index=index, stamp_ns=index * 33_000_000, rgb=sample.image, entities=entities,
                                    predicates=[]))
            meta = EpisodeMeta(name=name, num_frames=frames_per_episode, fps=30.0, width=320, height=240,
                               split=split)
            write_episode(root / "episodes" / name, meta, frames)
            manifest.append({"name": name, "split": split})
    write_manifest(root, {"episodes": manifest, "description": "synthetic test dataset"})
    return root


@pytest.fixture(scope="session")
def synthetic_dataset(tmp_path_factory):
    return write_synthetic_dataset(tmp_path_factory.mktemp("dataset"))
