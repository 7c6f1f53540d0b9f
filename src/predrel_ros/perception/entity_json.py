"""Entities as JSON: one self-contained document per frame (what `predrel detect` writes).

Masks use the Entity.msg run-length layout (`predrel_ros.core.masks`): {"x", "y", "width", "height",
"runs"} over the mask's bounding crop, or null for a box-only entity. `frame_from_json` reads a
document back into entities, so the files can feed predicate extraction offline.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from predrel_ros.core import masks
from predrel_ros.core.entities import Entity


def _plain(value: Any) -> Any:
    """JSON-safe copy of an attributes value (numpy scalars and arrays become Python numbers/lists)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


def entity_to_json(entity: Entity) -> dict:
    mask = None
    if entity.mask is not None:
        rle = masks.encode(entity.mask)
        mask = {"x": rle.x, "y": rle.y, "width": rle.width, "height": rle.height, "runs": rle.runs.tolist()}
    return {"id": int(entity.id), "label": entity.label, "role": entity.role,
            "box": [round(float(v), 3) for v in entity.box], "mask": mask,
            "score": entity.score, "visibility": entity.visibility, "track_quality": entity.track_quality,
            "mask_quality": entity.mask_quality, "centroid": [float(v) for v in entity.centroid],
            "point3d": None if entity.point3d is None else [float(v) for v in entity.point3d],
            "attributes": _plain(entity.attributes)}


def frame_to_json(entities: Sequence[Entity], frame_index: int, width: int, height: int,
                  stamp_ns: int | None = None, source: str = "perception") -> dict:
    return {"frame_index": int(frame_index), "stamp_ns": stamp_ns, "image_width": int(width),
            "image_height": int(height), "source": source,
            "entities": [entity_to_json(entity) for entity in entities]}


def frame_from_json(document: dict) -> list[Entity]:
    height, width = int(document["image_height"]), int(document["image_width"])
    entities = []
    for item in document["entities"]:
        mask = crop = None
        if item["mask"] is not None:
            m = item["mask"]
            rle = masks.MaskRLE(m["x"], m["y"], m["width"], m["height"], np.asarray(m["runs"], np.uint32))
            mask, crop = masks.decode(rle, height, width), (rle.x, rle.y, rle.width, rle.height)
        entities.append(Entity(id=item["id"], label=item["label"], role=item["role"], box=item["box"],
                               mask=mask, crop=crop, score=item["score"], visibility=item["visibility"],
                               track_quality=item["track_quality"], mask_quality=item["mask_quality"],
                               centroid=item["centroid"], point3d=item["point3d"],
                               frame_index=int(document["frame_index"]),
                               attributes=dict(item.get("attributes") or {})))
    return entities
