"""replay_node: plays a recorded stream as clean and degraded twins, with its ground truth.

Sources (`source`): a rosbag2 bag (MCAP or sqlite3), a dataset episode folder, a video file or an
image folder (`predrel_ros.sources`). Each frame goes out twice under the same frame_index and header:
`clean/*` untouched, `degraded/*` through the degradation `schedule` (`predrel_ros.degradations`,
e.g. `sweep:occlusion:30`; changeable at runtime with `ros2 param set /replay schedule blur:3`).
Frame dropping keeps indices: a dropped frame has only its FrameInfo, a repeat re-sends the last
delivered content under its own index. Detection noise acts on perception output, so the replay
only announces it in FrameInfo.degradation and the perception node applies it. Ground-truth
entities, predicates and the primitive go out on `ground_truth/*` when the source has them
(controlled-set bags and episodes), and the current condition on `degradation` when it changes.

Pacing (`rate`): 1.0 real time, any factor, or 0 = as fast as the degraded pipeline keeps up (after
each frame it waits for the frame's message on `pace_topic`, at most `pace_timeout_s`). At a rate
above 0, `lockstep_in_flight` N > 0 plays in lockstep (ros/replay/lockstep.py): a frame due while N
frames have no pace message yet is not published at all (counted `source.dropped_busy`), so both
twins process exactly the same frames at real time (clean-twin evaluation). Pace
messages go by the stream-order policy, `predrel_ros.core.stream_order`, strict: the replay numbers
the frames, so one older than the last, or implausibly far ahead, is counted `pace.out_of_order`
and releases nothing, a bogus frame_index included). With
`loop`, frame indices and stamps keep increasing across passes. With `shutdown_when_done` the node
exits 0 after the last frame (runs, tests).

A bag's camera topics (`image_topic`, `depth_topic`, `camera_info_topic`) are found by message
type unless named: raw or compressed (jpeg, png, compressedDepth), any names, camera info optional
(`predrel_ros.sources.bag`).

    ros2 run predrel_ros replay_node --ros-args -p source:=episode.mcap -p schedule:=sweep:blur:30
    ros2 run predrel_ros replay_node --ros-args -p source:=robot_bag -p image_topic:=/camera/image_raw/compressed
"""
from __future__ import annotations

import sys
import threading
import time
from typing import Any, Mapping

from rclpy.duration import Duration

from predrel_ros.core.errors import UserError
from predrel_ros.core.frame import CAMERA_FRAME_ID, Frame
from predrel_ros.core.stream_order import NEXT, StreamOrder
from predrel_ros.degradations import NONE, parse_schedule
from predrel_ros.msg import ActionEstimate, DegradationState, EntityArray, PredicateArray, ReliabilityReport
from predrel_ros.ros.kit.frame_counters import DROPPED_BUSY, DROPPED_BY_DEGRADATION, OUT_OF_ORDER, PROCESSED
from predrel_ros.ros.kit.node_base import PredrelNode, wanted
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
from predrel_ros.ros.messages.actions import ground_truth_action_to_msg
from predrel_ros.ros.messages.degradations import degradation_to_msg
from predrel_ros.ros.messages.entities import entities_to_msg
from predrel_ros.ros.messages.fields import header_at
from predrel_ros.ros.messages.predicates import predicates_to_msg
from predrel_ros.ros.replay.lockstep import InFlightWindow
from predrel_ros.ros.replay.replay_stream import Pacer, ReplayFrame, replay_frames
from predrel_ros.ros.replay.twin_degrader import SEED_FIXED, TwinDegrader
from predrel_ros.ros.replay.twin_streams import StreamPublishers, stream_topics
from predrel_ros.sources.bag import AUTO, CameraTopics
from predrel_ros.sources.bag import NONE as NONE_TOPIC
from predrel_ros.sources.open_source import open_frames, source_kind

NODE_NAME = "replay"
#: the longest wait for downstream to acknowledge the last reliable messages before exiting
FLUSH_TIMEOUT_S = 2.0
#: after the wait_for_topics nodes appeared, the time they get to discover each other
DISCOVERY_SETTLE_S = 3.0
#: pace_type -> message type; `reliability` (a clean_twin report names the newest frame matched in both
#: twins) holds the replay to the slower of the two pipelines
PACE_TYPES = {"predicates": PredicateArray, "entities": EntityArray, "reliability": ReliabilityReport}


