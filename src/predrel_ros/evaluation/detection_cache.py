"""Detector outputs on disk, one file per (model, image condition, episode), so that a sweep runs the
network once per image condition and a rerun none at all.

What is cached is the decoder's output before tracking (`Detections`: boxes, scores, classes, masks,
mask quality) of every frame of an episode under one image condition: the clean images, or one
image degradation (kind, severity, seed). Tracking and entity assembly are not cached: they run per
condition sequence, because frame dropping changes what the tracker sees.

The key is a SHA-256 of the model file's content, the perception settings that change detections
(decoder, input size, masks, hand models, labels), the degradation with its parameters, the episode's
content hash and the format version: a changed model, setting, degradation table or episode never
reads a stale file. Files are written to a temporary name and renamed, so parallel workers and an
interrupted run leave no partial file. Masks are stored bit-packed and compressed.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Sequence

import numpy as np

from predrel_ros.perception.detections import Detections

FORMAT = "predrel-detection-cache/1"


def file_digest(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def cache_key(model_digest: str, settings: dict, condition: dict, episode_hash: str) -> str:
    payload = json.dumps({"format": FORMAT, "model": model_digest, "settings": settings, "condition": condition,
                          "episode": episode_hash}, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()


def pack(detections: Sequence[Detections], shape: tuple[int, int]) -> dict[str, np.ndarray]:
    """Arrays of all frames' detections (frame f owns rows offsets[f]:offsets[f+1]; `masked[f]` says
    whether frame f came with masks, whose rows are then in `masks`, bit-packed)."""
    counts = np.array([len(d) for d in detections], dtype=np.int64)
    masked = np.array([d.masks is not None for d in detections], dtype=bool)
    pixels = shape[0] * shape[1]
    flat = [d.masks.reshape(len(d), pixels) for d in detections if d.masks is not None]
    return {
        "offsets": np.concatenate([[0], np.cumsum(counts)]),
        "shape": np.array(shape, dtype=np.int64),
        "boxes": np.concatenate([d.boxes for d in detections]) if detections else np.zeros((0, 4)),
        "scores": np.concatenate([d.scores for d in detections]) if detections else np.zeros(0),
        "class_ids": np.concatenate([d.class_ids for d in detections]) if detections else np.zeros(0, np.int64),
        "mask_quality": np.concatenate([d.mask_quality for d in detections]) if detections else np.zeros(0),
        "masked": masked,
        "masks": np.packbits(np.concatenate(flat) if flat else np.zeros((0, pixels), bool), axis=1),
    }


def unpack(arrays: dict[str, np.ndarray]) -> list[Detections]:
    offsets = arrays["offsets"]
    height, width = (int(v) for v in arrays["shape"])
    masks = np.unpackbits(arrays["masks"], axis=1, count=height * width).astype(bool).reshape(-1, height, width)
    out, row = [], 0
    for start, stop, masked in zip(offsets[:-1], offsets[1:], arrays["masked"]):
        frame_masks = None
        if masked:
            frame_masks, row = masks[row:row + stop - start], row + stop - start
        out.append(Detections(arrays["boxes"][start:stop], arrays["scores"][start:stop],
                              arrays["class_ids"][start:stop], frame_masks, arrays["mask_quality"][start:stop]))
    return out


class DetectionCache:
    """Detections per key under `root` (None: no caching)."""

    def __init__(self, root: str | Path | None) -> None:
        self.root = None if root is None else Path(root)
        self.hits = 0
        self.misses = 0

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.npz"

    def get(self, key: str) -> list[Detections] | None:
        if self.root is None:
            self.misses += 1
            return None
        path = self._path(key)
        try:
            with np.load(path) as data:
                arrays = {name: data[name] for name in data.files}
        except (OSError, ValueError, KeyError):
            self.misses += 1
            return None
        self.hits += 1
        return unpack(arrays)

    def put(self, key: str, detections: Sequence[Detections], shape: tuple[int, int]) -> None:
        if self.root is None:
            return
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.stem}.{os.getpid()}.tmp.npz")
        np.savez_compressed(temporary, **pack(detections, shape))
        os.replace(temporary, path)
