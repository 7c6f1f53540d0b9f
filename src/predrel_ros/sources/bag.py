"""rosbag2 bags (MCAP or sqlite3) through `rosbags`, without rclpy.

Topics of a recorded episode (`BagTopics`, all messages of one frame share header.stamp, which is
also the bag's log time, and header.frame_id "camera_color_optical_frame"):

| topic | type | content |
| --- | --- | --- |
| /camera/color/image_raw | sensor_msgs/Image | rgb8 |
| /camera/depth/image_raw | sensor_msgs/Image | 32FC1 metres, aligned to the colour image |
| /camera/color/camera_info, /camera/depth/camera_info | sensor_msgs/CameraInfo | same intrinsics |
| /ground_truth/entities | predrel_ros/EntityArray | source "ground_truth" |
| /ground_truth/predicates | predrel_ros/PredicateArray | confidence 1, evidence 1 |
| /ground_truth/action | predrel_ros/ActionEstimate | one-hot primitive, trusted |

The episode's `EpisodeMeta` travels as JSON in the bag's custom data (key `EPISODE_META_KEY`).

`BagReader(path).frames()` yields `predrel_ros.core.frame.Frame`s from any bag with a colour image
topic: other topics are attached to the colour frame with the same stamp (or the nearest one within
`slop_ns`); camera info is sticky (the latest one applies). Missing topics leave the frame's fields
None, so a robot's bag without ground truth reads the same way.
"""
from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from predrel_ros.core.errors import UserError
from predrel_ros.ros.messages import bag_messages as messages
from predrel_ros.sources.dataset import EpisodeMeta
from predrel_ros.core.frame import Frame

EPISODE_META_KEY = "predrel_ros.episode_meta"
STORAGES = ("mcap", "sqlite3")


@dataclass(frozen=True)
class BagTopics:
    color: str = "/camera/color/image_raw"
    depth: str = "/camera/depth/image_raw"
    color_info: str = "/camera/color/camera_info"
    depth_info: str = "/camera/depth/camera_info"
    entities: str = "/ground_truth/entities"
    predicates: str = "/ground_truth/predicates"
    action: str = "/ground_truth/action"


class BagWriter:
    """Writes frames (with their ground truth when present) to a new rosbag2 folder.

    storage "mcap" (chunks compressed with zstd, as `ros2 bag record -s mcap
    --compression-mode ...` would read them) or "sqlite3" (uncompressed).
    """

    def __init__(self, path: Path | str, storage: str = "mcap", meta: EpisodeMeta | None = None,
                 topics: BagTopics = BagTopics()) -> None:
        from rosbags.rosbag2 import StoragePlugin, Writer
        from rosbags.rosbag2.enums import CompressionFormat, CompressionMode

        if storage not in STORAGES:
            raise UserError(f"unknown bag storage {storage!r}; expected one of {STORAGES}")
        self.path = Path(path)
        if self.path.exists():
            raise UserError(f"{self.path} already exists; a bag is written to a new folder")
        self.topics = topics
        self.store = messages.typestore()
        plugin = StoragePlugin.MCAP if storage == "mcap" else StoragePlugin.SQLITE3
        self._writer = Writer(self.path, version=9, storage_plugin=plugin)
        if storage == "mcap":
            self._writer.set_compression(CompressionMode.STORAGE, CompressionFormat.ZSTD)
        if meta is not None:
            self._writer.set_custom_data(EPISODE_META_KEY, json.dumps(meta.to_dict(), sort_keys=True))
        self._writer.open()
        self._connections: dict[str, object] = {}

    def _connection(self, topic: str, msgtype: str):
        if topic not in self._connections:
            self._connections[topic] = self._writer.add_connection(topic, msgtype, typestore=self.store)
        return self._connections[topic]

    def _write(self, topic: str, message, stamp_ns: int) -> None:
        connection = self._connection(topic, message.__msgtype__)
        self._writer.write(connection, stamp_ns, self.store.serialize_cdr(message, message.__msgtype__))

    def write(self, frame: Frame) -> None:
        stamp = frame.stamp_ns
        topics = self.topics
        self._write(topics.color, messages.image_message(frame.rgb, stamp), stamp)
        if frame.camera is not None:
            info = messages.camera_info_message(frame.camera, stamp)
            self._write(topics.color_info, info, stamp)
        if frame.depth is not None:
            self._write(topics.depth, messages.image_message(frame.depth, stamp), stamp)
            if frame.camera is not None:
                self._write(topics.depth_info, info, stamp)
        if frame.entities is not None:
            self._write(topics.entities, messages.entity_array_message(
                frame.entities, frame.index, stamp, frame.width, frame.height), stamp)
        if frame.predicates is not None:
            self._write(topics.predicates, messages.predicate_array_message(
                frame.predicates, frame.index, stamp), stamp)
        if frame.primitive is not None:
            self._write(topics.action, messages.action_message(frame.primitive, frame.index, stamp), stamp)

    def close(self) -> Path:
        self._writer.close()
        return self.path

    def __enter__(self) -> "BagWriter":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.close()


