"""The project's ROS messages without ROS: a `rosbags` type store and conversions to and from it.

`typestore()` is the ROS 2 Kilted store of `rosbags` with `predrel_ros/msg/*` registered from the
package's own .msg files (found by `message_directory()`), so bags are written and read with no
rclpy. The `*_message` functions build rosbags message objects; the `*_from_message` functions read
fields by name only, so they accept rosbags objects and rclpy messages alike.
"""
from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from predrel_ros.core import masks
from predrel_ros.core.entities import Entity
from predrel_ros.core.errors import UserError
from predrel_ros.core.frame import CAMERA_FRAME_ID, PRIMITIVE_LABELS, CameraIntrinsics
from predrel_ros.predicates.estimate import EVIDENCE_FACTORS, PredicateEstimate

PACKAGE = "predrel_ros"
#: where the message definitions may be (besides $PREDREL_MSG_DIR): the source tree, then the
#: share/ folders of a colcon install
_MSG_ENV = "PREDREL_MSG_DIR"

_EVIDENCE_FIELDS = {name: f"q_{name}" for name in EVIDENCE_FACTORS}


def message_directory() -> Path:
    """The folder holding predrel_ros's .msg files.

    Searched in order: $PREDREL_MSG_DIR, the source checkout (<repo>/msg next to src/), and
    <prefix>/share/predrel_ros/msg for every prefix in $AMENT_PREFIX_PATH.
    """
    candidates = []
    if os.environ.get(_MSG_ENV):
        candidates.append(Path(os.environ[_MSG_ENV]))
    candidates.append(Path(__file__).resolve().parents[4] / "msg")
    for prefix in filter(None, os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep)):
        candidates.append(Path(prefix) / "share" / PACKAGE / "msg")
    for candidate in candidates:
        if (candidate / "EntityArray.msg").is_file():
            return candidate
    raise UserError("cannot find predrel_ros's message definitions (msg/EntityArray.msg); looked in "
                    + ", ".join(str(c) for c in candidates) + f". Set {_MSG_ENV} to the msg folder.")


@functools.lru_cache(maxsize=1)
def typestore():
    """The rosbags type store (ROS 2 Kilted) with predrel_ros/msg/* registered."""
    from rosbags.typesys import Stores, get_types_from_msg, get_typestore

    store = get_typestore(Stores.ROS2_KILTED)
    types: dict = {}
    for path in sorted(message_directory().glob("*.msg")):
        types.update(get_types_from_msg(path.read_text(), f"{PACKAGE}/msg/{path.stem}"))
    store.register(types)
    return store


def msgtype(name: str) -> str:
    """Full rosbags type name of one of our messages, e.g. "EntityArray" -> predrel_ros/msg/EntityArray."""
    return f"{PACKAGE}/msg/{name}"


def _cls(type_name: str):
    return typestore().types[type_name]


def header(stamp_ns: int, frame_id: str = CAMERA_FRAME_ID):
    time = _cls("builtin_interfaces/msg/Time")(sec=int(stamp_ns // 1_000_000_000),
                                               nanosec=int(stamp_ns % 1_000_000_000))
    return _cls("std_msgs/msg/Header")(stamp=time, frame_id=frame_id)


def stamp_ns_of(msg: Any) -> int:
    """Nanoseconds of msg.header.stamp."""
    stamp = msg.header.stamp
    return int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec)


# ---------------------------------------------------------------- images and camera info

def image_message(image: np.ndarray, stamp_ns: int, frame_id: str = CAMERA_FRAME_ID):
    """sensor_msgs/Image from an H x W x 3 uint8 RGB image (rgb8) or an H x W float32 depth in
    metres (32FC1)."""
    image = np.ascontiguousarray(image)
    if image.ndim == 3 and image.shape[2] == 3 and image.dtype == np.uint8:
        encoding, step = "rgb8", image.shape[1] * 3
    elif image.ndim == 2 and image.dtype == np.float32:
        encoding, step = "32FC1", image.shape[1] * 4
    else:
        raise ValueError(f"image_message: expected HxWx3 uint8 or HxW float32, got {image.shape} {image.dtype}")
    return _cls("sensor_msgs/msg/Image")(
        header=header(stamp_ns, frame_id), height=image.shape[0], width=image.shape[1],
        encoding=encoding, is_bigendian=0, step=step,
        data=np.frombuffer(image.tobytes(), dtype=np.uint8))


