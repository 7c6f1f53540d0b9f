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
interrupted run leave no partial file. A mask is stored as the bit-packed rectangle around its
pixels, uncompressed: small, and written and read in milliseconds (compressing full-frame masks cost
more than the network on small frames). An entry of a degraded condition also keeps the image
measures (`reliability.image_quality`) of the degraded images, so that a run from the cache need not
degrade the images again for the trust phase, with the version of the code that measured them: an
entry without them (as older runs wrote) or measured by another version reads as detections alone.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Sequence

import cv2
import numpy as np

from predrel_ros.perception.detections import Detections
from predrel_ros.tools.evaluation.sequences import save_atomically

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
    """Arrays of all frames' detections: frame f owns rows offsets[f]:offsets[f+1]; `masked[f]` says
    whether frame f came with masks. Each mask is stored as the bit-packed crop of its pixels
    (`crops` rows x, y, width, height; its bits at bit_offsets[i]:bit_offsets[i+1] of `bits`)."""
    counts = np.array([len(d) for d in detections], dtype=np.int64)
    masked = np.array([d.masks is not None for d in detections], dtype=bool)
    crops, pieces = [], []
    for d in detections:
        for mask in (d.masks if d.masks is not None else ()):
            x, y, w, h = cv2.boundingRect(np.ascontiguousarray(mask, dtype=np.uint8))   # 0, 0, 0, 0 when empty
            crops.append((x, y, w, h))
            pieces.append(mask[y:y + h, x:x + w].ravel())
    sizes = np.array([piece.size for piece in pieces], dtype=np.int64)
    return {
        "offsets": np.concatenate([[0], np.cumsum(counts)]),
        "shape": np.array(shape, dtype=np.int64),
        "boxes": np.concatenate([d.boxes for d in detections]) if detections else np.zeros((0, 4)),
        "scores": np.concatenate([d.scores for d in detections]) if detections else np.zeros(0),
        "class_ids": np.concatenate([d.class_ids for d in detections]) if detections else np.zeros(0, np.int64),
        "mask_quality": np.concatenate([d.mask_quality for d in detections]) if detections else np.zeros(0),
        "masked": masked,
        "crops": np.array(crops, dtype=np.int64).reshape(-1, 4),
        "bit_offsets": np.concatenate([[0], np.cumsum(sizes)]),
        "bits": np.packbits(np.concatenate(pieces)) if pieces else np.zeros(0, np.uint8),
    }


def unpack(arrays: dict[str, np.ndarray]) -> list[Detections]:
    offsets = arrays["offsets"]
    height, width = (int(v) for v in arrays["shape"])
    bit_offsets = arrays["bit_offsets"]
    bits = np.unpackbits(arrays["bits"], count=int(bit_offsets[-1])).astype(bool)
    out, row = [], 0
    for start, stop, masked in zip(offsets[:-1], offsets[1:], arrays["masked"]):
        frame_masks = None
        if masked:
            frame_masks = np.zeros((stop - start, height, width), dtype=bool)
            for index in range(stop - start):
                x, y, w, h = (int(v) for v in arrays["crops"][row])
                frame_masks[index, y:y + h, x:x + w] = bits[bit_offsets[row]:bit_offsets[row + 1]].reshape(h, w)
                row += 1
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

    def get(self, key: str, measures_version: str = ""
            ) -> tuple[list[Detections], dict[int, dict[str, float]] | None] | None:
        """(detections of every frame, image measures by frame when measured by `measures_version`, else
        None), or None when not cached."""
        if self.root is None:
            self.misses += 1
            return None
        path = self._path(key)
        try:
            with np.load(path) as data:
                arrays = {name: data[name] for name in data.files}
            detections = unpack(arrays)
        except (OSError, ValueError, KeyError):
            self.misses += 1
            return None
        self.hits += 1
        measures = None
        if "measures" in arrays and str(arrays["measures_version"]) == measures_version:
            names = arrays["measure_names"].tolist()
            measures = {int(frame): dict(zip(names, row)) for frame, row in
                        zip(arrays["measure_frames"].tolist(), arrays["measures"].tolist())}
        return detections, measures

    def put(self, key: str, detections: Sequence[Detections], shape: tuple[int, int],
            measures: dict[int, dict[str, float]] | None = None, measures_version: str = "") -> None:
        """Store the detections of every frame, and the image measures by frame (measured by the code of
        `measures_version`) when given."""
        if self.root is None:
            return
        arrays = pack(detections, shape)
        if measures:
            names = list(next(iter(measures.values())))
            arrays["measures_version"] = np.array(measures_version)
            arrays["measure_names"] = np.array(names)
            arrays["measure_frames"] = np.array(list(measures), np.int64)
            arrays["measures"] = np.array([[values[name] for name in names] for values in measures.values()],
                                          np.float64)
        save_atomically(self._path(key), arrays, compressed=False)
