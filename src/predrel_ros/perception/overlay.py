"""Overlay images: masks tinted per track id, boxes, and "id label role score" captions.

Lost tracks (not detected this frame, reported with their predicted box) are drawn as grey dashed
boxes. Colours are fixed per id, so a track keeps its colour across frames and an identity switch
shows as a colour change.
"""
from __future__ import annotations

from typing import Sequence

import cv2
import numpy as np

from predrel_ros.core.entities import Entity

MASK_ALPHA = 0.45
LOST_COLOUR = (160, 160, 160)


def id_colour(track_id: int) -> tuple[int, int, int]:
    """A bright BGR colour that depends only on the id (golden-ratio hue steps)."""
    hue = int((track_id * 0.618033988749895 % 1.0) * 179)
    hsv = np.uint8([[[hue, 200, 255]]])
    return tuple(int(c) for c in cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)[0, 0])


def draw_entities(image_bgr: np.ndarray, entities: Sequence[Entity]) -> np.ndarray:
    """A copy of `image_bgr` with the entities drawn on it."""
    canvas = np.ascontiguousarray(image_bgr).copy()
    scale = max(canvas.shape[0], canvas.shape[1]) / 640.0
    thickness = max(1, int(round(2 * scale)))
    for entity in entities:
        if entity.mask is not None and entity.mask.shape == canvas.shape[:2] and entity.mask.any():
            colour = np.array(id_colour(entity.id), np.float32)
            region = canvas[entity.mask].astype(np.float32)
            canvas[entity.mask] = (region * (1 - MASK_ALPHA) + colour * MASK_ALPHA).astype(np.uint8)
    for entity in entities:
        lost = entity.attributes.get("track_state") == "lost"
        colour = LOST_COLOUR if lost else id_colour(entity.id)
        x1, y1, x2, y2 = (int(round(v)) for v in entity.box)
        if lost:
            _dashed_rectangle(canvas, (x1, y1), (x2, y2), colour, thickness)
        else:
            cv2.rectangle(canvas, (x1, y1), (x2, y2), colour, thickness)
        caption = f"{entity.id} {entity.label}" + ("" if entity.role == entity.label else f" ({entity.role})")
        caption += " lost" if lost else f" {entity.score:.2f}"
        font_scale = 0.4 * scale
        (tw, th), baseline = cv2.getTextSize(caption, cv2.FONT_HERSHEY_SIMPLEX, font_scale, 1)
        top = max(y1 - th - baseline - 2, 0)
        cv2.rectangle(canvas, (x1, top), (x1 + tw + 2, top + th + baseline + 2), colour, -1)
        cv2.putText(canvas, caption, (x1 + 1, top + th + 1), cv2.FONT_HERSHEY_SIMPLEX, font_scale,
                    (0, 0, 0), 1, cv2.LINE_AA)
    return canvas


def _dashed_rectangle(canvas, p1, p2, colour, thickness, dash: int = 6) -> None:
    (x1, y1), (x2, y2) = p1, p2
    for start, end in (((x1, y1), (x2, y1)), ((x2, y1), (x2, y2)), ((x2, y2), (x1, y2)), ((x1, y2), (x1, y1))):
        length = int(np.hypot(end[0] - start[0], end[1] - start[1]))
        for offset in range(0, max(length, 1), 2 * dash):
            a = offset / max(length, 1)
            b = min(offset + dash, length) / max(length, 1)
            pa = (int(start[0] + (end[0] - start[0]) * a), int(start[1] + (end[1] - start[1]) * a))
            pb = (int(start[0] + (end[0] - start[0]) * b), int(start[1] + (end[1] - start[1]) * b))
            cv2.line(canvas, pa, pb, colour, thickness)
