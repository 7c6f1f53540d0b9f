"""Detections of one frame in frame pixels: what the decoder hands to tracking and entity assembly."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Detections:
    """N detections. boxes: (N, 4) x1, y1, x2, y2 in frame pixels; scores: (N,) in [0, 1];
    class_ids: (N,) ints; masks: (N, H, W) bool at frame resolution, or None for a box-only
    detector; mask_quality: (N,) in [0, 1] (1 where there are no masks to doubt)."""

    boxes: np.ndarray
    scores: np.ndarray
    class_ids: np.ndarray
    masks: np.ndarray | None = None
    mask_quality: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.boxes = np.asarray(self.boxes, dtype=np.float64).reshape(-1, 4)
        n = self.boxes.shape[0]
        self.scores = np.asarray(self.scores, dtype=np.float64).reshape(n)
        self.class_ids = np.asarray(self.class_ids, dtype=np.int64).reshape(n)
        if self.masks is not None:
            self.masks = np.asarray(self.masks, dtype=bool)
            if self.masks.ndim != 3 or self.masks.shape[0] != n:
                raise ValueError(f"masks must be (N, H, W) with N={n}, got shape {self.masks.shape}")
        if self.mask_quality is None:
            self.mask_quality = np.ones(n)
        self.mask_quality = np.asarray(self.mask_quality, dtype=np.float64).reshape(n)

    def __len__(self) -> int:
        return self.boxes.shape[0]

    @classmethod
    def empty(cls, height: int | None = None, width: int | None = None) -> "Detections":
        masks = None if height is None else np.zeros((0, height, width), dtype=bool)
        return cls(np.zeros((0, 4)), np.zeros(0), np.zeros(0, np.int64), masks)

    @staticmethod
    def concatenate(first: "Detections", second: "Detections") -> "Detections":
        """Both sets in one; masks are kept only when both have them."""
        masks = None
        if first.masks is not None and second.masks is not None:
            masks = np.concatenate([first.masks, second.masks])
        return Detections(np.concatenate([first.boxes, second.boxes]), np.concatenate([first.scores, second.scores]),
                          np.concatenate([first.class_ids, second.class_ids]), masks,
                          np.concatenate([first.mask_quality, second.mask_quality]))

    def subset(self, index: np.ndarray) -> "Detections":
        index = np.asarray(index, dtype=np.int64)
        return Detections(self.boxes[index], self.scores[index], self.class_ids[index],
                          None if self.masks is None else self.masks[index], self.mask_quality[index])