def image_from_message(msg: Any) -> np.ndarray:
    """sensor_msgs/Image -> numpy: RGB uint8 H x W x 3 for colour encodings (rgb8, bgr8, rgba8,
    bgra8, mono8), float32 metres H x W for depth (32FC1; 16UC1 is read as millimetres)."""
    import cv2

    height, width, step = int(msg.height), int(msg.width), int(msg.step)
    data = np.frombuffer(bytes(msg.data) if not isinstance(msg.data, np.ndarray) else msg.data, np.uint8)
    encoding = msg.encoding.lower()
    channels = {"rgb8": 3, "bgr8": 3, "rgba8": 4, "bgra8": 4, "mono8": 1}
    if encoding in channels:
        rows = data[:height * step].reshape(height, step)[:, :width * channels[encoding]]
        pixels = rows.reshape(height, width, channels[encoding])
        if encoding == "rgb8":
            return pixels.copy()
        conversion = {"bgr8": cv2.COLOR_BGR2RGB, "rgba8": cv2.COLOR_RGBA2RGB,
                      "bgra8": cv2.COLOR_BGRA2RGB, "mono8": cv2.COLOR_GRAY2RGB}[encoding]
        return cv2.cvtColor(np.ascontiguousarray(pixels), conversion)
    if encoding in ("32fc1", "16uc1"):
        dtype = np.dtype(np.float32 if encoding == "32fc1" else np.uint16)
        dtype = dtype.newbyteorder(">" if msg.is_bigendian else "<")
        rows = data[:height * step].reshape(height, step)[:, :width * dtype.itemsize]
        values = np.ascontiguousarray(rows).view(dtype).reshape(height, width)
        if encoding == "16uc1":
            depth = values.astype(np.float32) / 1000.0
            depth[values == 0] = np.nan
            return depth
        return values.astype(np.float32)
    raise UserError(f"unsupported image encoding {msg.encoding!r}; expected rgb8, bgr8, rgba8, bgra8, "
                    f"mono8, 32FC1 or 16UC1")


def camera_info_message(camera: CameraIntrinsics, stamp_ns: int):
    K = camera.K
    P = np.hstack([K, np.zeros((3, 1))])
    cls = _cls("sensor_msgs/msg/CameraInfo")
    roi = _cls("sensor_msgs/msg/RegionOfInterest")(x_offset=0, y_offset=0, height=0, width=0, do_rectify=False)
    return cls(header=header(stamp_ns, camera.frame_id), height=camera.height, width=camera.width,
               distortion_model=camera.distortion_model, d=np.array(camera.distortion, dtype=np.float64),
               k=K.reshape(9).astype(np.float64), r=np.eye(3).reshape(9), p=P.reshape(12).astype(np.float64),
               binning_x=0, binning_y=0, roi=roi)


def camera_from_message(msg: Any) -> CameraIntrinsics:
    k = np.asarray(msg.k, dtype=np.float64).reshape(9)
    return CameraIntrinsics(width=int(msg.width), height=int(msg.height), fx=float(k[0]), fy=float(k[4]),
                            cx=float(k[2]), cy=float(k[5]), distortion=tuple(float(v) for v in msg.d),
                            distortion_model=msg.distortion_model or "plumb_bob",
                            frame_id=msg.header.frame_id or CAMERA_FRAME_ID)


# ---------------------------------------------------------------- entities, predicates, actions

def _no_degradation():
    return _cls(msgtype("DegradationState"))(kind="none", severity=0, seed=0, parameter_names=[],
                                             parameter_values=np.zeros(0, np.float64))


def entity_message(entity: Entity):
    rle = masks.encode(entity.mask) if entity.mask is not None else masks.MaskRLE(0, 0, 0, 0, np.zeros(0, np.uint32))
    depth = entity.depth
    has_point = entity.point3d is not None
    return _cls(msgtype("Entity"))(
        id=int(entity.id), label=entity.label, role=entity.role, box=entity.box.astype(np.float32),
        mask_x=rle.x, mask_y=rle.y, mask_width=rle.width, mask_height=rle.height,
        mask_rle=rle.runs.astype(np.uint32), score=entity.score, visibility=entity.visibility,
        track_quality=entity.track_quality, mask_quality=entity.mask_quality,
        centroid=np.asarray(entity.centroid[:2], dtype=np.float32),
        depth=float("nan") if depth is None else depth, has_point3d=has_point,
        point3d=(entity.point3d if has_point else np.zeros(3)).astype(np.float32))


