"""perception_node: camera frames -> tracked entities (`predrel_ros/EntityArray`), with a debug overlay.

The work is `predrel_ros.perception.perceiver.Perceiver` (backend, YOLO-seg decoding, tracking, roles,
visibility, 3D points), configured by a perception YAML (`config`, default `config/perceiver.yaml`:
the project's embedded model) and a few parameters that override it. The model loads once at start;
the log says which backend was chosen and why.

Inputs: `image_raw` (+ with `use_depth`: aligned `depth/image_raw` and `camera_info`, synchronised)
and, from a replay or degrade node, `frame_info`. Each image is paired with its FrameInfo by stamp,
so the EntityArray carries the stream's frame_index and degradation, and detection noise (which
acts on perception output, paper 4.3) is applied here when the FrameInfo says so. Without FrameInfo
(a live camera) the node numbers frames itself.

Order is the stream-order policy's (`predrel_ros.core.stream_order`): FrameInfos by frame_index
with their stamps as its clock, images by stamp (`frame_matching`), and the frames processed by
frame_index and stamp again. Whatever is old, or implausibly far ahead (a stamp more than an hour
ahead, a frame_index 2**20 ahead), is counted `out_of_order` (`frame_info.*`, `image_raw.*`, or
`frames.*`) and never becomes the reference. A restart (a frame_index that went back with a newer
stamp, or 5 out-of-order FrameInfos in a row) is counted `frame_info.restarts` or
`tracks.restarts`, logged rate-limited, and the tracks start anew.

Only the newest frame is processed: a frame replaced before the model got to it is counted
`dropped_stale`. Every frame ends in one outcome under `frames.*` on /diagnostics: processed,
dropped_stale, dropped_by_degradation (FrameInfo drop), image_lost (FrameInfo without image),
no_frame_info, malformed, out_of_order or failed. `debug/overlay` is drawn only while subscribed.

    ros2 run predrel_ros perception_node --ros-args -r __ns:=/degraded -p use_depth:=true
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Mapping

from sensor_msgs.msg import Image

from predrel_ros.core.errors import UserError
from predrel_ros.core.stream_order import StreamOrder
from predrel_ros.degradations import DETECTION_NOISE, NONE, Degrader
from predrel_ros.msg import EntityArray, FrameInfo
from predrel_ros.perception.config import config_from_node_params
from predrel_ros.ros.inputs import camera_inputs
from predrel_ros.ros.inputs.camera_inputs import CameraFrame, CameraInputs
from predrel_ros.ros.inputs.frame_matching import ImageInfoMatcher, Matched
from predrel_ros.ros.inputs.newest_frame import NewestFrameWorker
from predrel_ros.ros.inputs.stamp_table import OutOfOrder
from predrel_ros.ros.kit.frame_counters import (
    DROPPED_BY_DEGRADATION,
    DROPPED_STALE,
    FAILED,
    IMAGE_LOST,
    MALFORMED,
    NO_FRAME_INFO,
    OUT_OF_ORDER,
    PROCESSED,
)
from predrel_ros.ros.kit.frame_order import admit, restarted
from predrel_ros.ros.kit.latency import LatencyWindow
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
from predrel_ros.ros.messages.degradations import degradation_to_msg
from predrel_ros.ros.messages.entities import entities_to_msg
from predrel_ros.ros.messages.fields import stamp_to_ns
from predrel_ros.ros.messages.frame_info import FrameInfoData, frame_info_from_msg
from predrel_ros.ros.messages.images import numpy_to_image

NODE_NAME = "perception"
#: the perception library config shipped in config/ (the embedded default model)
DEFAULT_CONFIG = "perceiver.yaml"
#: stream under which every frame's outcome is counted
FRAMES = "frames"
#: stream under which restarts of the processed frames (the tracks start anew) are counted
TRACKS = "tracks"
#: how often waiting FrameInfos and images are checked for expiry
EXPIRY_PERIOD_S = 0.2
BACKEND_CHOICES = ("", "auto", "tensorrt", "onnxruntime", "pytorch")

PARAMETERS = (
    ParameterSpec("config", DEFAULT_CONFIG, "perception YAML (predrel_ros.perception.config.PerceptionConfig: "
                  "model, labels, role map, backend, decoder, tracker, depth, ...); a bare file name is looked up "
                  "in the package's config/ folder"),
    ParameterSpec("backend", "", "inference backend; empty: the config's (auto picks tensorrt > onnxruntime > "
                  "pytorch, the first usable here with a model file it loads)", choices=BACKEND_CHOICES),
    ParameterSpec("model_path", "", "model file or folder (model.onnx, labels.txt, roles.yaml); empty: the "
                  "config's (default: the embedded model)"),
    ParameterSpec("labels_path", "", "class names file; empty: the config's (labels.txt beside the model, or "
                  "the names in the ONNX metadata)"),
    ParameterSpec("engine_cache_dir", "", "TensorRT engine cache folder; empty: the config's "
                  "(~/.cache/predrel_ros/engines)"),
    ParameterSpec("score_threshold", -1.0, "detection score threshold; -1: the config's", minimum=-1.0,
                  maximum=1.0),
    ParameterSpec("iou_threshold", -1.0, "NMS IoU threshold; -1: the config's", minimum=-1.0, maximum=1.0),
    ParameterSpec("mask_threshold", -1.0, "mask probability threshold; -1: the config's", minimum=-1.0,
                  maximum=1.0),
    ParameterSpec("use_frame_info", True, "pair images with frame_info (replay/degrade streams) when that topic has "
                  "a publisher; false: always number frames here"),
    ParameterSpec("frame_info_timeout_s", 1.0, "how long an image waits for its FrameInfo, and a FrameInfo for its "
                  "image, before it is counted no_frame_info / image_lost", minimum=0.01, maximum=60.0),
    ParameterSpec("source_name", "perception", "EntityArray.source of the published entities"),
) + camera_inputs.PARAMETERS + IMAGE_QOS_PARAMETERS

TOPICS = (
    *camera_inputs.TOPICS,
    TopicSpec("frame_info", "predrel_ros/FrameInfo", SUBSCRIBES, STREAM_QOS_TEXT,
              "frame_index and degradation of each image (replay, degrade node); optional"),
    TopicSpec("entities", "predrel_ros/EntityArray", PUBLISHES, STREAM_QOS_TEXT,
              "tracked entities of each processed frame, with its frame_index and degradation"),
    TopicSpec("debug/overlay", "sensor_msgs/Image", PUBLISHES, IMAGE_QOS_TEXT,
              "the frame with masks, boxes and captions (bgr8), drawn only while subscribed"),
    DIAGNOSTICS,
)


@dataclass(frozen=True)
class PendingFrame:
    frame: CameraFrame
    frame_index: int
    info: FrameInfoData | None
    sequence: int = 0   # the input's sequence: a new one each time the FrameInfo stream restarted


class PerceptionNode(PredrelNode):
    def __init__(self, **kwargs) -> None:
        super().__init__(NODE_NAME, PARAMETERS, **kwargs)
        from predrel_ros.perception.overlay import draw_entities
        from predrel_ros.perception.perceiver import Perceiver

        self._draw_entities = draw_entities
        self.forward_library_logs()
        config_path = None
        try:
            config, config_path = config_from_node_params(self.params.values)
            self.perceiver = Perceiver(config)
            self.on_destroy(self.perceiver.close)
        except UserError as error:
            self.stop_forwarding_library_logs()
            where = f"perception config {config_path}; " if config_path else ""
            raise UserError(f"{error} [{where}set model_path:=MODEL_DIR or config:=YOUR.yaml]") from None
        except BaseException:
            self.stop_forwarding_library_logs()
            raise
        described = self.perceiver.describe()          # {"backend": "none"} without a trained model
        self.backend_name = described["backend"]
        details = ", ".join(str(described[key]) for key in ("provider", "device", "precision") if key in described)
        self.get_logger().info(f"model {self.perceiver.model_file}: {self.backend_name}"
                               f"{f' ({details})' if details else ''}; labels {self.perceiver.labels}")
        p = self.params
        self.source_name = p["source_name"]
        self.inference = LatencyWindow()
        self._noise: dict[tuple[str, int, int], Degrader] = {}
        self._none = degradation_to_msg(NONE, 0)
        self._matcher: ImageInfoMatcher[CameraFrame, FrameInfoData] = ImageInfoMatcher(
            infos_by_frame_index=True)
        self._own_index = 0
        self._sequence = 0            # of the input (executor thread)
        self._camera_sequence = 0     # of the last camera frame (camera_inputs: the synchroniser's restarts)
        self._processed_sequence = 0  # of the last processed frame (worker thread)
        self.order = StreamOrder()    # of the processed frames: frame_index, with stamps (worker thread)
        self.worker: NewestFrameWorker[PendingFrame] = NewestFrameWorker(
            self._process, self._on_worker_error, lambda item: self.count(FRAMES, DROPPED_STALE), "perception")
        self.on_destroy(self._stop_processing)
        self.entities_publisher = self.publisher(EntityArray, "entities", STREAM_QOS)
        self.overlay_publisher = self.publisher(Image, "debug/overlay", image_qos(p["image_qos"], p["image_qos_depth"]))
        self._frame_info = None
        if p["use_frame_info"]:
            self._frame_info = self.subscription(FrameInfo, "frame_info", self._on_frame_info, STREAM_QOS)
        self.inputs = CameraInputs(self, self._on_camera_frame, self._on_malformed_image)
        self._frame_info_expected = False
        self.create_timer(EXPIRY_PERIOD_S, self._expire)

    # -- pairing frames with FrameInfo (executor thread) -------------------------------------------
    def _expects_frame_info(self) -> bool:
        return self._frame_info is not None and (
            self._frame_info_expected or self._frame_info.get_publisher_count() > 0)

    def _on_frame_info(self, msg: FrameInfo) -> None:
        info = frame_info_from_msg(msg)  # ValueError: frame_info.malformed
        self._frame_info_expected = True
        try:
            if info.action == "drop":
                matched = self._matcher.note_info(info.stamp_ns, info.frame_index)
            else:
                matched = self._matcher.add_info(info.stamp_ns, info, info.frame_index)
        except OutOfOrder as error:
            self.reject("frame_info", error, OUT_OF_ORDER)
            return
        if matched.restart:
            self._sequence += 1
            restarted(self, "frame_info", f"{matched.restart}: the tracks start anew")
        self._account(matched)
        self.count(FRAMES, "in")
        if info.action == "drop":
            self.count(FRAMES, DROPPED_BY_DEGRADATION)

    def _on_camera_frame(self, frame: CameraFrame) -> None:
        if frame.sequence != self._camera_sequence:   # the synchroniser saw the camera restart (counted there)
            self._camera_sequence = frame.sequence
            self._sequence += 1
            self._account(self._matcher.restart_images())
        if not self._expects_frame_info():
            self.count(FRAMES, "in")
            self.worker.submit(PendingFrame(frame, self._own_index, None, self._sequence))
            self._own_index += 1
            return
        try:
            matched = self._matcher.add_image(frame.stamp_ns, frame)
        except OutOfOrder as error:
            self.reject("image_raw", error, OUT_OF_ORDER)
            return
        if matched.restart:
            restarted(self, "image_raw", matched.restart)
        self._account(matched)

    def _on_malformed_image(self, msg: Image) -> None:
        """An image that failed validation: its frame (if announced) ends as malformed."""
        if not self._expects_frame_info():
            self.count(FRAMES, "in")
            self.count(FRAMES, MALFORMED)
        elif self._matcher.discard_image(stamp_to_ns(msg.header)) is not None:
            self.count(FRAMES, MALFORMED)

    def _account(self, matched: Matched) -> None:
        for frame, info in matched.pairs:
            self.worker.submit(PendingFrame(frame, info.frame_index, info, self._sequence))
        self.count(FRAMES, IMAGE_LOST, len(matched.lost_infos))
        if matched.orphan_images:
            self.count(FRAMES, "in", len(matched.orphan_images))
            self.count(FRAMES, NO_FRAME_INFO, len(matched.orphan_images))

    def _expire(self) -> None:
        if self._frame_info is not None:
            self._frame_info_expected = self._frame_info.get_publisher_count() > 0
        self._account(self._matcher.expire(self.params["frame_info_timeout_s"]))

    # -- processing (worker thread) ----------------------------------------------------------------
    def _process(self, item: PendingFrame) -> None:
        frame, index = item.frame, item.frame_index
        if item.sequence != self._processed_sequence:  # the FrameInfo stream restarted (counted there)
            self._processed_sequence = item.sequence
            self.perceiver.reset()
            self.order.reset()
        if not admit(self, self.order, FRAMES, index, "tracking", self.perceiver.reset, frame.stamp_ns, TRACKS):
            return
        start = time.perf_counter()
        try:
            entities = self.perceiver.process(frame.rgb, index, depth=frame.depth, camera=frame.K, bgr=False)
        except UserError as error:  # the Perceiver's word for input it cannot use
            raise ValueError(str(error)) from None
        self.inference.add(time.perf_counter() - start)
        degradation = self._none
        if item.info is not None:
            degradation = item.info.degradation_msg
            entities = self._detection_noise(item.info, entities, frame)
        height, width = frame.shape
        self.entities_publisher.publish(entities_to_msg(
            entities, frame_index=index, image_width=width, image_height=height, source=self.source_name,
            header=frame.header, degradation=degradation))
        self.order.accept(index, frame.stamp_ns)
        self.count(FRAMES, PROCESSED)
        self.latency.add(time.monotonic() - frame.received)
        if wanted(self.overlay_publisher):
            overlay = self._draw_entities(frame.rgb[:, :, ::-1], entities)
            self.overlay_publisher.publish(numpy_to_image(overlay, "bgr8", frame.header))

    def _detection_noise(self, info: FrameInfoData, entities, frame: CameraFrame):
        noise = info.degradation
        if noise.kind != DETECTION_NOISE or noise.severity == 0:
            return entities
        key = (noise.kind, noise.severity, noise.seed)
        if key not in self._noise:
            self._noise[key] = Degrader(noise.kind, noise.severity, noise.seed)
        return self._noise[key].apply_entities(entities, info.frame_index, frame.rgb.shape)

    def _on_worker_error(self, item: PendingFrame, error: BaseException) -> None:
        if isinstance(error, ValueError):
            self.reject(FRAMES, error, MALFORMED)
        else:
            self.count(FRAMES, FAILED)
            self.log_throttled(f"{FRAMES}.{FAILED}", f"frame {item.frame_index}: processing failed: {error!r}",
                               error=True)

    # -- diagnostics and shutdown --------------------------------------------------------------------
    def diagnostic_values(self) -> Mapping[str, object]:
        waiting_infos, waiting_images = self._matcher.waiting()
        values: dict[str, object] = {"backend": self.backend_name,
                                     "synchroniser": self.inputs.backend, "waiting_frame_infos": waiting_infos,
                                     "waiting_images": waiting_images}
        values.update({f"inference.{key}": v for key, v in self.inference.summary_ms().items()})
        if self.order.last is not None:
            values["frame_index"] = self.order.last
        return values

    def _stop_processing(self) -> None:
        if self.worker.stop() is not None:
            self.count(FRAMES, DROPPED_STALE)  # waiting when the node stopped
        self._account(self._matcher.drain())


def main(args: list[str] | None = None) -> int:
    return run_node(PerceptionNode, args)


if __name__ == "__main__":
    sys.exit(main())
