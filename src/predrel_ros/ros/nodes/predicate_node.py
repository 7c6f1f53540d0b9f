"""predicate_node: tracked entities (`predrel_ros/EntityArray`) -> visual predicates with confidence
(`predrel_ros/PredicateArray`).

The work is `predrel_ros.predicates.PredicateExtractor` (paper 3.3-3.4), configured by the
`predicates` section of a predicates YAML (`config`, default `config/predicates.yaml`). The
extractor is stateful (tracks, dynamic window, events), so frames must come in increasing
frame_index (the stream-order policy, `predrel_ros.core.stream_order`, shared with the extractor):
an older or repeated index, or one implausibly far ahead, is counted `out_of_order` and skipped;
`restart_after` such frames in a row mean the producer restarted its numbering (a respawned
perception node), and the extractor starts a new sequence (counted `restarts`, logged rate-limited).
Gaps (frames dropped upstream) are
passed through: the extractor treats them as missing evidence. Each PredicateArray carries the
EntityArray's header, frame_index, source and degradation.

With `use_depth` the node also subscribes the aligned `depth/image_raw` and `camera_info` of the
images the entities come from and matches each EntityArray with them by header stamp
(`ros.inputs.synchroniser`, within `sync_slop_s`): the extractor then gets the depth image and the
intrinsics, as the evaluator gives them (contact at the touching boundary, the enclosed contact's
3D separation, dynamic relations in m/s). An EntityArray without a depth image and camera_info
within the slop and queue is counted `entities.unsynchronised` (and so is a depth image or
camera_info without its EntityArray, under its own topic); a depth image or camera_info whose size
is not the EntityArray's image size makes the frame malformed.

With `gravity_frame` (a tf frame whose z axis points up: base_link, odom, map) the static relations
in 3D are judged along that frame's up, looked up in tf into the EntityArray's frame_id at its stamp
(`ros.inputs.tf_gravity`; needs tf2_ros, which a ROS 2 install has); a frame tf cannot resolve falls
back to the support plane fitted in depth and is counted `gravity_from_plane` (logged rate-limited).

A frame with more entities than the config's `max_entities` (default 32; pairs grow with its square)
is processed without its lowest-scoring rest: each entity dropped so is counted `entities_dropped`
and the frame logged (rate-limited).

Every EntityArray ends in one outcome under `entities.*` on /diagnostics: processed, malformed
(bad masks, NaN boxes or centroids, duplicate track ids, unknown roles, a mask that contradicts
the image size, a bad degradation), out_of_order, no_subscribers (`lazy` and nobody listens) or
failed.

    ros2 run predrel_ros predicate_node --ros-args -r __ns:=/degraded
"""
from __future__ import annotations

import sys
import time
from typing import Mapping

from rclpy.time import Time
from sensor_msgs.msg import CameraInfo, Image

from predrel_ros.core.errors import UserError
from predrel_ros.core.package_files import config_path
from predrel_ros.core.stream_order import StreamOrder
from predrel_ros.msg import EntityArray, PredicateArray
from predrel_ros.predicates import PredicateConfig, PredicateExtractor
from predrel_ros.ros.inputs.synchroniser import ApproximateTimeSynchroniser
from predrel_ros.ros.inputs.tf_gravity import TfGravity
from predrel_ros.ros.kit.frame_counters import NO_SUBSCRIBERS, PROCESSED, UNSYNCHRONISED
from predrel_ros.ros.kit.frame_order import admit, restart_after_parameter, restarted
from predrel_ros.ros.kit.message_bounds import MAX_ENTITIES
from predrel_ros.ros.kit.node_base import PredrelNode, wanted
from predrel_ros.ros.kit.parameter_specs import ParameterSpec
from predrel_ros.ros.kit.qos import IMAGE_QOS_PARAMETERS, STREAM_QOS, image_qos
from predrel_ros.ros.kit.runtime import run_node
from predrel_ros.ros.kit.topic_specs import (
    DIAGNOSTICS,
    IMAGE_QOS_TEXT,
    PUBLISHES,
    STREAM_QOS_TEXT,
    SUBSCRIBES,
    TopicSpec,
)
from predrel_ros.ros.messages.camera_info import camera_info_to_camera, check_camera_info
from predrel_ros.ros.messages.degradations import checked_degradation_from_msg
from predrel_ros.ros.messages.entities import entities_from_msg
from predrel_ros.ros.messages.fields import stamp_to_ns
from predrel_ros.ros.messages.images import check_image_shape, depth_image_to_metres
from predrel_ros.ros.messages.predicates import predicates_to_msg

