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

Which topics hold the camera (`CameraTopics`: image, depth, camera info) is a name, or found by
message type (`AUTO`), or not read (`NONE`); `resolve_camera_topics` finds them:

- image: the one sensor_msgs/Image or CompressedImage topic that is not depth (no "depth" in its
  name, not a compressedDepth transport); several candidates are an error listing them;
- depth: the one Image topic with "depth" in its name or compressedDepth topic; several are an
  error listing them, none leaves depth out;
- camera info: the CameraInfo topic beside the image (image_transport's convention: `<dir>/image_raw`
  or `<dir>/image_raw/compressed` has `<dir>/camera_info`), else the only CameraInfo topic not beside
  the depth image, else none (camera info is optional).
"""
from __future__ import annotations

import json
import posixpath
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Mapping

import numpy as np

from predrel_ros.core.errors import UserError
from predrel_ros.core.frame import CAMERA_FRAME_ID, Frame
from predrel_ros.ros.messages.actions import ground_truth_action_to_msg, primitive_from_msg
from predrel_ros.ros.messages.camera_info import camera_info_to_camera, intrinsics_to_camera_info
from predrel_ros.ros.messages.entities import entities_from_msg, entities_to_msg
from predrel_ros.ros.messages.fields import header_at, stamp_to_ns
from predrel_ros.ros.messages.images import (
    COMPRESSED_CODECS,
    DEPTH_COMPRESSIONS,
    depth_image_to_metres,
    image_to_rgb8,
    numpy_to_compressed_depth,
    numpy_to_compressed_image,
    numpy_to_image,
)
from predrel_ros.ros.messages.message_classes import ROSBAGS, typestore
from predrel_ros.ros.messages.predicates import predicates_from_msg, predicates_to_msg
from predrel_ros.sources.dataset import EpisodeMeta

EPISODE_META_KEY = "predrel_ros.episode_meta"
STORAGES = ("mcap", "sqlite3")


@dataclass(frozen=True)
class BagTopics:
    """The topics of a recorded episode (None: a topic the bag does not have or that is not read)."""

    color: str | None = "/camera/color/image_raw"
    depth: str | None = "/camera/depth/image_raw"
    color_info: str | None = "/camera/color/camera_info"
    depth_info: str | None = "/camera/depth/camera_info"
    entities: str = "/ground_truth/entities"
    predicates: str = "/ground_truth/predicates"
    action: str = "/ground_truth/action"


#: a camera topic found by message type
AUTO = ""
#: a camera topic not read
NONE = "none"
IMAGE_TYPES = ("sensor_msgs/msg/Image", "sensor_msgs/msg/CompressedImage")
CAMERA_INFO_TYPE = "sensor_msgs/msg/CameraInfo"
#: image_transport's topic suffixes of the compressed transports
TRANSPORT_SUFFIXES = ("/compressed", "/compressedDepth")


@dataclass(frozen=True)
class CameraTopics:
    """Which topics hold the camera: a topic name, AUTO (found by message type) or NONE (not read)."""

    image: str = AUTO
    depth: str = AUTO
    camera_info: str = AUTO


def add_camera_topic_arguments(parser) -> None:
    """The --image-topic, --depth-topic and --camera-info-topic flags of a command that reads bags."""
    group = parser.add_argument_group("bag topics (default: found by message type)")
    group.add_argument("--image-topic", default=AUTO, metavar="TOPIC",
                       help="colour image topic, sensor_msgs/Image or CompressedImage (jpeg, png)")
    group.add_argument("--depth-topic", default=AUTO, metavar="TOPIC",
                       help=f"depth image topic, Image or compressedDepth CompressedImage; {NONE!r}: no depth")
    group.add_argument("--camera-info-topic", default=AUTO, metavar="TOPIC",
                       help=f"sensor_msgs/CameraInfo topic (default: the one beside the image); {NONE!r}: none")


def camera_topics_from_args(args) -> CameraTopics:
    """The CameraTopics of the flags of `add_camera_topic_arguments`."""
    return CameraTopics(image=args.image_topic, depth=args.depth_topic, camera_info=args.camera_info_topic)


def _is_depth_topic(topic: str, msgtype: str) -> bool:
    return topic.endswith("/compressedDepth") or (msgtype == IMAGE_TYPES[0] and "depth" in topic.lower())


def camera_info_beside(image_topic: str) -> str:
    """image_transport's camera info topic of `image_topic`: `<dir>/camera_info`."""
    base = image_topic
    for suffix in TRANSPORT_SUFFIXES:
        if base.endswith(suffix):
            base = base[: -len(suffix)]
    return posixpath.join(posixpath.dirname(base), "camera_info")


