"""Occlusion at the entity level: what a perfect perception front-end sees behind occluders.

The occlusion kind paints occluders into images (`Degrader.apply_image`), which a perception model
then has to cope with. For "oracle" runs (ground-truth entities instead of perception) and fast
tests of everything downstream of perception, `occlude_entities` applies the same occluders
(`Degrader.occluder_mask`) to the entities directly, as an ideal detector would report them:

- a masked entity loses its occluded pixels; its box shrinks to the pixels left (x2, y2 exclusive,
  as in the controlled set), its visibility is scaled by the share of pixels left and its centroid
  moves to their mean (a depth it had is kept);
- a box-only entity keeps its box; its visibility is scaled by the share of the box left visible;
- an entity with nothing left is not detected: it is absent from the output.

    occluded = Degrader("occlusion", 4, seed).occluder_mask((height, width), targets=entities)
    seen = occlude_entities(entities, occluded)
"""
from __future__ import annotations

import dataclasses
from typing import Sequence

import numpy as np

from predrel_ros.core.entities import Entity


def occlude_entities(entities: Sequence[Entity], occluded: np.ndarray) -> list[Entity]:
    """The entities as seen behind the occluded pixels (bool H x W); inputs are not modified."""
    occluded = np.asarray(occluded, dtype=bool)
    if occluded.ndim != 2:
        raise ValueError(f"occluded must be a 2-D boolean mask, got shape {occluded.shape}")
    if not occluded.any():
        return list(entities)
    height, width = occluded.shape
    out = []
    for entity in entities:
        if entity.mask is not None:
            if entity.mask.shape != occluded.shape:
                raise ValueError(f"entity {entity.id}: mask shape {entity.mask.shape} does not match the "
                                 f"occlusion mask {occluded.shape}")
            seen = _occluded_mask(entity, occluded)
            if seen is not None:
                out.append(seen)
            continue
        x1, y1, x2, y2 = np.clip(np.round(entity.box), 0, [width, height, width, height]).astype(int)
        area = (x2 - x1) * (y2 - y1)
        hidden = int(np.count_nonzero(occluded[y1:y2, x1:x2]))
        if area == 0 or hidden < area:
            kept = 1.0 if area == 0 else 1.0 - hidden / area
            out.append(dataclasses.replace(entity, visibility=entity.visibility * kept,
                                           attributes=dict(entity.attributes)))
    return out


def _occluded_mask(entity: Entity, occluded: np.ndarray) -> Entity | None:
    total = int(np.count_nonzero(entity.mask))
    if total == 0:
        return dataclasses.replace(entity, attributes=dict(entity.attributes))
    mask = entity.mask & ~occluded
    kept = int(np.count_nonzero(mask))
    if kept == total:
        return dataclasses.replace(entity, attributes=dict(entity.attributes))
    if kept == 0:
        return None
    ys, xs = np.nonzero(mask)
    centroid = [xs.mean(), ys.mean()]
    if entity.centroid is not None and entity.centroid.size == 3:
        centroid.append(float(entity.centroid[2]))
    return dataclasses.replace(entity, mask=mask, box=np.array([xs.min(), ys.min(), xs.max() + 1, ys.max() + 1], float),
                               visibility=entity.visibility * kept / total, centroid=np.asarray(centroid),
                               attributes=dict(entity.attributes))
