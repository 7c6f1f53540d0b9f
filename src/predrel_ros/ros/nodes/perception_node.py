"""perception_node: camera frames -> tracked entities (`predrel_ros/EntityArray`), with a debug overlay.

The work is `predrel_ros.perception.perceiver.Perceiver` (backend, YOLO-seg decoding, tracking, roles,
visibility, 3D points), configured by a perception YAML (`config`, default `config/perceiver.yaml`:
the project's embedded model) and a few parameters that override it; the log says which backend was
chosen and why.

A managed (lifecycle) node (`ros.kit.lifecycle_node`): the model loads in on_configure, in a thread of
its own, while the node keeps answering parameter requests and publishing /diagnostics ("configuring:
loading model ..."); on_activate subscribes the inputs and starts the worker, on_deactivate stops them,
on_cleanup frees the model. `autostart` (default true) configures and activates once spun; false
leaves the node unconfigured for a lifecycle manager. The decoder thresholds, frame_info_timeout_s
and source_name change at runtime; the other parameters are read-only and their descriptions say why.

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

import dataclasses
import sys
import time
from dataclasses import dataclass
from typing import Mapping

from sensor_msgs.msg import Image

from predrel_ros.core.errors import UserError
from predrel_ros.core.stream_order import StreamOrder
from predrel_ros.degradations import DETECTION_NOISE, NONE, Degrader
from predrel_ros.msg import EntityArray, FrameInfo
from predrel_ros.perception.config import PerceptionConfig, config_from_node_params
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
from predrel_ros.ros.kit.lifecycle_node import (
    AUTOSTART,
    FAILURE,
    SUCCESS,
    PredrelLifecycleNode,
    TransitionCallbackReturn,
)
from predrel_ros.ros.kit.node_base import wanted
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

#: why the model's parameters are read-only
MODEL_FIXED = "the model loads in on_configure; another model is another node (or its restart)"
#: the decoder thresholds, which change at runtime (from the next frame)
THRESHOLDS = ("score_threshold", "iou_threshold", "mask_threshold")

PARAMETERS = (
    AUTOSTART,
    ParameterSpec("config", DEFAULT_CONFIG, "perception YAML (predrel_ros.perception.config.PerceptionConfig: "
                  "model, labels, role map, backend, decoder, tracker, depth, ...); a bare file name is looked up "
                  "in the package's config/ folder", fixed_because=MODEL_FIXED),
    ParameterSpec("backend", "", "inference backend; empty: the config's (auto picks tensorrt > onnxruntime > "
                  "pytorch, the first usable here with a model file it loads)", choices=BACKEND_CHOICES,
                  fixed_because=MODEL_FIXED),
    ParameterSpec("model_path", "", "model file or folder (model.onnx, labels.txt, roles.yaml); empty: the "
                  "config's (default: the embedded model)", fixed_because=MODEL_FIXED),
    ParameterSpec("labels_path", "", "class names file; empty: the config's (labels.txt beside the model, or "
                  "the names in the ONNX metadata)", fixed_because=MODEL_FIXED),
    ParameterSpec("engine_cache_dir", "", "TensorRT engine cache folder; empty: the config's "
                  "(~/.cache/predrel_ros/engines)", fixed_because=MODEL_FIXED),
    ParameterSpec("score_threshold", -1.0, "detection score threshold; -1: the config's; a change applies from "
                  "the next frame", minimum=-1.0, maximum=1.0, runtime=True),
    ParameterSpec("iou_threshold", -1.0, "NMS IoU threshold; -1: the config's; a change applies from the next "
                  "frame", minimum=-1.0, maximum=1.0, runtime=True),
    ParameterSpec("mask_threshold", -1.0, "mask probability threshold; -1: the config's; a change applies from "
                  "the next frame", minimum=-1.0, maximum=1.0, runtime=True),
    ParameterSpec("use_frame_info", True, "pair images with frame_info (replay/degrade streams) when that topic has "
                  "a publisher; false: always number frames here", fixed_because="it decides the subscriptions "
                  "made in on_activate"),
    ParameterSpec("frame_info_timeout_s", 1.0, "how long an image waits for its FrameInfo, and a FrameInfo for its "
                  "image, before it is counted no_frame_info / image_lost", minimum=0.01, maximum=60.0,
                  runtime=True),
    ParameterSpec("source_name", "perception", "EntityArray.source of the published entities", runtime=True),
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


class PerceptionNode(PredrelLifecycleNode):
    """A managed node (`ros.kit.lifecycle_node`): the parameters are checked at construction (a
    config or model that does not exist: UserError), the model loads in on_configure (in the
    transition thread, progress on /diagnostics), the inputs are subscribed in on_activate and
    unsubscribed in on_deactivate, and the model is freed in on_cleanup."""

    def __init__(self, **kwargs) -> None:
        super().__init__(NODE_NAME, PARAMETERS, on_parameters=self._on_parameters, **kwargs)
        from predrel_ros.perception.overlay import draw_entities

        self._draw_entities = draw_entities
        # the state first: a node whose constructor fails is still shut down (destroy_node)
        self.perceiver = None
        self._file_decoder = None     # the decoder settings of the config file (thresholds -1)
        self.backend_name = "not loaded"
        self.inference = LatencyWindow()
        self._noise: dict[tuple[str, int, int], Degrader] = {}
        self._none = degradation_to_msg(NONE, 0)
        self.entities_publisher = self.overlay_publisher = None
        self.inputs: CameraInputs | None = None
        self._frame_info = None
        self._expiry_timer = None
        self.worker: NewestFrameWorker[PendingFrame] | None = None
        self._reset_inputs()
        self.forward_library_logs()
        try:
            self._config()
        except BaseException:
            self.stop_forwarding_library_logs()
            raise

    def _config(self):
        """The perception config of the parameters, with its model checked to exist (UserError)."""
        from predrel_ros.perception.perceiver import check_model_exists

        config_path = None
        try:
            config, config_path = config_from_node_params(self.params.values)
            check_model_exists(config)
        except UserError as error:
            where = f"perception config {config_path}; " if config_path else ""
            raise UserError(f"{error} [{where}set model_path:=MODEL_DIR or config:=YOUR.yaml]") from None
        return config, config_path

    def _on_parameters(self, changed: dict) -> None:
        """Runtime thresholds: the decoder takes them from the next frame (-1: the config file's)."""
        if any(name in changed for name in THRESHOLDS):
            self._apply_thresholds()

    def _apply_thresholds(self) -> None:
        perceiver = self.perceiver
        if perceiver is None or perceiver.decoder is None:
            return      # not configured (on_configure applies them), or no model
        overrides = {name: self.params[name] for name in THRESHOLDS if self.params[name] >= 0}
        perceiver.decoder.config = dataclasses.replace(self._file_decoder, **overrides)
        self.get_logger().info(f"decoder thresholds now: score {perceiver.decoder.config.score_threshold:g}, iou "
                               f"{perceiver.decoder.config.iou_threshold:g}, mask "
                               f"{perceiver.decoder.config.mask_threshold:g}")

    def _reset_inputs(self) -> None:
        self._matcher: ImageInfoMatcher[CameraFrame, FrameInfoData] = ImageInfoMatcher(
            infos_by_frame_index=True)
        self._own_index = 0
        self._sequence = 0            # of the input (executor thread)
        self._camera_sequence = 0     # of the last camera frame (camera_inputs: the synchroniser's restarts)
        self._processed_sequence = 0  # of the last processed frame (worker thread)
        self.order = StreamOrder()    # of the processed frames: frame_index, with stamps (worker thread)
        self._frame_info_expected = False

    # -- lifecycle ---------------------------------------------------------------------------------
    def on_configure(self, state) -> TransitionCallbackReturn:
        """The transition thread: load the model (minutes for a TensorRT engine build)."""
        from predrel_ros.perception.perceiver import Perceiver

        try:
            config, config_path = self._config()
            self.configure_progress(f"loading model {config.model} (backend {config.backend.name})")
            perceiver = Perceiver(config)
            self._file_decoder = PerceptionConfig.load(config_path, section="perception").decoder
        except UserError as error:
            self.last_transition_error = f"configuring failed: {error}"
            self.get_logger().error(self.last_transition_error)
            return FAILURE
        self.perceiver = perceiver
        self._apply_thresholds()      # those set while the model loaded too
        described = perceiver.describe()          # {"backend": "none"} without a trained model
        self.backend_name = described["backend"]
        details = ", ".join(str(described[key]) for key in ("provider", "device", "precision") if key in described)
        source = f"model {perceiver.model_file}" if perceiver.model_file is not None else "no trained model"
        extras = [name for name, on in (("hand landmarks", config.hand_landmarks.enabled),
                                        ("objects from depth", config.depth_objects.enabled)) if on]
        self.get_logger().info(f"{source}: {self.backend_name}{f' ({details})' if details else ''}; "
                               f"labels {perceiver.labels}{'; ' + ', '.join(extras) if extras else ''}")
        p = self.params
        self.entities_publisher = self.publisher(EntityArray, "entities", STREAM_QOS)
        self.overlay_publisher = self.publisher(Image, "debug/overlay", image_qos(p["image_qos"], p["image_qos_depth"]))
        return SUCCESS

    def on_activate(self, state) -> TransitionCallbackReturn:
        self._reset_inputs()
        self.perceiver.reset()
        self.worker = NewestFrameWorker(
            self._process, self._on_worker_error, lambda item: self.count(FRAMES, DROPPED_STALE), "perception")
        if self.params["use_frame_info"]:
            self._frame_info = self.subscription(FrameInfo, "frame_info", self._on_frame_info, STREAM_QOS)
        self.inputs = CameraInputs(self, self._on_camera_frame, self._on_malformed_image)
        self._expiry_timer = self.create_timer(EXPIRY_PERIOD_S, self._expire)
        return SUCCESS

    def on_deactivate(self, state) -> TransitionCallbackReturn:
        self._unsubscribe()
        return SUCCESS

    def on_cleanup(self, state) -> TransitionCallbackReturn:
        self._release()
        return SUCCESS

    def on_shutdown(self, state) -> TransitionCallbackReturn:
        self._unsubscribe()
        self._release()
        return SUCCESS

    def on_error(self, state) -> TransitionCallbackReturn:
        self._unsubscribe()
        self._release()
        return SUCCESS   # back to unconfigured: a later configure may succeed

    def _unsubscribe(self) -> None:
        if self.inputs is not None:
            self.inputs.close()
        if self._frame_info is not None:
            self.destroy_subscription(self._frame_info)
        if self._expiry_timer is not None:
            self.destroy_timer(self._expiry_timer)
        self.inputs = self._frame_info = self._expiry_timer = None
        if self.worker is not None:
            self._stop_processing()
            self.worker = None

    def _release(self) -> None:
        for publisher in (self.entities_publisher, self.overlay_publisher):
            if publisher is not None:
                self.destroy_publisher(publisher)
        self.entities_publisher = self.overlay_publisher = None
        perceiver, self.perceiver = self.perceiver, None
        if perceiver is not None:
            perceiver.close()
            self.backend_name = "not loaded"
            self.get_logger().info("model released")

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
            entities, frame_index=index, image_width=width, image_height=height,
            source=self.params["source_name"], header=frame.header, degradation=degradation))
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
        values: dict[str, object] = {**self.lifecycle_values(), "backend": self.backend_name,
                                     "synchroniser": self.inputs.backend if self.inputs is not None else "none",
                                     "waiting_frame_infos": waiting_infos, "waiting_images": waiting_images}
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