def entity_array_message(entities: Sequence[Entity], frame_index: int, stamp_ns: int, width: int,
                         height: int, source: str = "ground_truth", frame_id: str = CAMERA_FRAME_ID):
    return _cls(msgtype("EntityArray"))(
        header=header(stamp_ns, frame_id), frame_index=int(frame_index), source=source,
        image_width=int(width), image_height=int(height), degradation=_no_degradation(),
        entities=[entity_message(entity) for entity in entities])


def entity_from_message(msg: Any, height: int, width: int, frame_index: int = 0) -> Entity:
    """Entity.msg -> Entity, decoding the mask at height x width (None when the message has none)."""
    mask = None
    if int(msg.mask_width) > 0:
        rle = masks.MaskRLE(int(msg.mask_x), int(msg.mask_y), int(msg.mask_width), int(msg.mask_height),
                            np.asarray(msg.mask_rle, dtype=np.uint32))
        mask = masks.decode(rle, height, width)
    centroid = [float(v) for v in msg.centroid]
    if np.isfinite(msg.depth):
        centroid.append(float(msg.depth))
    return Entity(id=int(msg.id), label=msg.label, role=msg.role, box=np.asarray(msg.box, dtype=np.float64),
                  mask=mask, score=float(msg.score), visibility=float(msg.visibility),
                  track_quality=float(msg.track_quality), mask_quality=float(msg.mask_quality),
                  centroid=np.array(centroid),
                  point3d=np.asarray(msg.point3d, dtype=np.float64) if msg.has_point3d else None,
                  frame_index=frame_index)


def entities_from_message(msg: Any) -> list[Entity]:
    """EntityArray.msg -> list of Entity (masks at the array's image size)."""
    return [entity_from_message(e, int(msg.image_height), int(msg.image_width), int(msg.frame_index))
            for e in msg.entities]


def predicate_message(estimate: PredicateEstimate):
    fields = {_EVIDENCE_FIELDS[name]: float(estimate.evidence[name]) for name in EVIDENCE_FACTORS}
    return _cls(msgtype("Predicate"))(
        name=estimate.name, group=estimate.group, subject=int(estimate.subject), object=int(estimate.object),
        value=estimate.value, code=int(estimate.code), confidence=float(estimate.confidence), **fields)


def predicate_array_message(estimates: Sequence[PredicateEstimate], frame_index: int, stamp_ns: int,
                            source: str = "ground_truth", frame_id: str = CAMERA_FRAME_ID):
    return _cls(msgtype("PredicateArray"))(
        header=header(stamp_ns, frame_id), frame_index=int(frame_index), source=source,
        degradation=_no_degradation(), predicates=[predicate_message(e) for e in estimates])


def predicates_from_message(msg: Any) -> list[PredicateEstimate]:
    frame_index = int(msg.frame_index)
    return [PredicateEstimate(name=p.name, subject=int(p.subject), object=int(p.object), value=p.value,
                              confidence=float(p.confidence),
                              evidence={name: float(getattr(p, field)) for name, field in _EVIDENCE_FIELDS.items()},
                              frame_index=frame_index, group=p.group)
            for p in msg.predicates]


def action_message(primitive: str, frame_index: int, stamp_ns: int, frame_id: str = CAMERA_FRAME_ID):
    """A one-hot ActionEstimate (ground truth: probability 1, trusted)."""
    if primitive not in PRIMITIVE_LABELS:
        raise ValueError(f"unknown primitive {primitive!r}; expected one of {PRIMITIVE_LABELS}")
    probabilities = np.array([1.0 if label == primitive else 0.0 for label in PRIMITIVE_LABELS], np.float32)
    return _cls(msgtype("ActionEstimate"))(
        header=header(stamp_ns, frame_id), frame_index=int(frame_index), primitive=primitive,
        probability=1.0, class_names=list(PRIMITIVE_LABELS), probabilities=probabilities,
        trusted=True, reason="")


def primitive_from_message(msg: Any) -> str:
    if msg.primitive not in PRIMITIVE_LABELS:
        raise UserError(f"ActionEstimate names unknown primitive {msg.primitive!r}")
    return msg.primitive