NODE_NAME = "predicates"
#: its params file in config/ (predicates.yaml is the library config)
PARAMS_FILE = "predicate_node.yaml"
#: the stream every input's outcome is counted under
ENTITIES = "entities"
#: entities beyond the extractor's max_entities, dropped from their frame (an event, not an outcome)
ENTITIES_DROPPED = "entities_dropped"
#: frames whose gravity tf could not give (`gravity_frame`): judged along the support plane instead
GRAVITY_FROM_PLANE = "gravity_from_plane"
#: with use_depth: the depth image and intrinsics streams matched with the entities
DEPTH, INFO = "depth/image_raw", "camera_info"
#: why the depth parameters are read-only
DEPTH_FIXED = "they decide the subscriptions and the synchroniser, made at start"

PARAMETERS = (
    ParameterSpec("config", "predicates.yaml", "predicates YAML whose `predicates` section configures the extractor "
                  "(thresholds, window, confidence weights, pair rules); a bare file name is looked up in the "
                  "package's config/ folder; a change at runtime loads the new file (refused when it does not "
                  "load) and the extractor starts anew from the next frame (its windows and hold states were "
                  "built with the old thresholds)", runtime=True),
    ParameterSpec("source_name", "", "PredicateArray.source of the published predicates; empty: the EntityArray's "
                  "source (perception, ground_truth, ...)", runtime=True),
    restart_after_parameter("entity", "the extractor"),
    ParameterSpec("lazy", True, "skip extraction while nobody subscribes to predicates (counted no_subscribers)",
                  runtime=True),
    MAX_ENTITIES,
    ParameterSpec("use_depth", False, "subscribe depth/image_raw (aligned with the images the entities come from, "
                  "32FC1 metres or 16UC1 millimetres) and camera_info, matched with each EntityArray by stamp: "
                  "contact at the touching boundary and the 3D relations; without it the 2D rules",
                  fixed_because=DEPTH_FIXED),
    ParameterSpec("sync_slop_s", 0.02, "with use_depth: the largest stamp difference of an EntityArray, its depth "
                  "image and camera_info", minimum=0.0, maximum=1.0, fixed_because=DEPTH_FIXED),
    ParameterSpec("sync_queue_size", 30, "with use_depth: messages per input waiting for partners, and the "
                  "history depth of the depth and camera_info subscriptions (the depth images wait for "
                  "perception's latency: 30 is 1 s at 30 Hz)", minimum=1, maximum=300, fixed_because=DEPTH_FIXED),
    *(spec for spec in IMAGE_QOS_PARAMETERS if spec.name == "image_qos"),
    ParameterSpec("gravity_frame", "", "with use_depth: a tf frame whose z axis points up (REP-103: base_link, "
                  "odom, map); the static relations in 3D are judged along it, looked up into the EntityArray's "
                  "frame_id at its stamp (counted gravity_from_plane where tf cannot say); empty: gravity from the "
                  "support plane fitted in depth, else image up. Needs tf2_ros (a ROS 2 install)",
                  fixed_because="the tf listener is made at start"),
)

