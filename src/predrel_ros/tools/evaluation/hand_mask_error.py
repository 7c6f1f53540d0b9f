"""What a hand detector such as MediaPipe does to a hand's mask: the exact mask made coarse, for evaluation.

A mask drawn from a landmark model is late, smooth and off by a few pixels. Per frame, in this order:
  - lag: the mask is the one of `lag_frames` frames before (the detector runs on an older image);
  - polygon smoothing: each part's outline becomes a polygon within `polygon_px` of it
    (`cv2.approxPolyDP`), filled: no holes, shallow notches cut across, like a hull of landmarks;
  - grown or shrunk by a radius drawn from 1..`max_grow_px` pixels (either way, equally likely);
  - shifted by a vector of length drawn from 1..`max_shift_px` pixels in a random direction.
The rng decides every draw, so the same seed gives the same masks. It lives with the evaluation, not
with the degradations: the lag keeps a stream history, which a degradation (a pure function of seed,
frame and inputs) never does.
"""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np


@dataclass(frozen=True)
class HandMaskErrorConfig:
    lag_frames: int = 1
    polygon_px: float = 2.0  # largest distance of the polygon from the exact outline
    max_grow_px: int = 3  # grown or shrunk by 1..max_grow_px pixels (0: neither)
    max_shift_px: int = 3  # shifted by 1..max_shift_px pixels (0: not shifted)

    def __post_init__(self) -> None:
        for name in ("lag_frames", "max_grow_px", "max_shift_px"):
            if getattr(self, name) < 0:
                raise ValueError(f"hand mask error: {name} must be at least 0, got {getattr(self, name)}")
        if self.polygon_px < 0:
            raise ValueError(f"hand mask error: polygon_px must be at least 0, got {self.polygon_px}")


class HandMaskError:
    """Coarse hand masks of one stream of frames: call once per frame, in order; `reset` between streams."""

    def __init__(self, config: HandMaskErrorConfig | None = None) -> None:
        self.config = config or HandMaskErrorConfig()
        self._history: list[np.ndarray] = []

    def reset(self) -> None:
        self._history = []

    def __call__(self, exact: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The detector's mask for this frame's exact (H, W) bool hand mask."""
        config = self.config
        self._history = (self._history + [exact])[-(config.lag_frames + 1):]
        mask = self._history[0].astype(np.uint8)
        if config.polygon_px > 0 and mask.any():
            contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
            mask = np.zeros_like(mask)
            polygons = [cv2.approxPolyDP(contour, config.polygon_px, True) for contour in contours]
            cv2.fillPoly(mask, polygons, 1)
        if config.max_grow_px:
            radius = int(rng.integers(1, config.max_grow_px + 1))
            kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * radius + 1,) * 2)
            mask = (cv2.dilate if rng.random() < 0.5 else cv2.erode)(mask, kernel)
        if config.max_shift_px:
            length, angle = rng.integers(1, config.max_shift_px + 1), rng.uniform(0, 2 * np.pi)
            shift = np.float32([[1, 0, round(length * np.cos(angle))], [0, 1, round(length * np.sin(angle))]])
            mask = cv2.warpAffine(mask, shift, mask.shape[::-1], flags=cv2.INTER_NEAREST, borderValue=0)
        return mask.astype(bool)