def _listed(topic_types: Mapping[str, str], topics) -> str:
    return ", ".join(f"{topic} ({topic_types[topic].rsplit('/', 1)[-1]})" for topic in sorted(topics))


def _chosen(where: str, role: str, flag: str, requested: str, candidates: list[str],
            topic_types: Mapping[str, str], types: tuple[str, ...], required: bool) -> str | None:
    if requested == NONE:
        if required:
            raise UserError(f"{where}: the colour image cannot be left out ({flag} {NONE!r})")
        return None
    if requested != AUTO:
        if requested not in topic_types:
            raise UserError(f"{where}: no {role} topic {requested!r}; the bag has {_listed(topic_types, topic_types)}")
        if topic_types[requested] not in types:
            raise UserError(f"{where}: {role} topic {requested!r} is {topic_types[requested]}; expected one of {types}")
        return requested
    if len(candidates) > 1:
        raise UserError(f"{where}: several {role} topics: {_listed(topic_types, candidates)}; choose one with "
                        f"{flag} TOPIC" + ("" if required else f" (or {flag} {NONE} to leave it out)"))
    if not candidates:
        if required:
            raise UserError(f"{where}: no colour image topic (sensor_msgs/Image or CompressedImage); the bag has "
                            f"{_listed(topic_types, topic_types) or 'no topics'}")
        return None
    return candidates[0]


def resolve_camera_topics(topic_types: Mapping[str, str], camera: CameraTopics = CameraTopics(),
                          where: str = "bag") -> BagTopics:
    """The bag topics of `camera` in a bag of `topic_types` (topic -> message type): see the module
    docstring; UserError naming the candidates when the choice is not unique."""
    images = [t for t, kind in topic_types.items() if kind in IMAGE_TYPES]
    color = _chosen(where, "colour image", "--image-topic", camera.image,
                    [t for t in images if not _is_depth_topic(t, topic_types[t])], topic_types, IMAGE_TYPES, True)
    depth = _chosen(where, "depth image", "--depth-topic", camera.depth,
                    [t for t in images if _is_depth_topic(t, topic_types[t]) and t != color],
                    topic_types, IMAGE_TYPES, False)
    infos = [t for t, kind in topic_types.items() if kind == CAMERA_INFO_TYPE]
    depth_info = camera_info_beside(depth) if depth is not None and camera_info_beside(depth) in infos else None
    if camera.camera_info == AUTO and camera_info_beside(color) in infos:
        color_info = camera_info_beside(color)
    else:
        color_info = _chosen(where, "camera info", "--camera-info-topic", camera.camera_info,
                             [t for t in infos if t != depth_info], topic_types, (CAMERA_INFO_TYPE,), False)
    return BagTopics(color=color, depth=depth, color_info=color_info, depth_info=depth_info)


