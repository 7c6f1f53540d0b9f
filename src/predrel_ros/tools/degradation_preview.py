"""Contact sheet: one row per degradation (variant), one column per severity 0..5, for a person to judge.

Rows: blur, occlusion, occlusion_flat (for comparison), the three illumination variants, low_resolution,
a frame_drop timeline (which of the next frames are delivered, repeated or dropped) and, when target
boxes are given, detection noise drawn as boxes (clean in white, noisy in colour: kept, interrupted
track, false detection).
Each cell is labelled with its severity and parameters. The sheet keeps the input's channel order.
"""
from __future__ import annotations

import dataclasses

import cv2
import numpy as np

from predrel_ros.core.entities import MANIPULATED_OBJECT, Entity
from predrel_ros.degradations.degrader import Degrader, check_image
from predrel_ros.degradations.frame_drop import FrameAction
from predrel_ros.degradations.options import ILLUMINATION_VARIANTS, DegradationOptions
from predrel_ros.degradations.table import (
    BLUR,
    DEFAULT_TABLE,
    DETECTION_NOISE,
    FRAME_DROP,
    ILLUMINATION,
    LOW_RESOLUTION,
    OCCLUSION,
    OCCLUSION_FLAT,
    SEVERITIES,
    ParameterTable,
)

#: frames shown in a frame_drop timeline cell
TIMELINE_FRAMES = 60
_FONT = cv2.FONT_HERSHEY_SIMPLEX
_FONT_SCALE = 0.36
_LINE_HEIGHT = 13
_LABEL_LINES = 2
_GAP = 4
_WHITE, _BLACK, _GREY = (255, 255, 255), (0, 0, 0), (60, 60, 60)
_ACTION_COLOURS = {FrameAction.DELIVER: (90, 170, 60), FrameAction.REPEAT: (40, 190, 230),
                   FrameAction.DROP: (50, 50, 200)}
_NOISE_COLOURS = {None: (60, 220, 60), "track_interrupted": (0, 200, 255), "false_detection": (60, 60, 255)}


def contact_sheet(image: np.ndarray, seed: int = 0, boxes: np.ndarray | None = None, cell_width: int = 320,
                  frame_index: int = 0, table: ParameterTable = DEFAULT_TABLE,
                  options: DegradationOptions | None = None) -> np.ndarray:
    """The sheet as one uint8 image. boxes: optional N x 4 target boxes (occlusion, detection noise)."""
    image = check_image(image)
    if image.ndim == 2:
        image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    options = options if options is not None else DegradationOptions()
    height, width = image.shape[:2]
    cell_height = max(1, int(round(height * cell_width / width)))
    rows = []
    for label, kind, row_options in _image_rows(options):
        cells = []
        for severity in SEVERITIES:
            degrader = Degrader(kind, severity, seed, table, row_options)
            degraded = degrader.apply_image(image, frame_index, boxes)
            cells.append(_labelled(_thumbnail(degraded, cell_width, cell_height), _caption(degrader)))
        rows.append((label, cells))
    rows.append(("frame_drop", [_labelled(_timeline(Degrader(FRAME_DROP, s, seed, table, options), frame_index,
                                                    cell_width, cell_height),
                                          _caption(Degrader(FRAME_DROP, s, seed, table, options)))
                                for s in SEVERITIES]))
    if boxes is not None and len(boxes):
        entities = [Entity(i, "object", MANIPULATED_OBJECT, box) for i, box in enumerate(np.asarray(boxes))]
        rows.append(("detection_noise", [
            _labelled(_noise_cell(image, entities, Degrader(DETECTION_NOISE, s, seed, table, options), frame_index,
                                  cell_width, cell_height),
                      _caption(Degrader(DETECTION_NOISE, s, seed, table, options)))
            for s in SEVERITIES]))
    return _assemble(rows)


def _image_rows(options: DegradationOptions) -> list[tuple[str, str, DegradationOptions]]:
    rows = [(BLUR, BLUR, options), (OCCLUSION, OCCLUSION, options), (OCCLUSION_FLAT, OCCLUSION_FLAT, options)]
    rows += [(f"illumination: {variant}", ILLUMINATION, dataclasses.replace(options, illumination_mode=variant))
             for variant in ILLUMINATION_VARIANTS]
    rows.append((LOW_RESOLUTION, LOW_RESOLUTION, options))
    return rows