def _check_schedule(text: str) -> None:
    parse_schedule(text)


def parse_wait_for_topics(text: str) -> dict[str, int]:
    """"a,b:3" -> {"a": 1, "b": 3}: topics and the publishers + subscriptions of other nodes each needs."""
    topics = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        topic, _, count = item.partition(":")
        if not topic.strip() or (count and not count.strip().isdigit()) or (count and int(count) < 1):
            raise ValueError(f"wait_for_topics: {item!r} is not TOPIC or TOPIC:COUNT (COUNT >= 1)")
        topics[topic.strip()] = int(count) if count else 1
    return topics


def _check_topic(name: str) -> None:
    if not name:
        raise ValueError("a topic name is required")


#: why the parameters that decide what is played, and how it is opened, are read-only
SOURCE_FIXED = "the source is opened and its frames planned when playing starts; another is another replay"
#: why the parameters of the wait before the first frame are read-only
WAIT_FIXED = "it acts once, before the first frame"

PARAMETERS = (
    ParameterSpec("source", "", "what to play: a rosbag2 bag (folder, .mcap or .db3), a dataset episode folder, "
                  "a video file or an image folder", fixed_because=SOURCE_FIXED),
    ParameterSpec("rate", 1.0, "playback speed: 1.0 real time, 2.0 twice as fast; 0 = as fast as the degraded "
                  "pipeline keeps up (waits for each frame on pace_topic)", minimum=0.0, maximum=1000.0,
                  runtime=True),
    ParameterSpec("pace_topic", "degraded/predicates", "with rate 0: the topic whose message for a frame "
                  "(matched by frame_index) releases the next frame", check=_check_topic,
                  fixed_because="the pace subscription is made at start"),
    ParameterSpec("pace_type", "predicates", "message type on pace_topic", choices=tuple(PACE_TYPES),
                  fixed_because="the pace subscription is made at start"),
    ParameterSpec("pace_timeout_s", 2.0, "with rate 0: the longest wait for a frame's pace message (then "
                  "the next frame goes out and `pace_timeout` is counted); in lockstep: how long a frame "
                  "without its pace message stays in flight", minimum=0.01, maximum=600.0, runtime=True),
    ParameterSpec("lockstep_in_flight", 0, "with rate > 0: at most this many published frames without their "
                  "pace message; a frame due while that many are in flight is not published (counted "
                  "`source.dropped_busy`), so every pipeline behind pace_topic gets the same frames; 0: off "
                  "(every frame goes out; each pipeline drops what it cannot take)", minimum=0, maximum=64,
                  runtime=True),
    ParameterSpec("loop", False, "play the source again and again (frame indices and stamps keep increasing)",
                  fixed_because=SOURCE_FIXED),
    ParameterSpec("passes", 0, "with loop: stop after this many passes over the source (0: without end), e.g. one "
                  "pass per condition of a sweep whose period is the source's length", minimum=0,
                  fixed_because=SOURCE_FIXED),
    ParameterSpec("start_offset_s", 0.0, "skip the source's first seconds", minimum=0.0, fixed_because=SOURCE_FIXED),
    ParameterSpec("max_frames", 0, "play at most this many frames per pass (0: all)", minimum=0,
                  fixed_because=SOURCE_FIXED),
    ParameterSpec("schedule", "none", "degradation schedule of the degraded twin: none, KIND:SEVERITY, "
                  "sweep:KINDS:PERIOD[:SEVERITIES] or segments:FRAME=COND,... (docs/degradations.md); a change "
                  "at runtime applies from the next frame, sweeps start there", runtime=True, check=_check_schedule),
    ParameterSpec("seed", 0, "seed of the degradations' random parts (same seed, same frames)", minimum=0,
                  maximum=2**32 - 1, fixed_because=SEED_FIXED),
    ParameterSpec("publish_clean", True, "publish the clean twin (clean/*)",
                  fixed_because="it decides the publishers, made at start"),
    ParameterSpec("publish_ground_truth", True, "publish ground_truth/* when the source has ground truth",
                  fixed_because="it decides the publishers, made at start"),
    ParameterSpec("shutdown_when_done", False, "exit (code 0) after the last frame instead of idling", runtime=True),
    ParameterSpec("wait_for_subscribers", 0, "before the first frame, wait until each published image stream has "
                  "this many subscribers (and, with rate 0, pace_topic a publisher)", minimum=0,
                  fixed_because=WAIT_FIXED),
    ParameterSpec("wait_for_topics", "", "before the first frame, also wait until each of these topics has other "
                  "nodes' endpoints on it: TOPIC (one) or TOPIC:COUNT publishers + subscriptions, comma-separated "
                  f"(e.g. degraded/predicates:3,degraded/action:2), then {DISCOVERY_SETTLE_S:g} s for them to "
                  "discover each other; so "
                  "slow starters (a model loading) miss no frame", check=parse_wait_for_topics,
                  fixed_because=WAIT_FIXED),
    ParameterSpec("wait_timeout_s", 10.0, "the longest wait for wait_for_subscribers (then play anyway, with a "
                  "warning)", minimum=0.0, fixed_because=WAIT_FIXED),
    ParameterSpec("stamps", "now", "header stamps: now (wall clock at publishing, like a live camera: "
                  "latency = receive time - stamp) or source (the recorded stamps, shifted per loop)",
                  choices=("now", "source"), fixed_because="the stamps of one run come from one clock (a change "
                  "would send them back or far ahead)"),
    ParameterSpec("frame_id", "", "header frame_id; empty: the source camera's (else "
                  f"{CAMERA_FRAME_ID})", fixed_because="the frames of one run are in one camera frame"),
    ParameterSpec("image_topic", AUTO, "a bag's colour image topic (sensor_msgs/Image or CompressedImage: jpeg, "
                  "png); empty: the bag's one image topic that is not depth, found by message type",
                  fixed_because=SOURCE_FIXED),
    ParameterSpec("depth_topic", AUTO, "a bag's depth topic (Image, or compressedDepth CompressedImage); empty: "
                  f"the one depth image topic when there is one; {NONE_TOPIC}: no depth", fixed_because=SOURCE_FIXED),
    ParameterSpec("camera_info_topic", AUTO, "a bag's CameraInfo topic; empty: the one beside the image topic "
                  f"(image_transport's <dir>/camera_info), else the only one; {NONE_TOPIC}: none",
                  fixed_because=SOURCE_FIXED),
    ParameterSpec("video_fps", 0.0, "frame rate of videos and image folders (0: the video's own, 30 for "
                  "image folders); bags and episodes carry their stamps", minimum=0.0, fixed_because=SOURCE_FIXED),
) + IMAGE_QOS_PARAMETERS