class BagWriter:
    """Writes frames (with their ground truth when present) to a new rosbag2 folder.

    storage "mcap" (chunks compressed with zstd, as `ros2 bag record -s mcap
    --compression-mode ...` would read them) or "sqlite3" (uncompressed). image_codec "raw" writes
    rgb8 Images, "jpeg" or "png" CompressedImages (name the topics `.../compressed` as
    image_transport does); compressed_depth "png" or "rvl" writes depth as a 16UC1 compressedDepth
    CompressedImage of that compression ("": 32FC1 Images).
    """

    def __init__(self, path: Path | str, storage: str = "mcap", meta: EpisodeMeta | None = None,
                 topics: BagTopics = BagTopics(), image_codec: str = "raw", compressed_depth: str = "") -> None:
        from rosbags.rosbag2 import StoragePlugin, Writer
        from rosbags.rosbag2.enums import CompressionFormat, CompressionMode

        if storage not in STORAGES:
            raise UserError(f"unknown bag storage {storage!r}; expected one of {STORAGES}")
        self.path = Path(path)
        if self.path.exists():
            raise UserError(f"{self.path} already exists; a bag is written to a new folder")
        if image_codec not in ("raw",) + tuple(COMPRESSED_CODECS):
            raise UserError(f"unknown image codec {image_codec!r}; expected raw or one of {tuple(COMPRESSED_CODECS)}")
        self.topics = topics
        self.image_codec = image_codec
        if compressed_depth not in ("",) + DEPTH_COMPRESSIONS:
            raise UserError(f"unknown depth compression {compressed_depth!r}; expected one of {DEPTH_COMPRESSIONS} "
                            f"or '' (raw)")
        self.compressed_depth = compressed_depth
        self.store = typestore()
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
        header = header_at(stamp, CAMERA_FRAME_ID, classes=ROSBAGS)
        if self.image_codec == "raw":
            image = numpy_to_image(frame.rgb, "rgb8", header, classes=ROSBAGS)
        else:
            image = numpy_to_compressed_image(frame.rgb, self.image_codec, header, classes=ROSBAGS)
        self._write(topics.color, image, stamp)
        if frame.camera is not None:
            info = intrinsics_to_camera_info(frame.camera, header_at(stamp, frame.camera.frame_id, classes=ROSBAGS),
                                             classes=ROSBAGS)
            self._write(topics.color_info, info, stamp)
        if frame.depth is not None:
            if self.compressed_depth:
                depth = numpy_to_compressed_depth(frame.depth, "16UC1", header, compression=self.compressed_depth,
                                                  classes=ROSBAGS)
            else:
                depth = numpy_to_image(frame.depth, "32FC1", header, classes=ROSBAGS)
            self._write(topics.depth, depth, stamp)
            if frame.camera is not None:
                self._write(topics.depth_info, info, stamp)
        if frame.entities is not None:
            self._write(topics.entities, entities_to_msg(
                frame.entities, frame_index=frame.index, image_width=frame.width, image_height=frame.height,
                source="ground_truth", header=header, classes=ROSBAGS), stamp)
        if frame.predicates is not None:
            self._write(topics.predicates, predicates_to_msg(
                frame.predicates, frame_index=frame.index, source="ground_truth", header=header,
                classes=ROSBAGS), stamp)
        if frame.primitive is not None:
            self._write(topics.action, ground_truth_action_to_msg(frame.primitive, frame.index, header,
                                                                  classes=ROSBAGS), stamp)

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

    store = typestore()
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

    def __init__(self, path: Path | str, camera: CameraTopics = CameraTopics(), slop_ns: int = 0,
                 max_pending: int = 8) -> None:
        from rosbags.rosbag2 import Reader

        self.path = Path(path)
        if not self.path.exists():
            raise UserError(f"{self.path}: no such bag")
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
        self.topics = resolve_camera_topics(self._topic_types, camera, where=str(self.path))
        self.meta = EpisodeMeta.from_dict(json.loads(custom[EPISODE_META_KEY])) if EPISODE_META_KEY in custom else None

    @property
    def topic_types(self) -> dict[str, str]:
        return dict(self._topic_types)

    def frames(self) -> Iterator[Frame]:
        from rosbags.rosbag2 import Reader

        roles = {topic: role for role, topic in vars(self.topics).items()
                 if topic in self._topic_types and role != "depth_info"}
        with Reader(self.path) as reader:
            wanted = [c for c in reader.connections if c.topic in roles]
            store = _bag_typestore(wanted)
            pending: OrderedDict[int, dict] = OrderedDict()  # stamp -> {role: message}
            state = {"camera": None, "index": 0}
            for connection, _, raw in reader.messages(connections=wanted):
                message = store.deserialize_cdr(raw, connection.msgtype)
                role = roles[connection.topic]
                try:
                    stamp = stamp_to_ns(message.header)
                except ValueError as error:
                    raise UserError(f"{self.path}: topic {connection.topic}: {error}") from None
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
        try:
            if "color_info" in parts:
                state["camera"] = camera_info_to_camera(parts["color_info"])
            rgb = _owned(image_to_rgb8(parts["color"]))
            depth = _owned(depth_image_to_metres(parts["depth"])) if "depth" in parts else None
            entities = entities_from_msg(parts["entities"]) if "entities" in parts else None
            predicates = predicates_from_msg(parts["predicates"]) if "predicates" in parts else None
            primitive = primitive_from_msg(parts["action"]) if "action" in parts else None
        except ValueError as error:
            raise UserError(f"{self.path}: the frame at {stamp} ns: {error}") from None
        index = state["index"]
        state["index"] += 1
        return Frame(index=index, stamp_ns=stamp, rgb=rgb, depth=depth, camera=state["camera"], entities=entities,
                     predicates=predicates, primitive=primitive, source="bag")


def _owned(pixels: np.ndarray) -> np.ndarray:
    """`pixels`, copied when they are a read-only view of a message's data (so a frame's arrays are
    writable and do not keep the bag's raw message alive)."""
    return pixels if pixels.flags.writeable else pixels.copy()