def _caption(degrader: Degrader) -> list[str]:
    parts = [f"{name}={value:g}" for name, value in degrader.parameters().items() if name != "reference_size_px"]
    lines = [f"s={degrader.severity}"]
    for part in parts:
        if len(lines) < _LABEL_LINES and len(lines[-1]) + len(part) > 40:
            lines.append(part)
        else:
            lines[-1] += ("  " if lines[-1] else "") + part
    return lines


def _thumbnail(image: np.ndarray, width: int, height: int) -> np.ndarray:
    if image.shape[1] == width:
        return image
    interpolation = cv2.INTER_AREA if width < image.shape[1] else cv2.INTER_NEAREST
    return cv2.resize(image, (width, height), interpolation=interpolation)


def _labelled(cell: np.ndarray, lines: list[str]) -> np.ndarray:
    strip = np.full((_LINE_HEIGHT * _LABEL_LINES + 4, cell.shape[1], 3), _BLACK, np.uint8)
    for i, line in enumerate(lines[:_LABEL_LINES]):
        cv2.putText(strip, line, (4, _LINE_HEIGHT * (i + 1)), _FONT, _FONT_SCALE, _WHITE, 1, cv2.LINE_AA)
    return np.vstack([strip, cell])


def _timeline(degrader: Degrader, frame_index: int, width: int, height: int) -> np.ndarray:
    cell = np.full((height, width, 3), _GREY, np.uint8)
    bar_width = width / TIMELINE_FRAMES
    top, bottom = height // 3, 2 * height // 3
    for i in range(TIMELINE_FRAMES):
        action = degrader.decide_frame(frame_index + i, stream_start=frame_index).action
        x1, x2 = int(round(i * bar_width)), int(round((i + 1) * bar_width)) - 1
        cv2.rectangle(cell, (x1, top), (max(x1, x2), bottom), _ACTION_COLOURS[action], -1)
    y = bottom + _LINE_HEIGHT + 4
    for action, colour in _ACTION_COLOURS.items():
        x = 6 + 90 * list(_ACTION_COLOURS).index(action)
        cv2.rectangle(cell, (x, y - 9), (x + 9, y), colour, -1)
        cv2.putText(cell, action.value, (x + 13, y), _FONT, _FONT_SCALE, _WHITE, 1, cv2.LINE_AA)
    cv2.putText(cell, f"frames {frame_index}..{frame_index + TIMELINE_FRAMES - 1}", (6, top - 8), _FONT,
                _FONT_SCALE, _WHITE, 1, cv2.LINE_AA)
    return cell


def _noise_cell(image: np.ndarray, entities: list[Entity], degrader: Degrader, frame_index: int, width: int,
                height: int) -> np.ndarray:
    cell = _thumbnail(image, width, height).copy()
    scale = width / image.shape[1]

    def draw(box: np.ndarray, colour: tuple[int, int, int], thickness: int) -> None:
        x1, y1, x2, y2 = (np.asarray(box) * scale).round().astype(int)
        cv2.rectangle(cell, (x1, y1), (x2, y2), colour, thickness)

    for entity in entities:
        draw(entity.box, _WHITE, 1)
    for entity in degrader.apply_entities(entities, frame_index, image.shape):
        draw(entity.box, _NOISE_COLOURS[entity.attributes.get("detection_noise")], 2)
    return cell


def _assemble(rows: list[tuple[str, list[np.ndarray]]]) -> np.ndarray:
    label_width = 150
    lines = []
    for label, cells in rows:
        row_height = max(cell.shape[0] for cell in cells)
        name = np.full((row_height, label_width, 3), _BLACK, np.uint8)
        for i, word in enumerate(label.split(": ")):
            cv2.putText(name, word, (6, row_height // 2 + i * 16), _FONT, 0.5, _WHITE, 1, cv2.LINE_AA)
        parts = [name]
        for cell in cells:
            parts += [np.full((row_height, _GAP, 3), _BLACK, np.uint8), cell]
        lines.append(np.hstack(parts))
        lines.append(np.full((_GAP, lines[-1].shape[1], 3), _BLACK, np.uint8))
    return np.vstack(lines[:-1])
