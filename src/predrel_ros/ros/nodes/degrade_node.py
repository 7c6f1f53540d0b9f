"""degrade_node: clean and degraded twins of a live camera, published exactly like the replay node's.

Subscribes the camera (`image_raw`; with `use_depth` also the aligned `depth/image_raw` and
`camera_info`, synchronised; without, the latest `camera_info` is passed on) and publishes
`clean/*` and `degraded/*` with the same header and a frame_index it counts itself, FrameInfo for
every frame (drops too) and the condition on `degradation`. The degradation follows `schedule`
(changeable at runtime). Occlusion covers the boxes of the latest `clean/entities` (the clean
pipeline's perception) when `occlusion_targets` is `entities` and some have arrived, else random
zones. Only the newest camera frame is degraded: frames replaced before the worker took them are
counted `camera.dropped_stale` and get no frame_index. Camera stamps go by the stream-order policy
(`predrel_ros.core.stream_order`): a frame whose stamp is not newer than the last degraded one, or
more than an hour ahead of it (a bogus stamp), is counted `camera.out_of_order`; `restart_after`
(5) of them in a row mean the camera's clock went back for good (a bag played again): counted
`camera.restarts` (logged rate-limited), and degrading goes on, the frame_index still counting up.

    ros2 run predrel_ros degrade_node --ros-args -r image_raw:=/camera/color/image_raw \\
        -r camera_info:=/camera/color/camera_info -p schedule:=sweep:occlusion:90
"""
from __future__ import annotations

import sys
import time
from typing import Any, Mapping

import numpy as np

from predrel_ros.core.stream_order import StreamOrder
from predrel_ros.degradations import NONE, parse_schedule
from predrel_ros.msg import DegradationState, EntityArray
from predrel_ros.ros.inputs import camera_inputs
from predrel_ros.ros.inputs.camera_inputs import CameraFrame, CameraInputs
from predrel_ros.ros.inputs.newest_frame import NewestFrameWorker
from predrel_ros.ros.kit.frame_counters import DROPPED_BY_DEGRADATION, DROPPED_STALE, FAILED, MALFORMED, PROCESSED
from predrel_ros.ros.kit.frame_order import admit
from predrel_ros.ros.kit.message_bounds import MAX_ENTITIES
from predrel_ros.ros.kit.node_base import PredrelNode
from predrel_ros.ros.kit.parameter_specs import ParameterSpec
from predrel_ros.ros.kit.qos import IMAGE_QOS_PARAMETERS, LATCHED_QOS, STREAM_QOS
from predrel_ros.ros.kit.runtime import run_node
from predrel_ros.ros.kit.topic_specs import (
    DIAGNOSTICS,
    LATCHED_QOS_TEXT,
    PUBLISHES,
    STREAM_QOS_TEXT,
    SUBSCRIBES,
    TopicSpec,
)
from predrel_ros.ros.messages.degradations import degradation_to_msg
from predrel_ros.ros.messages.entities import entities_from_msg
from predrel_ros.ros.replay.twin_degrader import SEED_FIXED, TwinDegrader
from predrel_ros.ros.replay.twin_streams import StreamPublishers, stream_topics

NODE_NAME = "degrade"
#: stream under which every camera frame's outcome is counted
CAMERA = "camera"


def _check_schedule(text: str) -> None:
    parse_schedule(text)


PARAMETERS = (
    ParameterSpec("schedule", "none", "degradation schedule of the degraded twin: none, KIND:SEVERITY, "
                  "sweep:KINDS:PERIOD[:SEVERITIES] or segments:FRAME=COND,... (docs/degradations.md); a change "
                  "at runtime applies from the next frame, sweeps start there", runtime=True, check=_check_schedule),
    ParameterSpec("seed", 0, "seed of the degradations' random parts", minimum=0, maximum=2**32 - 1,
                  fixed_because=SEED_FIXED),
    ParameterSpec("occlusion_targets", "entities", "what occlusion covers: entities (the boxes of the latest "
                  "clean/entities, random zones until some arrive) or random (random zones)",
                  choices=("entities", "random"), fixed_because="it decides the clean/entities subscription, "
                  "made at start"),
    ParameterSpec("source_name", "camera", "FrameInfo.source of the published frames", runtime=True),
    MAX_ENTITIES,
) + camera_inputs.PARAMETERS + IMAGE_QOS_PARAMETERS

TOPICS = (
    *camera_inputs.TOPICS,
    TopicSpec("clean/entities", "predrel_ros/EntityArray", SUBSCRIBES, STREAM_QOS_TEXT,
              "the clean pipeline's entities: their boxes are the occlusion targets", "occlusion_targets entities"),
    *stream_topics("clean", "untouched"),
    *stream_topics("degraded", "degraded"),
    TopicSpec("degradation", "predrel_ros/DegradationState", PUBLISHES, LATCHED_QOS_TEXT,
              "the degraded twin's condition, on every change"),
    DIAGNOSTICS,
)


