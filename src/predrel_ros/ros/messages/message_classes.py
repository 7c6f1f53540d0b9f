"""Where the conversions get their message classes: rclpy's generated classes or a `rosbags` store.

Both kinds of message object have the same field names, so the decoders of predrel_ros.ros.messages
read fields by name and accept either. The encoders build messages through a `MessageClasses`:

- `RCLPY` (the default): the generated Python classes a node publishes (`sensor_msgs.msg.Image`,
  `predrel_ros.msg.EntityArray`, ...), imported on first use, so importing a conversion module
  never imports rclpy or a message package;
- `ROSBAGS`: the classes of `typestore()`, the `rosbags` ROS 2 Kilted store with the project's
  `msg/*.msg` registered, to write and read bags with no ROS install (predrel_ros.sources.bag).

An encoder builds a message with `classes.build(type_name, **fields)`, giving every field (rosbags
classes have no defaults), Python scalars (rclpy's field checks refuse numpy ones), and its numeric
sequences (`uint32[] mask_rle`, `uint8[] data`, ...) through `sequence()`: rclpy wants an
`array.array` (taken as is when ROS_PYTHON_CHECK_FIELDS is set, one memcpy otherwise), rosbags a
numpy array. Fixed-size arrays (`float32[4] box`) are numpy arrays of the field's dtype in both.
"""
from __future__ import annotations

import array
import functools
import importlib
import os
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

import numpy as np

from predrel_ros.core.errors import UserError

#: an rclpy or rosbags message object (the conversions read fields by name)
Message = Any

PACKAGE = "predrel_ros"
#: where the message definitions may be (besides the source tree and share/ of a colcon install)
MSG_DIR_VARIABLE = "PREDREL_MSG_DIR"

# full type names of the messages the conversions build
HEADER = "std_msgs/msg/Header"
TIME = "builtin_interfaces/msg/Time"
IMAGE = "sensor_msgs/msg/Image"
COMPRESSED_IMAGE = "sensor_msgs/msg/CompressedImage"
CAMERA_INFO = "sensor_msgs/msg/CameraInfo"
REGION_OF_INTEREST = "sensor_msgs/msg/RegionOfInterest"
ENTITY = f"{PACKAGE}/msg/Entity"
ENTITY_ARRAY = f"{PACKAGE}/msg/EntityArray"
PREDICATE = f"{PACKAGE}/msg/Predicate"
PREDICATE_ARRAY = f"{PACKAGE}/msg/PredicateArray"
DEGRADATION_STATE = f"{PACKAGE}/msg/DegradationState"
FRAME_INFO = f"{PACKAGE}/msg/FrameInfo"
ACTION_ESTIMATE = f"{PACKAGE}/msg/ActionEstimate"
PREDICATE_RELIABILITY = f"{PACKAGE}/msg/PredicateReliability"
RELIABILITY_REPORT = f"{PACKAGE}/msg/ReliabilityReport"

#: array.array type codes of the numeric sequence dtypes the messages use
_TYPECODES = {np.dtype(np.uint8): "B", np.dtype(np.uint32): "I", np.dtype(np.float32): "f",
              np.dtype(np.float64): "d"}
#: rosidl names of numeric element types (rclpy keeps their sequences in array.array)
_RCLPY_NUMBERS = {"uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64", "float", "double",
                  "octet"}


class MessageClasses(ABC):
    """Message classes by full type name (`classes["sensor_msgs/msg/Image"]`), messages built from
    their fields (`build`) and the value of a numeric sequence field (`sequence`)."""

    @abstractmethod
    def __getitem__(self, type_name: str) -> type: ...

    def build(self, type_name: str, **fields) -> Message:
        """A `type_name` message with these fields (all of them: rosbags classes have no defaults)."""
        return self[type_name](**fields)

    @abstractmethod
    def sequence(self, values, dtype) -> Any:
        """`values` (array-like, converted to `dtype`) as an unbounded sequence field's value."""


class RclpyClasses(MessageClasses):
    """rclpy's generated classes, imported when first asked for ("pkg/msg/Name" -> pkg.msg.Name)."""

    def __init__(self) -> None:
        self._classes: dict[str, tuple[type, tuple[str, ...]]] = {}  # type name -> (class, sequence fields)

    def _lookup(self, type_name: str) -> tuple[type, tuple[str, ...]]:
        found = self._classes.get(type_name)
        if found is None:
            package, kind, name = type_name.split("/")
            cls = getattr(importlib.import_module(f"{package}.{kind}"), name)
            sequences = tuple(field for field, field_type in cls.get_fields_and_field_types().items()
                              if field_type.startswith("sequence<") and field_type[9:-1] in _RCLPY_NUMBERS)
            found = self._classes[type_name] = (cls, sequences)
        return found

    def __getitem__(self, type_name: str) -> type:
        return self._lookup(type_name)[0]

    def build(self, type_name: str, **fields) -> Message:
        # Numeric sequences are set after construction: the generated __init__ copies a sequence
        # given to it before its setter copies it again (0.3 ms more for a 640x480 rgb8 Image).
        cls, sequence_fields = self._classes.get(type_name) or self._lookup(type_name)
        if not sequence_fields:
            return cls(**fields)
        sequences = [(name, fields.pop(name)) for name in sequence_fields if name in fields]
        msg = cls(**fields)
        for name, value in sequences:
            setattr(msg, name, value)
        return msg

    def sequence(self, values, dtype) -> array.array:
        out = array.array(_TYPECODES[np.dtype(dtype)])
        out.frombytes(memoryview(np.ascontiguousarray(values, dtype=dtype)).cast("B"))
        return out


class RosbagsClasses(MessageClasses):
    """The classes of `typestore()`."""

    def __getitem__(self, type_name: str) -> type:
        return typestore().types[type_name]

    def sequence(self, values, dtype) -> np.ndarray:
        return np.array(values, dtype=dtype).reshape(-1)  # a copy: the message owns its data


RCLPY = RclpyClasses()
ROSBAGS = RosbagsClasses()


def message_directory() -> Path:
    """The folder holding predrel_ros's .msg files.

    Searched in order: $PREDREL_MSG_DIR, the source checkout (<repo>/msg next to src/), and
    <prefix>/share/predrel_ros/msg for every prefix in $AMENT_PREFIX_PATH.
    """
    candidates = []
    if os.environ.get(MSG_DIR_VARIABLE):
        candidates.append(Path(os.environ[MSG_DIR_VARIABLE]))
    candidates.append(Path(__file__).resolve().parents[4] / "msg")
    for prefix in filter(None, os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep)):
        candidates.append(Path(prefix) / "share" / PACKAGE / "msg")
    for candidate in candidates:
        if (candidate / "EntityArray.msg").is_file():
            return candidate
    raise UserError("cannot find predrel_ros's message definitions (msg/EntityArray.msg); looked in "
                    + ", ".join(str(c) for c in candidates) + f". Set {MSG_DIR_VARIABLE} to the msg folder.")


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