def write_bag(path: Path | str, frames, storage: str = "mcap", meta: EpisodeMeta | None = None) -> Path:
    with BagWriter(path, storage=storage, meta=meta) as writer:
        for frame in frames:
            writer.write(frame)
    return Path(path)


def _bag_typestore(connections):
    """The project's store, plus the bag's own definitions of types it does not know (so bags
    of other packages with embedded definitions deserialize)."""
    from rosbags.typesys import get_types_from_msg

    store = messages.typestore()
    unknown = {}
    for connection in connections:
        if connection.msgtype in store.types or not connection.msgdef.data:
            continue
        try:
            unknown.update(get_types_from_msg(connection.msgdef.data, connection.msgtype))
        except Exception as error:  # a malformed definition only makes that topic unreadable
            raise UserError(f"topic {connection.topic}: cannot parse the bag's definition of "
                            f"{connection.msgtype} ({error})") from None
    if unknown:
        store.register(unknown)
    return store


class BagReader:
    """Frames of a rosbag2 folder (or a single .mcap / .db3 file)."""

    def __init__(self, path: Path | str, topics: BagTopics = BagTopics(), slop_ns: int = 0,
                 max_pending: int = 8) -> None:
        from rosbags.rosbag2 import Reader

        self.path = Path(path)
        if not self.path.exists():
            raise UserError(f"{self.path}: no such bag")
        self.topics = topics
        self.slop_ns = int(slop_ns)
        self.max_pending = int(max_pending)
        if self.slop_ns < 0 or self.max_pending < 1:
            raise ValueError(f"slop_ns must be >= 0 and max_pending >= 1, got {slop_ns}, {max_pending}")
        try:
            with Reader(self.path) as reader:
                self._topic_types = {c.topic: c.msgtype for c in reader.connections}
                self.message_count = reader.message_count
                metadata = getattr(reader.storage, "metadata", None)
                custom = getattr(metadata, "custom", None) or {}
        except Exception as error:
            raise UserError(f"{self.path}: not a readable rosbag2 bag ({error})") from None
        if topics.color not in self._topic_types:
            raise UserError(f"{self.path}: no colour image topic {topics.color!r}; the bag has "
                            f"{sorted(self._topic_types)}")
        self.meta = EpisodeMeta.from_dict(json.loads(custom[EPISODE_META_KEY])) if EPISODE_META_KEY in custom else None

    @property
    def topic_types(self) -> dict[str, str]:
        return dict(self._topic_types)

    def frames(self) -> Iterator[Frame]:
        from rosbags.rosbag2 import Reader

        roles = {topic: role for role, topic in vars(self.topics).items() if topic in self._topic_types}
        with Reader(self.path) as reader:
            wanted = [c for c in reader.connections if c.topic in roles]
            store = _bag_typestore(wanted)
            pending: OrderedDict[int, dict] = OrderedDict()  # stamp -> {role: message}
            state = {"camera": None, "index": 0}
            for connection, _, raw in reader.messages(connections=wanted):
                message = store.deserialize_cdr(raw, connection.msgtype)
                role = roles[connection.topic]
                stamp = messages.stamp_ns_of(message)
                pending.setdefault(stamp, {})[role] = message
                if role == "color":
                    colour_stamps = [s for s, parts in pending.items() if "color" in parts]
                    if len(colour_stamps) > self.max_pending:
                        yield self._emit(pending, colour_stamps[0], state)
            for stamp in [s for s, parts in sorted(pending.items()) if "color" in parts]:
                yield self._emit(pending, stamp, state)

    def _emit(self, pending: OrderedDict, stamp: int, state: dict) -> Frame:
        parts = pending.pop(stamp)
        for role in ("depth", "color_info", "entities", "predicates", "action"):
            if role not in parts and self.slop_ns:
                nearest = min((s for s, p in pending.items() if role in p and abs(s - stamp) <= self.slop_ns),
                              key=lambda s: abs(s - stamp), default=None)
                if nearest is not None:
                    parts[role] = pending[nearest].pop(role)
        for old in [s for s in pending if s < stamp - self.slop_ns and "color" not in pending[s]]:
            del pending[old]
        if "color_info" in parts:
            state["camera"] = messages.camera_from_message(parts["color_info"])
        index = state["index"]
        state["index"] += 1
        return Frame(
            index=index, stamp_ns=stamp, rgb=messages.image_from_message(parts["color"]),
            depth=messages.image_from_message(parts["depth"]) if "depth" in parts else None,
            camera=state["camera"],
            entities=messages.entities_from_message(parts["entities"]) if "entities" in parts else None,
            predicates=messages.predicates_from_message(parts["predicates"]) if "predicates" in parts else None,
            primitive=messages.primitive_from_message(parts["action"]) if "action" in parts else None,
            source="bag")
