"""predrel_ros/Entity and EntityArray <-> `Entity` records, for rclpy and rosbags messages alike.

Masks travel as a run-length encoding over their bounding crop (`predrel_ros.core.masks`; an
all-false mask is sent as "no mask"). Depth: the message's `depth` carries the third centroid
coordinate (NaN when the centroid has none) and `point3d` the 3-D point, so both survive a round
trip, whichever of them an entity has (`Entity.depth` takes the point's Z first). The entity's
attributes dict is not carried.

Decoding refuses (ValueError) what no producer sends: an empty label, a box beyond
`BOX_IMAGE_MULTIPLE` times the image, an infinite or negative depth, an image size beyond
`fields.MAX_IMAGE_SIDE`, and (`TooLarge`) more entities than the receiver's bound.
"""
from __future__ import annotations

import math
from typing import Iterable

import numpy as np

from predrel_ros.core import masks
from predrel_ros.core.entities import Entity
from predrel_ros.ros.messages.degradations import degradation_or_none
from predrel_ros.ros.messages.fields import (
    MAX_ENTITIES_PER_MESSAGE,
    check_count,
    check_image_size,
    check_ros_string,
    header_or_default,
)
from predrel_ros.ros.messages.message_classes import ENTITY, ENTITY_ARRAY, RCLPY, Message, MessageClasses

#: a box coordinate may lie this many image sizes from the origin (partly outside the image is fine)
BOX_IMAGE_MULTIPLE = 8
_NO_MASK = masks.MaskRLE(0, 0, 0, 0, np.zeros(0, np.uint32))
_UINT16_MAX = np.iinfo(np.uint16).max


def mask_fields(mask: np.ndarray | None, *, classes: MessageClasses = RCLPY) -> dict:
    """The mask fields of an Entity message (mask_x, mask_y, mask_width, mask_height, mask_rle) for
    `mask` (bool H x W, or None for no mask); ValueError when the crop exceeds their uint16 range."""
    rle = _NO_MASK if mask is None else masks.encode(mask)
    if max(rle.x + rle.width, rle.y + rle.height) > _UINT16_MAX:
        raise ValueError(f"Entity mask crop x={rle.x} y={rle.y} {rle.width}x{rle.height} exceeds the "
                         f"uint16 range of the mask fields")
    return {"mask_x": int(rle.x), "mask_y": int(rle.y), "mask_width": int(rle.width),
            "mask_height": int(rle.height), "mask_rle": classes.sequence(rle.runs, np.uint32)}


def mask_from_msg(msg: Message, height: int, width: int, decode: bool = True) -> np.ndarray | None:
    """Boolean height x width mask of an Entity message, or None when it carries no mask. With
    decode=False the mask is only checked (runs and crop), not built, and None is returned."""
    if msg.mask_width == 0 or msg.mask_height == 0:
        return None
    try:
        rle = masks.MaskRLE(int(msg.mask_x), int(msg.mask_y), int(msg.mask_width), int(msg.mask_height),
                            np.asarray(msg.mask_rle, dtype=np.uint32))
        if not decode:
            masks.check_fits(rle, height, width)
            return None
        return masks.decode(rle, height, width)
    except ValueError as error:
        raise ValueError(f"Entity {msg.id}: mask_rle: {error}") from None


def entity_to_msg(entity: Entity, *, classes: MessageClasses = RCLPY) -> Message:
    """Entity message of `entity`."""
    check_ros_string(entity.label, f"Entity {entity.id}: label")
    if not entity.label:
        raise ValueError(f"Entity {entity.id}: the label is empty")
    centroid = entity.centroid
    has_point = entity.point3d is not None
    return classes.build(
        ENTITY, id=int(entity.id), label=entity.label, role=entity.role,
        box=np.asarray(entity.box, dtype=np.float32), **mask_fields(entity.mask, classes=classes),
        score=float(entity.score), visibility=float(entity.visibility), track_quality=float(entity.track_quality),
        mask_quality=float(entity.mask_quality), centroid=np.asarray(centroid[:2], dtype=np.float32),
        depth=float(centroid[2]) if centroid.size == 3 else math.nan, has_point3d=has_point,
        point3d=np.asarray(entity.point3d if has_point else np.zeros(3), dtype=np.float32))