TOPICS = (
    TopicSpec("entities", "predrel_ros/EntityArray", SUBSCRIBES, STREAM_QOS_TEXT,
              "tracked entities of each frame (perception node, or ground truth in oracle runs)"),
    TopicSpec(DEPTH, "sensor_msgs/Image", SUBSCRIBES, IMAGE_QOS_TEXT, "aligned depth of the entities' images "
              "(32FC1 metres, 16UC1 millimetres)", "use_depth"),
    TopicSpec(INFO, "sensor_msgs/CameraInfo", SUBSCRIBES, IMAGE_QOS_TEXT, "intrinsics of the entities' images",
              "use_depth"),
    TopicSpec("predicates", "predrel_ros/PredicateArray", PUBLISHES, STREAM_QOS_TEXT,
              "the frame's predicates with confidence and evidence, same header, frame_index and degradation"),
    DIAGNOSTICS,
)


def load_extractor(value: str, order: StreamOrder | None = None) -> PredicateExtractor:
    """The extractor configured by the predicates YAML the `config` parameter names."""
    path = config_path(value)
    try:
        return PredicateExtractor(PredicateConfig.load(path, section="predicates"), order=order)
    except (OSError, ValueError) as error:
        raise UserError(f"parameter config: {path}: {error}") from None


class PredicateNode(PredrelNode):
    def __init__(self, **kwargs) -> None:
        super().__init__(NODE_NAME, PARAMETERS, on_parameters=self._on_parameters,
                         check_parameters=self._check_parameters, **kwargs)
        p = self.params
        self.order = StreamOrder(p["restart_after"])
        self.extractor = load_extractor(p["config"], self.order)
        self._loaded: PredicateExtractor | None = None   # a new config, loaded while its change is checked
        self.predicates_publisher = self.publisher(PredicateArray, "predicates", STREAM_QOS)
        self.subscription(EntityArray, "entities", self._on_entities, STREAM_QOS, stream=ENTITIES)
        self.synchroniser: ApproximateTimeSynchroniser | None = None
        self.gravity: TfGravity | None = None
        if p["gravity_frame"]:
            if not p["use_depth"]:
                raise UserError(f"parameter gravity_frame ({p['gravity_frame']}) needs use_depth: gravity orders "
                                f"the static relations in 3D, which need the depth image")
            self.gravity = TfGravity(self, p["gravity_frame"])
        if p["use_depth"]:
            self.synchroniser = ApproximateTimeSynchroniser(
                (ENTITIES, DEPTH, INFO), int(p["sync_slop_s"] * 1e9), p["sync_queue_size"], self._on_set,
                self._unsynchronised, lambda reason: restarted(self, ENTITIES, reason))
            for stream, msg_type, callback in ((DEPTH, Image, self._on_depth), (INFO, CameraInfo, self._on_info)):
                qos = image_qos(p["image_qos"], 1, subscriber=True, node=self, topic=stream)
                qos.depth = p["sync_queue_size"]     # each waits for its EntityArray: none may be replaced
                self.subscription(msg_type, stream, callback, qos, stream=stream)

    def _unsynchronised(self, stream: str, _item) -> None:
        """A message that left the synchroniser without its partners: counted and logged (rate limited),
        naming the likely cause (an RGB-only recording or camera with use_depth on)."""
        partners = "depth image and camera_info" if stream == ENTITIES else "EntityArray"
        self.reject(stream, f"no {partners} matched within sync_slop_s ({self.params['sync_slop_s']} s); for a camera "
                    f"or recording without depth set use_depth:=false (replay_eval: predicate_depth:=false)",
                    UNSYNCHRONISED)

    def _skipped(self, stream: str) -> bool:
        """Whether `lazy` skips this input (counted no_subscribers)."""
        if self.params["lazy"] and not wanted(self.predicates_publisher):
            self.count(stream, NO_SUBSCRIBERS)
            return True
        return False

    def _check_parameters(self, values: Mapping[str, object]) -> None:
        """A new config must load (UserError: the change is refused with the reason)."""
        if "config" in values:
            self._loaded = load_extractor(str(values["config"]), self.order)

    def _on_parameters(self, changed: Mapping[str, object]) -> None:
        if "restart_after" in changed:
            self.order.restart_after = int(changed["restart_after"])
        if "config" in changed:
            self.extractor, self._loaded = self._loaded, None
            self.get_logger().info(f"config {changed['config']}: predicate extraction starts anew from the next "
                                   f"frame")

    def _on_entities(self, msg: EntityArray) -> None:
        start = time.perf_counter()
        if self._skipped(ENTITIES):
            return
        entities = entities_from_msg(msg, max_entities=self.params["max_entities_per_message"])  # counted malformed
        checked_degradation_from_msg(msg.degradation)
        if self.synchroniser is None:
            self._extract(msg, entities, start)
        else:
            self.synchroniser.add(ENTITIES, stamp_to_ns(msg.header), (msg, entities, start))

    def _on_depth(self, msg: Image) -> None:
        if not self._skipped(DEPTH):
            depth = check_image_shape(depth_image_to_metres(msg), "depth image")   # ValueError: malformed
            self.synchroniser.add(DEPTH, stamp_to_ns(msg.header), depth)

    def _on_info(self, msg: CameraInfo) -> None:
        if not self._skipped(INFO):
            check_camera_info(msg)                                                  # ValueError: malformed
            self.synchroniser.add(INFO, stamp_to_ns(msg.header), camera_info_to_camera(msg))

    def _on_set(self, matched: list) -> None:
        """An EntityArray with its depth image and intrinsics (called inside whichever input completed
        the set: errors are the EntityArray's)."""
        (msg, entities, start), depth, camera = matched
        self.count(DEPTH, PROCESSED)
        self.count(INFO, PROCESSED)
        size = (int(msg.image_width), int(msg.image_height))
        try:
            if (depth.shape[1], depth.shape[0]) != size or (camera.width, camera.height) != size:
                raise ValueError(f"the depth image ({depth.shape[1]}x{depth.shape[0]}) and camera_info "
                                 f"({camera.width}x{camera.height}) must have the entities' image size "
                                 f"{size[0]}x{size[1]}")
            self._extract(msg, entities, start, depth, camera)
        except ValueError as error:
            self.reject(ENTITIES, error)

    def _extract(self, msg: EntityArray, entities: list, start: float, depth=None, camera=None) -> None:
        frame_index = int(msg.frame_index)
        if not admit(self, self.order, ENTITIES, frame_index, "predicate extraction", self.extractor.reset):
            return
        image_size = (int(msg.image_width), int(msg.image_height)) if msg.image_width and msg.image_height else None
        up = None
        if self.gravity is not None and depth is not None:
            try:
                up = self.gravity.up(msg.header.frame_id, Time.from_msg(msg.header.stamp))
            except LookupError as error:
                self.count(None, GRAVITY_FROM_PLANE)
                self.log_throttled(GRAVITY_FROM_PLANE, f"frame {frame_index}: {error}; gravity from the support plane")
        estimates = self.extractor.update(frame_index, entities, image_size, depth_m=depth, camera=camera,
                                          gravity_up=up)   # ValueError: nothing changed
        dropped = self.extractor.dropped_entities
        if dropped:
            self.count(None, ENTITIES_DROPPED, len(dropped))
            self.log_throttled(ENTITIES_DROPPED, f"frame {frame_index}: {len(entities)} entities, the "
                               f"{len(dropped)} lowest-scoring beyond max_entities "
                               f"{self.extractor.config.max_entities} dropped (track ids {list(dropped)})")
        self.predicates_publisher.publish(predicates_to_msg(
            estimates, frame_index=frame_index, source=self.params["source_name"] or msg.source, header=msg.header,
            degradation=msg.degradation))
        self.count(ENTITIES, PROCESSED)
        self.latency.add(time.perf_counter() - start)

    def diagnostic_values(self) -> dict[str, object]:
        return {"last_frame_index": -1 if self.order.last is None else self.order.last}


def main(args: list[str] | None = None) -> int:
    return run_node(PredicateNode, args)


if __name__ == "__main__":
    sys.exit(main())
