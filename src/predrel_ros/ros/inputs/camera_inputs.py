"""The camera inputs of the perception and degrade nodes: `image_raw`, and with `use_depth` an aligned
`depth/image_raw` and `camera_info`, validated and synchronised into one `CameraFrame`.

Transports as image_transport names them: `image_transport` raw (sensor_msgs/Image on `image_raw`)
or compressed (CompressedImage, jpeg or png, on `image_raw/compressed`); `depth_transport` raw or
compressedDepth (`depth/image_raw/compressedDepth`). As image_transport does, the suffix goes after
the remapped base name (`-r image_raw:=/camera/image_raw` subscribes `/camera/image_raw/compressed`).
Counters keep the stream names `image_raw` and `depth/image_raw` whatever the transport.

Each message is checked in its callback (encoding, sizes, step, degenerate sizes, finite
intrinsics); a bad one is counted `<topic>.malformed` and logged rate-limited. With depth, the three
streams are matched by stamp: message_filters' ApproximateTimeSynchronizer where it is importable
(ROS installs), else `synchroniser.ApproximateTimeSynchroniser`, which also reports each message
that leaves without partner (`<topic>.unsynchronised`) and counts a restart of the camera's clock
(`image_raw.restarts`, the stream-order policy; `CameraFrame.sequence` tells the node, which then
starts anew too). Without depth, the latest valid camera_info is attached to each image of its size
(a camera's info is the same for every frame), and nothing waits for it.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
from sensor_msgs.msg import CameraInfo, CompressedImage, Image

from predrel_ros.ros.inputs.synchroniser import ApproximateTimeSynchroniser
from predrel_ros.ros.kit.frame_counters import UNSYNCHRONISED
from predrel_ros.ros.kit.frame_order import restarted
from predrel_ros.ros.kit.node_base import PredrelNode
from predrel_ros.ros.kit.parameter_specs import ParameterSpec
from predrel_ros.ros.kit.qos import image_qos
from predrel_ros.ros.kit.topic_specs import IMAGE_QOS_TEXT, SUBSCRIBES, TopicSpec
from predrel_ros.ros.messages.camera_info import camera_info_to_intrinsics, check_camera_info
from predrel_ros.ros.messages.fields import stamp_to_ns
from predrel_ros.ros.messages.images import check_image_shape, depth_image_to_metres, image_to_rgb8

IMAGE, DEPTH, INFO = "image_raw", "depth/image_raw", "camera_info"
#: transport -> (message type, topic suffix), as image_transport names them
IMAGE_TRANSPORTS = {"raw": (Image, ""), "compressed": (CompressedImage, "/compressed")}
DEPTH_TRANSPORTS = {"raw": (Image, ""), "compressedDepth": (CompressedImage, "/compressedDepth")}

#: why the camera input parameters are read-only
INPUTS_FIXED = "they decide the subscriptions and the synchroniser, made when the inputs start"
PARAMETERS = (
    ParameterSpec("image_transport", "raw", "how the colour image arrives: raw (sensor_msgs/Image on image_raw) "
                  "or compressed (CompressedImage, jpeg or png, on image_raw/compressed)",
                  choices=tuple(IMAGE_TRANSPORTS), fixed_because=INPUTS_FIXED),
    ParameterSpec("depth_transport", "raw", "with use_depth: raw (Image on depth/image_raw) or compressedDepth "
                  "(CompressedImage, png or rvl, on depth/image_raw/compressedDepth)", choices=tuple(DEPTH_TRANSPORTS),
                  fixed_because=INPUTS_FIXED),
    ParameterSpec("use_depth", False, "subscribe depth/image_raw (aligned to the colour image, 32FC1 metres or "
                  "16UC1 millimetres) and camera_info, synchronised with the image; needed for 3D points",
                  fixed_because=INPUTS_FIXED),
    ParameterSpec("sync_slop_s", 0.02, "with use_depth: the largest stamp difference of one image, depth and "
                  "camera_info set", minimum=0.0, maximum=1.0, fixed_because=INPUTS_FIXED),
    ParameterSpec("sync_queue_size", 5, "with use_depth: messages per input waiting for partners", minimum=1,
                  maximum=100, fixed_because=INPUTS_FIXED),
)

TOPICS = (
    TopicSpec(IMAGE, "sensor_msgs/Image", SUBSCRIBES, IMAGE_QOS_TEXT + ", depth <= 2",
              "colour image (rgb8, bgr8, rgba8, bgra8, mono8)", "image_transport raw"),
    TopicSpec(IMAGE + "/compressed", "sensor_msgs/CompressedImage", SUBSCRIBES, IMAGE_QOS_TEXT + ", depth <= 2",
              "colour image, jpeg or png", "image_transport compressed"),
    TopicSpec(DEPTH, "sensor_msgs/Image", SUBSCRIBES, IMAGE_QOS_TEXT + ", depth <= 2",
              "aligned depth (32FC1 metres, 16UC1 millimetres)", "use_depth, depth_transport raw"),
    TopicSpec(DEPTH + "/compressedDepth", "sensor_msgs/CompressedImage", SUBSCRIBES, IMAGE_QOS_TEXT + ", depth <= 2",
              "aligned depth, compressedDepth png or rvl (16UC1 or 32FC1)",
              "use_depth, depth_transport compressedDepth"),
    TopicSpec(INFO, "sensor_msgs/CameraInfo", SUBSCRIBES, IMAGE_QOS_TEXT + ", depth <= 2",
              "intrinsics of the colour image (synchronised with use_depth, else the latest)"),
)


@dataclass(frozen=True)
class CameraFrame:
    """One synchronised camera frame; arrays are read-only views of the messages where possible."""

    stamp_ns: int
    image: Image | CompressedImage
    rgb: np.ndarray                 # H x W x 3 uint8 RGB
    depth: np.ndarray | None        # H x W float32 metres (NaN unknown), aligned
    info: CameraInfo | None
    K: np.ndarray | None            # 3 x 3 intrinsics of the image
    received: float                 # time.monotonic() when the set was complete
    sequence: int = 0               # a new one each time the synchroniser saw the camera restart

    @property
    def header(self):
        return self.image.header

    @property
    def shape(self) -> tuple[int, int]:
        return int(self.rgb.shape[0]), int(self.rgb.shape[1])


def message_filters_available() -> bool:
    try:
        import message_filters  # noqa: F401
    except ImportError:
        return False
    return True


class CameraInputs:
    """Subscribes the camera topics on `node` and calls `on_frame(CameraFrame)` (executor thread)."""

    def __init__(self, node: PredrelNode, on_frame: Callable[[CameraFrame], None],
                 on_malformed_image: Callable[[Image], None] | None = None) -> None:
        self._node = node
        self._on_frame = on_frame
        self._on_malformed_image = on_malformed_image
        p = node.params
        self.use_depth = p["use_depth"]
        image_type, image_suffix = IMAGE_TRANSPORTS[p["image_transport"]]
        depth_type, depth_suffix = DEPTH_TRANSPORTS[p["depth_transport"]]
        #: stream -> (message type, topic)
        self.topics = {IMAGE: (image_type, self._transport_topic(IMAGE, image_suffix)),
                       DEPTH: (depth_type, self._transport_topic(DEPTH, depth_suffix)), INFO: (CameraInfo, INFO)}
        #: stream -> the QoS subscribed with (`image_qos` matched: the publishers' at start)
        self.qos = {stream: image_qos(p["image_qos"], p["image_qos_depth"], subscriber=True, node=node, topic=topic)
                    for stream, (_, topic) in self.topics.items()}
        qos = self.qos
        self._latest_info: tuple[CameraInfo, np.ndarray] | None = None
        self.subscriptions: list = []   # what close() destroys
        self.synchroniser = None
        self.backend = "none"
        if not self.use_depth:
            self.subscriptions += [
                node.subscription(*self.topics[IMAGE], self._on_image, qos[IMAGE], stream=IMAGE),
                node.subscription(CameraInfo, INFO, self._on_sticky_info, qos[INFO], stream=INFO)]
        elif message_filters_available():
            self.backend = "message_filters"
            self._subscribe_message_filters(qos)
        else:
            self.backend = "builtin"
            self.synchroniser = ApproximateTimeSynchroniser(
                (IMAGE, DEPTH, INFO), int(p["sync_slop_s"] * 1e9), p["sync_queue_size"], self._on_set,
                lambda topic, _: node.count(topic, UNSYNCHRONISED), lambda reason: restarted(node, IMAGE, reason))
            for stream in (IMAGE, DEPTH, INFO):
                self.subscriptions.append(node.subscription(
                    *self.topics[stream], lambda m, s=stream: self._add(s, m), qos[stream], stream=stream))

    def close(self) -> None:
        """Destroy the subscriptions (a lifecycle node's deactivate); nothing arrives afterwards."""
        while self.subscriptions:
            self._node.destroy_subscription(self.subscriptions.pop())

    def _transport_topic(self, base: str, suffix: str) -> str:
        """`base` (raw), else the remapped `base` + the transport's suffix."""
        return base + suffix if not suffix else self._node.resolve_topic_name(base) + suffix

    # -- validation --------------------------------------------------------------------------------
    def _rgb(self, msg) -> np.ndarray:
        try:
            return check_image_shape(image_to_rgb8(msg))
        except ValueError:
            if self._on_malformed_image is not None:
                self._on_malformed_image(msg)
            raise

    @staticmethod
    def _depth(msg) -> np.ndarray:
        return check_image_shape(depth_image_to_metres(msg), "depth image")

    @staticmethod
    def _intrinsics(msg: CameraInfo) -> np.ndarray:
        check_camera_info(msg)
        return camera_info_to_intrinsics(msg)

    # -- without depth ---------------------------------------------------------------------------
    def _on_sticky_info(self, msg: CameraInfo) -> None:
        self._latest_info = (msg, self._intrinsics(msg))

    def _on_image(self, msg) -> None:
        rgb = self._rgb(msg)
        info = K = None
        if self._latest_info is not None:
            latest, latest_K = self._latest_info
            if (latest.height, latest.width) == rgb.shape[:2]:
                info, K = latest, latest_K
        self._on_frame(CameraFrame(stamp_to_ns(msg.header), msg, rgb, None, info, K, time.monotonic()))

    # -- with depth: builtin synchroniser ----------------------------------------------------------
    def _add(self, topic: str, msg) -> None:
        checks = {IMAGE: self._rgb, DEPTH: self._depth, INFO: self._intrinsics}
        checks[topic](msg)  # ValueError: counted malformed by the guarded callback
        self.synchroniser.add(topic, stamp_to_ns(msg.header), msg)

    def _on_set(self, messages: list) -> None:
        image, depth_msg, info = messages
        rgb, depth, K = self._rgb(image), self._depth(depth_msg), self._intrinsics(info)
        height, width = rgb.shape[:2]
        try:
            if depth.shape != rgb.shape[:2]:
                raise ValueError(f"the depth image ({depth.shape[1]}x{depth.shape[0]}) is not aligned with "
                                 f"the colour image ({width}x{height}); subscribe the registered depth")
            if (info.width, info.height) != (width, height):
                raise ValueError(f"camera_info is for {info.width}x{info.height} images, the image is "
                                 f"{width}x{height}")
        except ValueError:
            if self._on_malformed_image is not None:
                self._on_malformed_image(image)
            raise
        self._on_frame(CameraFrame(stamp_to_ns(image.header), image, rgb, depth, info, K,
                                   time.monotonic(), getattr(self.synchroniser, "sequence", 0)))

    # -- with depth: message_filters --------------------------------------------------------------
    def _subscribe_message_filters(self, qos) -> None:
        """message_filters' synchroniser (ROS installs); messages it discards are not reported, so
        `unsynchronised` is not counted on this path."""
        import message_filters

        node = self._node
        subscribers = [message_filters.Subscriber(node, *self.topics[stream], qos_profile=qos[stream])
                       for stream in (IMAGE, DEPTH, INFO)]
        self.subscriptions += [subscriber.sub for subscriber in subscribers]
        self.synchroniser = message_filters.ApproximateTimeSynchronizer(
            subscribers, node.params["sync_queue_size"], node.params["sync_slop_s"])
        self.synchroniser.registerCallback(node.guarded(IMAGE, lambda *m: self._on_set(list(m))))