class DegradeNode(PredrelNode):
    def __init__(self, **kwargs) -> None:
        super().__init__(NODE_NAME, PARAMETERS, on_parameters=self._on_parameters, **kwargs)
        p = self.params
        self.twin = TwinDegrader(p["schedule"], p["seed"])
        self.streams = {prefix: StreamPublishers(self, prefix, p["image_qos"], p["image_qos_depth"])
                        for prefix in ("clean", "degraded")}
        self.degradation_publisher = self.publisher(DegradationState, "degradation", LATCHED_QOS)
        self._clean = degradation_to_msg(NONE, 0)
        self._last_condition: tuple[str, int] | None = None
        self._targets: np.ndarray | None = None
        if p["occlusion_targets"] == "entities":
            self.subscription(EntityArray, "clean/entities", self._on_entities, STREAM_QOS, stream="clean/entities")
        self.next_index = 0
        self.order = StreamOrder.of_stamps()
        self._camera_sequence = 0   # of the last frame taken (camera_inputs: the synchroniser's restarts)
        self.worker: NewestFrameWorker[CameraFrame] = NewestFrameWorker(
            self._process, self._on_worker_error, lambda frame: self.count(CAMERA, DROPPED_STALE), "degrade")
        self.on_destroy(self._stop_processing)
        self.inputs = CameraInputs(self, self._on_camera_frame,
                                   lambda msg: (self.count(CAMERA, "in"), self.count(CAMERA, MALFORMED)))
        image_topic = self.resolve_topic_name(self.inputs.topics[camera_inputs.IMAGE][1])
        self.get_logger().info(f"degrading {image_topic} with schedule {p['schedule']!r}")

    def _on_parameters(self, changed: Mapping[str, Any]) -> None:
        if "schedule" in changed:
            self.twin.set_schedule(changed["schedule"], start_frame=self.next_index)

    def _on_entities(self, msg: EntityArray) -> None:
        entities = entities_from_msg(msg, decode_masks=False, max_entities=self.params["max_entities_per_message"])
        self._targets = np.array([entity.box for entity in entities], dtype=np.float64).reshape(-1, 4)
        self.count("clean/entities", PROCESSED)

    def _on_camera_frame(self, frame: CameraFrame) -> None:
        self.count(CAMERA, "in")
        self.worker.submit(frame)

    def _process(self, frame: CameraFrame) -> None:
        if frame.sequence != self._camera_sequence:   # the synchroniser saw the camera restart (counted there)
            self._camera_sequence = frame.sequence
            self.order.reset()
        if not admit(self, self.order, CAMERA, frame.stamp_ns, "degrading"):
            return
        self.order.accept(frame.stamp_ns)
        index = self.next_index
        self.next_index += 1
        twin = self.twin.degrade(index, frame.rgb, targets=self._targets, payload=frame)
        current = twin.degraded.degrader
        degradation = degradation_to_msg(current.kind, current.severity, current.seed, current.parameters())
        if (current.kind, current.severity) != self._last_condition:
            self._last_condition = (current.kind, current.severity)
            self.degradation_publisher.publish(degradation)
            self.get_logger().info(f"frame {index}: degradation {current.kind} severity {current.severity}")
        source = self.params["source_name"]
        self.streams["clean"].publish(frame.header, index, source, "deliver", index, self._clean, frame.rgb,
                                      frame.depth, frame.info)
        shown: CameraFrame | None = twin.payload
        degraded = twin.degraded
        self.streams["degraded"].publish(
            frame.header, index, source, degraded.action.value,
            index if degraded.source_index is None else degraded.source_index, degradation, degraded.image,
            None if shown is None else shown.depth, None if shown is None else shown.info)
        self.count(CAMERA, PROCESSED)
        if degraded.image is None:
            self.count("degraded", DROPPED_BY_DEGRADATION)
        self.latency.add(time.monotonic() - frame.received)

    def _on_worker_error(self, frame: CameraFrame, error: BaseException) -> None:
        if isinstance(error, ValueError):
            self.reject(CAMERA, error, MALFORMED)
        else:
            self.count(CAMERA, FAILED)
            self.log_throttled(f"{CAMERA}.{FAILED}", f"degrading a frame failed: {error!r}", error=True)

    def diagnostic_values(self) -> Mapping[str, object]:
        kind, severity = self._last_condition or (NONE, 0)
        return {"frame_index": self.next_index - 1, "degradation": f"{kind}:{severity}",
                "occlusion_targets": 0 if self._targets is None else len(self._targets)}

    def _stop_processing(self) -> None:
        if self.worker.stop() is not None:
            self.count(CAMERA, DROPPED_STALE)


def main(args: list[str] | None = None) -> int:
    return run_node(DegradeNode, args)


if __name__ == "__main__":
    sys.exit(main())