def entity_from_msg(msg: Message, image_height: int, image_width: int, frame_index: int = 0,
                    decode_masks: bool = True) -> Entity:
    """Entity of an Entity message; masks are decoded at image_height x image_width (decode_masks=False:
    checked but left out, for a consumer of boxes, classes and visibility only, which keeps no
    image-sized data). A finite depth becomes the third centroid coordinate."""
    if not msg.label:
        raise ValueError(f"Entity {msg.id}: the label is empty")
    box = np.asarray(msg.box, dtype=np.float64)
    if image_width and image_height and np.all(np.isfinite(box)):
        bound = BOX_IMAGE_MULTIPLE * max(image_width, image_height)
        if np.any(np.abs(box) > bound):
            raise ValueError(f"Entity {msg.id}: box {box.tolist()} lies beyond {BOX_IMAGE_MULTIPLE} times the "
                             f"{image_width}x{image_height} image")
    depth = float(msg.depth)
    if math.isinf(depth) or depth < 0:
        raise ValueError(f"Entity {msg.id}: depth {depth} m; expected a finite depth >= 0, or NaN for unknown")
    centroid = [float(msg.centroid[0]), float(msg.centroid[1])]
    if math.isfinite(depth):
        centroid.append(depth)
    mask = mask_from_msg(msg, image_height, image_width, decode_masks)
    crop = None if mask is None else (int(msg.mask_x), int(msg.mask_y), int(msg.mask_width), int(msg.mask_height))
    return Entity(
        id=int(msg.id), label=msg.label, role=msg.role, box=box, mask=mask, crop=crop, score=float(msg.score),
        visibility=float(msg.visibility), track_quality=float(msg.track_quality),
        mask_quality=float(msg.mask_quality), centroid=np.asarray(centroid),
        point3d=np.asarray(msg.point3d, dtype=np.float64) if msg.has_point3d else None,
        frame_index=int(frame_index))


def entities_to_msg(entities: Iterable[Entity], *, frame_index: int, image_width: int, image_height: int,
                    source: str, header: Message | None = None, degradation: Message | None = None,
                    classes: MessageClasses = RCLPY) -> Message:
    """EntityArray of one frame; every mask must have the image's size."""
    check_ros_string(source, "EntityArray.source")
    converted = []
    for i, entity in enumerate(entities):
        if entity.mask is not None and entity.mask.shape != (image_height, image_width):
            raise ValueError(f"entities[{i}] (id {entity.id}): mask shape {entity.mask.shape} differs "
                             f"from the image size {image_height}x{image_width}")
        converted.append(entity_to_msg(entity, classes=classes))
    return classes.build(
        ENTITY_ARRAY, header=header_or_default(header, classes), frame_index=int(frame_index), source=source,
        image_width=int(image_width), image_height=int(image_height),
        degradation=degradation_or_none(degradation, classes), entities=converted)


def entities_from_msg(msg: Message, decode_masks: bool = True,
                      max_entities: int = MAX_ENTITIES_PER_MESSAGE) -> list[Entity]:
    """Entities of an EntityArray, with frame_index and masks at the array's image size
    (decode_masks=False: masks checked, not built); TooLarge beyond `max_entities`, before any work."""
    check_count(len(msg.entities), max_entities, "EntityArray.entities", "max_entities_per_message")
    height, width = int(msg.image_height), int(msg.image_width)
    check_image_size(width, height, "EntityArray", allow_unset=True)
    entities = []
    for i, entity_msg in enumerate(msg.entities):
        try:
            entities.append(entity_from_msg(entity_msg, height, width, msg.frame_index, decode_masks))
        except ValueError as error:
            raise ValueError(f"EntityArray.entities[{i}]: {error}") from None
    return entities