TOPICS = (
    *stream_topics("clean", "untouched"),
    *stream_topics("degraded", "degraded"),
    TopicSpec("ground_truth/entities", "predrel_ros/EntityArray", PUBLISHES, STREAM_QOS_TEXT,
              "ground-truth entities (source ground_truth)", "the source has ground truth"),
    TopicSpec("ground_truth/predicates", "predrel_ros/PredicateArray", PUBLISHES, STREAM_QOS_TEXT,
              "ground-truth predicates", "the source has ground truth"),
    TopicSpec("ground_truth/action", "predrel_ros/ActionEstimate", PUBLISHES, STREAM_QOS_TEXT,
              "ground-truth primitive (one-hot)", "the source has ground truth"),
    TopicSpec("degradation", "predrel_ros/DegradationState", PUBLISHES, LATCHED_QOS_TEXT,
              "the degraded twin's condition, on every change"),
    TopicSpec("degraded/predicates", "predrel_ros/PredicateArray", SUBSCRIBES, STREAM_QOS_TEXT,
              "`pace_topic` (EntityArray / ReliabilityReport with pace_type entities / reliability): a frame's "
              "message releases the next frame when rate is 0, and ends a frame's flight in lockstep"),
    DIAGNOSTICS,
)


class ReplayNode(PredrelNode):
    def __init__(self, **kwargs) -> None:
        super().__init__(NODE_NAME, PARAMETERS, on_parameters=self._on_parameters, **kwargs)
        p = self.params
        if not p["source"]:
            raise UserError("parameter source is empty: give the bag, episode folder, video or image folder to "
                            "play (-p source:=PATH)")
        self.source = p["source"]
        self._kind = source_kind(self.source)
        self._first = self._peek_source()
        self.twin = TwinDegrader(p["schedule"], p["seed"])
        self.streams = {"degraded": StreamPublishers(self, "degraded", p["image_qos"], p["image_qos_depth"])}
        if p["publish_clean"]:
            self.streams["clean"] = StreamPublishers(self, "clean", p["image_qos"], p["image_qos_depth"])
        self._gt = None
        if p["publish_ground_truth"] and self._first.has_ground_truth:
            self._gt = {"entities": self.publisher(EntityArray, "ground_truth/entities", STREAM_QOS),
                        "predicates": self.publisher(PredicateArray, "ground_truth/predicates", STREAM_QOS),
                        "action": self.publisher(ActionEstimate, "ground_truth/action", STREAM_QOS)}
        self.degradation_publisher = self.publisher(DegradationState, "degradation", LATCHED_QOS)
        self._clean = degradation_to_msg(NONE, 0)
        self._last_condition: tuple | None = None
        self._pace = threading.Condition()
        #: the frame_index of the newest pace message; never restarts (this node numbers the frames)
        self._pace_order = StreamOrder(restart_after=0)
        self._pace_order.accept(-1)   # before the first frame: a first bogus index is far ahead
        self._pace_subscription = self.subscription(PACE_TYPES[p["pace_type"]], p["pace_topic"], self._on_pace,
                                                    STREAM_QOS, stream="pace")
        self.pacer = Pacer(p["rate"]) if p["rate"] > 0 else None
        self.lockstep = self._lockstep_window(p["lockstep_in_flight"])
        self.next_index = 0
        self.loop_count = 0
        self.finished = threading.Event()
        self._stopping = threading.Event()
        self.publish_seconds = 0.0
        pace = "pipeline pace" if p["rate"] == 0 else f"rate {p['rate']:g}"
        if p["rate"] and self.lockstep is not None:
            pace += f" in lockstep ({self.lockstep.limit} in flight)"
        self.get_logger().info(
            f"replaying {self._kind} {self.source} ({self._first.width}x{self._first.height}"
            f"{', depth' if self._first.depth is not None else ''}"
            f"{', ground truth' if self._first.has_ground_truth else ''}) at {pace}, schedule {p['schedule']!r}")
        self._thread = threading.Thread(target=self._play, name="replay", daemon=True)
        self._thread.start()
        self.on_destroy(self._stop_playing)

    # -- source ----------------------------------------------------------------------------------
    def _open(self):
        fps = self.params["video_fps"] or None
        p = self.params
        topics = CameraTopics(image=p["image_topic"], depth=p["depth_topic"], camera_info=p["camera_info_topic"])
        return open_frames(self.source, fps=fps, topics=topics)

    def _peek_source(self) -> Frame:
        try:
            return next(iter(self._open()))
        except StopIteration:
            raise UserError(f"{self.source}: no frames") from None

    # -- parameters and pace ---------------------------------------------------------------------
    def _lockstep_window(self, limit: int) -> InFlightWindow | None:
        return InFlightWindow(limit, self.params["pace_timeout_s"]) if limit else None

    def _on_parameters(self, changed: Mapping[str, Any]) -> None:
        if "lockstep_in_flight" in changed:
            self.lockstep = self._lockstep_window(changed["lockstep_in_flight"])
        elif "pace_timeout_s" in changed and self.lockstep is not None:
            self.lockstep.timeout_s = changed["pace_timeout_s"]
        if "schedule" in changed:
            self.twin.set_schedule(changed["schedule"], start_frame=self.next_index)
        if "rate" in changed:
            rate = changed["rate"]
            if rate > 0:
                if self.pacer is None:
                    self.pacer = Pacer(rate)
                else:
                    self.pacer.set_rate(rate)
            else:
                self.pacer = None
            with self._pace:
                self._pace.notify_all()

    def _on_pace(self, msg) -> None:
        with self._pace:
            if self._pace_order.check(msg.frame_index) != NEXT:
                self.count("pace", OUT_OF_ORDER)  # harmless: an older frame's message came late (or a bogus one)
                return
            self._pace_order.accept(msg.frame_index)
            lockstep = self.lockstep
            if lockstep is not None:
                lockstep.done_through(msg.frame_index)
            self._pace.notify_all()

    def _wait_for_pace(self, frame_index: int) -> None:
        deadline = time.monotonic() + self.params["pace_timeout_s"]
        with self._pace:
            while self._pace_order.last < frame_index and not self._stopping.is_set() and self.pacer is None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    self.count(None, "pace_timeout")
                    return
                self._pace.wait(min(remaining, 0.1))

    def _pipelines_busy(self, lockstep: InFlightWindow) -> bool:
        """Whether the frame due now must be skipped in lockstep (frames without pace for too long leave)."""
        self.count(None, "pace_timeout", lockstep.expire())
        return lockstep.full()

    def _others_on(self, topic: str) -> int:
        """Publishers and subscriptions on `topic` other than this node's own."""
        name = self.resolve_topic_name(topic)
        node = (self.get_name(), self.get_namespace())
        own = sum(name == topic_name for topic_name, _ in self.get_publisher_names_and_types_by_node(*node))
        own += sum(name == topic_name for topic_name, _ in self.get_subscriber_names_and_types_by_node(*node))
        return self.count_publishers(name) + self.count_subscribers(name) - own

    def _wait_for_subscribers(self) -> None:
        needed = self.params["wait_for_subscribers"]
        topics = parse_wait_for_topics(self.params["wait_for_topics"])
        if not needed and not topics:
            return
        deadline = time.monotonic() + self.params["wait_timeout_s"]

        def ready() -> bool:
            images = all(s.image.get_subscription_count() >= needed for s in self.streams.values())
            pace = self.pacer is not None or self._pace_subscription.get_publisher_count() > 0
            return images and (pace or not needed) and all(self._others_on(t) >= n for t, n in topics.items())
        while not ready() and not self._stopping.is_set():
            if time.monotonic() > deadline:
                found = {t: self._others_on(t) for t in topics}
                missing = [f"{t} ({found[t]} of {n})" for t, n in topics.items() if found[t] < n]
                self.get_logger().warning(f"waited {self.params['wait_timeout_s']:g} s for {needed} subscriber(s) "
                                          f"on each image stream" + (f" and for the endpoints on {', '.join(missing)}"
                                                                     if missing else "") + ": playing anyway")
                return
            time.sleep(0.05)
        if topics:  # the nodes just seen must still discover each other (e.g. action <-> predicates)
            self._stopping.wait(DISCOVERY_SETTLE_S)

    # -- playing ---------------------------------------------------------------------------------
    def _play(self) -> None:
        try:
            self._wait_for_subscribers()
            p = self.params
            for item in replay_frames(self._open, p["start_offset_s"], p["max_frames"], p["loop"], p["passes"]):
                if self._stopping.is_set():
                    return
                lockstep = self.lockstep
                if self.pacer is not None:
                    self.pacer.wait(item.time_ns, stop=self._stopping.is_set)
                    if lockstep is not None and self._pipelines_busy(lockstep):
                        self.next_index = item.frame_index + 1
                        self.count("source", DROPPED_BUSY)
                        continue
                start = time.perf_counter()
                published = self._publish(item)
                self.publish_seconds += time.perf_counter() - start
                self.latency.add(time.perf_counter() - start)
                if self.pacer is None and published:
                    self._wait_for_pace(item.frame_index)
                elif lockstep is not None and published:
                    lockstep.sent(item.frame_index)
            self._flush()
            self.get_logger().info(f"played {self.next_index} frames")
            self.finished.set()
            if self.params["shutdown_when_done"]:
                self.exit_code = 0
        except UserError as error:
            self.get_logger().error(f"replay stopped: {error}")
            self.exit_code = 1
        except Exception as error:  # a broken source must end the node visibly, not hang it
            self.get_logger().error(f"replay failed: {error!r}")
            self.exit_code = 1

    def _header(self, item: ReplayFrame):
        frame = item.frame
        frame_id = self.params["frame_id"] or (frame.camera.frame_id if frame.camera else CAMERA_FRAME_ID)
        if self.params["stamps"] == "now":
            stamp = self.get_clock().now().nanoseconds
        else:
            stamp = self._first.stamp_ns + item.time_ns
        return header_at(stamp, frame_id)

    def _publish(self, item: ReplayFrame) -> bool:
        """Publish one frame's twins and ground truth; True when the degraded image went out."""
        frame, index = item.frame, item.frame_index
        self.next_index = index + 1
        self.loop_count = item.loop
        header = self._header(item)
        twin = self.twin.degrade(index, frame.rgb, targets=frame.entities, payload=frame)
        current = twin.degraded.degrader
        degradation = degradation_to_msg(current.kind, current.severity, current.seed, current.parameters())
        self._announce(current, degradation)
        if self._gt is not None:
            self._publish_ground_truth(frame, index, header)
        if "clean" in self.streams:
            self.streams["clean"].publish(header, index, self.source, "deliver", index, self._clean, frame.rgb,
                                          frame.depth, frame.camera)
        shown: Frame | None = twin.payload
        action = twin.degraded.action.value
        source_index = twin.degraded.source_index if twin.degraded.source_index is not None else index
        published = self.streams["degraded"].publish(
            header, index, self.source, action, source_index, degradation, twin.degraded.image,
            None if shown is None else shown.depth, None if shown is None else shown.camera)
        self.count("source", PROCESSED)
        if twin.degraded.image is None:
            self.count("degraded", DROPPED_BY_DEGRADATION)
        elif action == "repeat":
            self.count("degraded", "repeated")
        return published.image

    def _announce(self, degrader, degradation: DegradationState) -> None:
        condition = (degrader.kind, degrader.severity)
        if condition != self._last_condition:
            self._last_condition = condition
            self.degradation_publisher.publish(degradation)
            self.get_logger().info(f"frame {self.next_index - 1}: degradation {degrader.kind} severity "
                                   f"{degrader.severity}")

    def _publish_ground_truth(self, frame: Frame, index: int, header) -> None:
        gt = self._gt
        if frame.entities is not None and wanted(gt["entities"]):
            gt["entities"].publish(entities_to_msg(
                frame.entities, frame_index=index, image_width=frame.width, image_height=frame.height,
                source="ground_truth", header=header))
        if frame.predicates is not None and wanted(gt["predicates"]):
            gt["predicates"].publish(predicates_to_msg(frame.predicates, frame_index=index,
                                                       source="ground_truth", header=header))
        if frame.primitive is not None and wanted(gt["action"]):
            gt["action"].publish(ground_truth_action_to_msg(frame.primitive, index, header))

    def _flush(self) -> None:
        """Wait until subscribers acknowledged the reliable messages (the last FrameInfos)."""
        for stream in self.streams.values():
            stream.frame_info.wait_for_all_acked(Duration(seconds=FLUSH_TIMEOUT_S))

    # -- diagnostics and shutdown ----------------------------------------------------------------
    def diagnostic_values(self) -> Mapping[str, object]:
        condition = self._last_condition or (NONE, 0)
        return {"source": self.source, "frame_index": self.next_index - 1, "loop": self.loop_count,
                "degradation": f"{condition[0]}:{condition[1]}", "finished": self.finished.is_set()}

    def _stop_playing(self) -> None:
        self._stopping.set()
        with self._pace:
            self._pace.notify_all()
        self._thread.join(5.0)
        if self.next_index:
            self.get_logger().info(f"publishing cost {1e3 * self.publish_seconds / self.next_index:.2f} ms per "
                                   f"frame (twins, degradation and ground truth)")


def main(args: list[str] | None = None) -> int:
    return run_node(ReplayNode, args)


if __name__ == "__main__":
    sys.exit(main())
