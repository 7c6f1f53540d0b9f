"""reliability_node: rolling predicate reliability and runtime trust (`predrel_ros/ReliabilityReport`,
`/diagnostics`).

The work is `predrel_ros.reliability.monitor.ReliabilityMonitor`. It watches the evaluated
predicate stream (`predicates`, e.g. remapped to `degraded/predicates`) in one of three reference
modes (`reference_mode`):

- `ground_truth`: `reference` carries ground-truth predicates (remap it to
  `ground_truth/predicates`); PRS, TPC, CWS and PDS against the truth;
- `clean_twin`: `reference` carries the clean twin pipeline's predicates (remap it to
  `clean/predicates`); the same metrics against the clean twin;
- `self`: no reference (a live robot): TPC-S, confidence, UNK rate, calibrated expected
  agreement and logic-rule violations, judged against the clean profile (`clean_profile`) when
  one is given (docs/design.md, "Runtime trust: reliability without a clean twin").

Entities. The two sides name entities by their own track ids (the clean twin runs a tracker of its
own, the ground truth has its ids), so with `associate` (default) the node also takes the entities
each side's predicates were computed from: `entities` (the evaluated pipeline's, e.g. remapped to
degraded/entities) and `reference_entities` (clean/entities or ground_truth/entities); every frame
the evaluated entities are associated with the reference entities (same class, box IoU at least
`match_iou`, Hungarian) and the evaluated predicates are compared under the reference's ids.
Predicates about an evaluated entity without a partner (a false detection) are left out and
counted (`unassociated_estimates` on /diagnostics); a reference entity the pipeline missed makes
its predicates disagree. In `self` mode with `skip_replaced_tracks` (default) the node takes
`entities` too and leaves out the predicates of a track that was replaced by a new track of the
same class (an identity switch: the object is tracked again under its new id;
`replaced_track_estimates`). The parts of a frame (predicates, reference, and the entities) are
joined by frame_index in a bounded buffer (`match_buffer` frames per part). Order is the
stream-order policy's (`predrel_ros.core.stream_order`): an evaluated frame older than the last one,
or implausibly far ahead of it, is counted `predicates.out_of_order` (a part of another stream,
`<stream>.out_of_order`); `restart_after` of them in a row start a new sequence (the windows are
forgotten; counted `predicates.restarts`, logged rate-limited).

Trust model (self mode). With `trust_model` (default: the estimator fitted for the embedded
default perception model, `reliability/models/default-trust-model.json`) the trust of each group,
and of the predicates in it, is the estimator's (`predrel_ros.reliability.trust_estimator`): the
agreement to expect from the group's window signals and the evidence beyond the predicates, which
the node gathers from `entities` (a scene memory for object permanence, detection statistics,
stream timing; the masks are decoded for their areas) and, with `image_quality`, from the camera
images (`image`, subscribed with the camera's QoS by default: `image_qos`; paired with the
entities by stamp: sharpness, exposure, contrast, noise, blockiness; an image that comes after its
entities is left out). The reason names the expected
agreement and the strongest evidence. A model fitted for another perception model or camera says
little: fit one with `predrel trust fit`, or set trust_model:="" for the trust bounds alone.

Every `publish_every_n_frames` processed frames (while anybody subscribes) a ReliabilityReport
goes out with the header and degradation of its newest frame: per predicate name a pooled entry
(subject = object = -1) followed by one entry per stream (pair) when `report_streams`, and one
entry per group (contact, static, dynamic, derived). Each carries PRS, PDS (over the severities
seen in the window; NaN with fewer than two), TPC, TPC-S, CWS, DIS (NaN: a live stream has no
ablation), the mean confidence, the logic-rule violation rate, the samples and the trust level
OK / WARN / ERROR / STALE with its reason (`predrel_ros.reliability.trust`: bounds in the `trust`
section of `config`). A group's trust is the worst of its predicates'.

/diagnostics: the node's own status (counters, rates, latency), plus one status per predicate group
named `<node>/<group>`, whose level is the group's trust (STALE while no frame was processed for
`stale_after_s`). Frame accounting: each evaluated frame ends in `predicates.processed`, `.unmatched`
(the rest of its frame never came), `.out_of_order`, `.malformed`, `.too_large` (more predicates
than `max_predicates_per_message`, refused unread) or `.failed`; each reference frame in
`reference.processed`, `.unmatched` (no evaluated twin: e.g. dropped by the degradation),
`.out_of_order`, `.malformed` or `.too_large`; entity frames likewise under `entities.*` and
`reference_entities.*` (bound: `max_entities_per_message`). Frames still waiting at shutdown are
counted unmatched.

    ros2 run predrel_ros reliability_node --ros-args -p reference_mode:=clean_twin \\
        -r predicates:=degraded/predicates -r reference:=clean/predicates \\
        -r entities:=degraded/entities -r reference_entities:=clean/entities
"""
from __future__ import annotations

import dataclasses
import math
import sys
import time
from collections import OrderedDict
from typing import Mapping

from sensor_msgs.msg import Image

from predrel_ros.core.errors import UserError
from predrel_ros.core.package_files import config_path
from predrel_ros.msg import EntityArray, PredicateArray, ReliabilityReport
from predrel_ros.predicates import PredicateConfig
from predrel_ros.predicates.vocabulary import GROUPS
from predrel_ros.reliability import matching
from predrel_ros.reliability.association import MIN_IOU
from predrel_ros.reliability.image_quality import ImageQuality
from predrel_ros.reliability.monitor import REFERENCE_MODES, SELF, MonitorConfig, ReliabilityMonitor
from predrel_ros.reliability.trust import STALE, CleanProfile, TrustConfig
from predrel_ros.reliability.trust_estimator import DEFAULT_TRUST_MODEL_FILE, TrustModel
from predrel_ros.ros.kit import diagnostics
from predrel_ros.ros.kit.frame_counters import OUT_OF_ORDER, PROCESSED, UNMATCHED
from predrel_ros.ros.kit.frame_order import RESTARTS, restart_after_parameter
from predrel_ros.ros.kit.health import WARN
from predrel_ros.ros.kit.message_bounds import MAX_ENTITIES, MAX_PREDICATES
from predrel_ros.ros.kit.node_base import PredrelNode, wanted
from predrel_ros.ros.kit.parameter_specs import ParameterSpec
from predrel_ros.ros.kit.qos import IMAGE_QOS_CHOICES, MATCHED, QOS_FIXED, STREAM_QOS, SUBSCRIBER_IMAGE_DEPTH, image_qos
from predrel_ros.ros.kit.runtime import run_node
from predrel_ros.ros.kit.topic_specs import DIAGNOSTICS, PUBLISHES, STREAM_QOS_TEXT, SUBSCRIBES, TopicSpec
from predrel_ros.ros.messages.degradations import checked_degradation_from_msg
from predrel_ros.ros.messages.entities import entities_from_msg
from predrel_ros.ros.messages.fields import stamp_to_ns
from predrel_ros.ros.messages.images import image_to_numpy
from predrel_ros.ros.messages.predicates import predicates_from_msg
from predrel_ros.ros.messages.reliability import TRUST_CODES, reliability_report_to_msg

NODE_NAME = "reliability"
#: its params file in config/ (named after the executable, like predicate_node.yaml)
PARAMS_FILE = "reliability_node.yaml"
#: the streams frames are counted under, each the topic of one part of a frame (reliability.matching)
PREDICATES, REFERENCE = "predicates", "reference"
ENTITIES, REFERENCE_ENTITIES = "entities", "reference_entities"
STREAMS = {matching.EVALUATED: PREDICATES, matching.REFERENCE: REFERENCE,
           matching.EVALUATED_ENTITIES: ENTITIES, matching.REFERENCE_ENTITIES: REFERENCE_ENTITIES}
#: the camera images (image quality evidence, self mode with a trust model)
IMAGE = "image"
#: the trust_model value that names the packaged model
DEFAULT_TRUST_MODEL = "default"
#: how often the node checks whether frames stopped coming
STALE_CHECK_PERIOD_S = 0.5


def frame_outcomes(parts) -> dict[str, list[tuple[str, str]]]:
    """monitor counter -> the (stream, outcome) counts of the node's frame accounting it adds to,
    for a monitor that joins `parts`: a processed frame is one processed item of every part."""
    outcomes: dict[str, list[tuple[str, str]]] = {
        "processed": [(PREDICATES, PROCESSED)], "out_of_order": [(PREDICATES, OUT_OF_ORDER)],
        RESTARTS: [(PREDICATES, RESTARTS)]}
    if len(parts) > 1:
        outcomes["matched"] = [(STREAMS[part], PROCESSED) for part in parts if part != matching.EVALUATED]
        # a frame the evaluated pipeline dropped is scored from its reference parts alone
        outcomes["incomplete"] = [(STREAMS[part], PROCESSED) for part in parts
                                  if part in (matching.REFERENCE, matching.REFERENCE_ENTITIES)]
        for part in parts:
            outcomes[f"unmatched_{part}"] = [(STREAMS[part], UNMATCHED)]
            outcomes[f"late_{part}"] = [(STREAMS[part], OUT_OF_ORDER)]
            outcomes[f"duplicate_{part}"] = [(STREAMS[part], OUT_OF_ORDER)]
    return outcomes


#: why the parameters that decide what the node subscribes to are read-only
SUBSCRIPTIONS_FIXED = "it decides the monitor's parts and the subscriptions, made at start"
#: the parameters that change settings of the monitor (read at every frame) at runtime
MONITOR_RUNTIME = ("match_iou", "min_rule_checks", "restart_after")
#: the parameters a runtime change of which builds the monitor anew (its windows start empty)
MONITOR_REBUILT = ("window", "config", "clean_profile", "match_buffer", "tpc_tolerance", "pds_mode")
#: what such a change does, in their descriptions
REBUILT = ("; a change at runtime builds the monitor anew (refused when it cannot be built, e.g. a clean profile of "
           "another window): the frames waiting are counted unmatched and the windows start empty")

PARAMETERS = (
    ParameterSpec("reference_mode", SELF, "what the predicates are compared with: ground_truth or clean_twin (the "
                  "`reference` topic), or self (no reference: reference-free trust)", choices=REFERENCE_MODES,
                  fixed_because=SUBSCRIPTIONS_FIXED),
    ParameterSpec("window", 30, "frames of the rolling window (metrics, violation rates, PDS)" + REBUILT, minimum=2,
                  maximum=100_000, runtime=True),
    ParameterSpec("config", "predicates.yaml", "YAML with the `trust` section (trust bounds, min_frames) and the "
                  "`predicates` section (the logic rules look back event_memory frames and use the extractor's "
                  "window); a bare file name is looked up in the package's config/ folder" + REBUILT, runtime=True),
    ParameterSpec("clean_profile", "", "clean profile (JSON or YAML, `predrel profile` with this window): the worst "
                  "confidence, TPC-S, UNK and violation rates of clean windows, and the calibration; trust then judges "
                  "what is worse than clean data gets. Empty: absolute bounds only" + REBUILT, runtime=True),
    ParameterSpec("trust_model", DEFAULT_TRUST_MODEL, "self mode: the trust estimator (`predrel trust fit`, JSON, "
                  "fitted with this window) whose expected agreement and risk set each group's trust; `default`: "
                  "the one fitted for the embedded default perception model (not used without "
                  "`skip_replaced_tracks`, which brings the entities); empty: none, the trust bounds and clean "
                  "profile alone",
                  fixed_because=SUBSCRIPTIONS_FIXED),
    ParameterSpec("image_quality", True, "self mode with a trust model: measure the camera images (`image`) the "
                  "entities come from as trust evidence (paired by stamp)", fixed_because=SUBSCRIPTIONS_FIXED),
    ParameterSpec("image_qos", MATCHED, "QoS of the `image` subscription: matched (the camera's reliability and "
                  "durability at start, else sensor_data), sensor_data / best_effort, reliable, or system_default; "
                  "a reliable subscriber never connects to a best-effort camera", choices=IMAGE_QOS_CHOICES,
                  fixed_because=QOS_FIXED),
    ParameterSpec("publish_every_n_frames", 1, "publish a report after every n-th processed frame", minimum=1,
                  maximum=100_000, runtime=True),
    ParameterSpec("report_streams", True, "besides one entry per predicate name, one entry per predicate stream "
                  "(name, subject, object) in the report", runtime=True),
    ParameterSpec("match_buffer", 64, "frames per part (predicates, reference, entities) waiting for the rest of "
                  "their frame; older ones are counted unmatched" + REBUILT, minimum=1, maximum=100_000,
                  runtime=True),
    ParameterSpec("associate", True, "reference modes: associate the evaluated with the reference entities every "
                  "frame (topics `entities`, `reference_entities`) and compare predicates about the same objects; "
                  "false: match predicate streams by the ids each side gives (only right when both share ids)",
                  fixed_because=SUBSCRIPTIONS_FIXED),
    ParameterSpec("match_iou", MIN_IOU, "box IoU an evaluated entity needs with a reference entity of its class to be "
                  "associated; a change applies from the next frame", minimum=0.0, maximum=1.0, runtime=True),
    ParameterSpec("skip_replaced_tracks", True, "self mode: leave out the predicates of a track replaced by a new "
                  "track of the same class (an identity switch; needs `entities`)", fixed_because=SUBSCRIPTIONS_FIXED),
    restart_after_parameter("evaluated", "the rolling window"),
    ParameterSpec("tpc_tolerance", 2, "frames within which a transition matches a reference transition (TPC)"
                  + REBUILT, minimum=0, maximum=100, runtime=True),
    ParameterSpec("pds_mode", "endpoint", "PDS over the severities in the window: endpoint (first to last) or "
                  "mean_step" + REBUILT, choices=("endpoint", "mean_step"), runtime=True),
    ParameterSpec("min_rule_checks", 5, "logic-rule checks in the window below which a violation rate is reported "
                  "but not judged", minimum=0, maximum=100_000, runtime=True),
    ParameterSpec("stale_after_s", 2.0, "with no frame processed for this long, the group statuses on /diagnostics "
                  "are STALE and the node warns", minimum=0.1, maximum=3600.0, runtime=True),
    MAX_PREDICATES,
    MAX_ENTITIES,
)

TOPICS = (
    TopicSpec("predicates", "predrel_ros/PredicateArray", SUBSCRIBES, STREAM_QOS_TEXT,
              "the evaluated predicate stream (e.g. remapped to degraded/predicates)"),
    TopicSpec("reference", "predrel_ros/PredicateArray", SUBSCRIBES, STREAM_QOS_TEXT,
              "reference predicates matched by frame_index: ground_truth/predicates or clean/predicates",
              "reference_mode ground_truth or clean_twin"),
    TopicSpec("entities", "predrel_ros/EntityArray", SUBSCRIBES, STREAM_QOS_TEXT,
              "the entities the evaluated predicates were computed from (e.g. remapped to degraded/entities)",
              "associate in a reference mode, or skip_replaced_tracks in self mode"),
    TopicSpec("reference_entities", "predrel_ros/EntityArray", SUBSCRIBES, STREAM_QOS_TEXT,
              "the entities of the reference predicates: ground_truth/entities or clean/entities",
              "associate in a reference mode"),
    TopicSpec("image", "sensor_msgs/Image", SUBSCRIBES,
              f"`image_qos` (default matched: the camera's at start, else best effort), "
              f"keep last {SUBSCRIBER_IMAGE_DEPTH}",
              "the camera image the entities were extracted from (e.g. remapped to camera/color/image_raw), "
              "paired with them by stamp: image-quality evidence", "self mode with a trust model and image_quality"),
    TopicSpec("reliability", "predrel_ros/ReliabilityReport", PUBLISHES, STREAM_QOS_TEXT,
              "rolling reliability per predicate stream, predicate and group, with trust and reason"),
    TopicSpec(DIAGNOSTICS.name, DIAGNOSTICS.type, PUBLISHES, DIAGNOSTICS.qos,
              "about 1 Hz: the node's status, counters, rates and latency, plus one status per predicate group "
              "(`<node>/<group>`, level = the group's trust)"),
)


def load_monitor(params: Mapping[str, object]) -> ReliabilityMonitor:
    """The monitor configured by the node's parameters (UserError naming the parameter at fault)."""
    path = config_path(str(params["config"]))
    try:
        trust = TrustConfig.load(path, section="trust")
        predicates = PredicateConfig.load(path, section="predicates")
    except (OSError, ValueError) as error:
        raise UserError(f"parameter config: {path}: {error}") from None
    profile = None
    if params["clean_profile"]:
        profile_path = config_path(str(params["clean_profile"]), "clean_profile")
        try:
            profile = CleanProfile.load(profile_path)
        except (OSError, ValueError) as error:
            raise UserError(f"parameter clean_profile: {profile_path}: {error}") from None
        if profile.window != int(params["window"]):
            raise UserError(f"parameter clean_profile: {profile_path} was measured over {profile.window}-frame windows "
                            f"and the node's window is {params['window']}; measure it with `predrel profile --window "
                            f"{params['window']}` or set window:={profile.window}")
    trust_model = _trust_model(params)
    config = MonitorConfig.for_predicates(
        predicates, reference_mode=str(params["reference_mode"]), window=int(params["window"]),
        match_buffer=int(params["match_buffer"]), tpc_tolerance=int(params["tpc_tolerance"]),
        pds_mode=str(params["pds_mode"]), restart_after=int(params["restart_after"]),
        min_rule_checks=int(params["min_rule_checks"]), associate=bool(params["associate"]),
        match_iou=float(params["match_iou"]), skip_replaced_tracks=bool(params["skip_replaced_tracks"]))
    return ReliabilityMonitor(config, trust, profile, predicates, trust_model)


def _trust_model(params: Mapping[str, object]) -> TrustModel | None:
    """The trust model the parameters ask for, in self mode (UserError naming the parameter at fault)."""
    value = str(params["trust_model"])
    if params["reference_mode"] != SELF or not value:
        return None
    if not params["skip_replaced_tracks"]:
        if value == DEFAULT_TRUST_MODEL:
            return None
        raise UserError("parameter trust_model needs skip_replaced_tracks:=true (the trust evidence comes from the "
                        "entities)")
    path = DEFAULT_TRUST_MODEL_FILE if value == DEFAULT_TRUST_MODEL else config_path(value, "trust_model")
    try:
        model = TrustModel.load(path)
    except (OSError, ValueError, KeyError) as error:
        raise UserError(f"parameter trust_model: {path}: {error}") from None
    if model.window != int(params["window"]):
        raise UserError(f"parameter trust_model: {path} was fitted over {model.window}-frame windows and the node's "
                        f"window is {params['window']}; fit it with `predrel trust fit --window {params['window']}` "
                        f"or set window:={model.window}")
    return model


class ReliabilityNode(PredrelNode):
    def __init__(self, **kwargs) -> None:
        super().__init__(NODE_NAME, PARAMETERS, on_parameters=self._on_parameters,
                         check_parameters=self._check_parameters, **kwargs)
        p = self.params
        self.monitor = load_monitor(p.values)
        self._loaded: ReliabilityMonitor | None = None   # a new monitor, built while its change is checked
        model = self.monitor.trust_model
        self.get_logger().info(
            f"reference mode {p['reference_mode']}, window {p['window']} frames, clean profile "
            f"{p['clean_profile'] or 'none (absolute trust bounds)'}, trust model "
            f"{p['trust_model'] if model is not None else 'none'}")
        #: stamp -> image measures of the images not yet paired with their entities
        self._image_measures: OrderedDict[tuple[int, int], dict] = OrderedDict()
        self._quality = ImageQuality()
        parts = self.monitor.config.parts
        self._outcomes = frame_outcomes(parts)
        self._counted = self.monitor.snapshot_counters()
        self._processed = 0
        self._last_processed: float | None = None
        self.report_publisher = self.publisher(ReliabilityReport, "reliability", STREAM_QOS)
        self.subscription(PredicateArray, "predicates", self._on_predicates, STREAM_QOS, stream=PREDICATES)
        #: the subscriptions of the other parts of a frame, by stream (for the "nobody publishes" hint)
        self.part_subscriptions = {}
        if matching.REFERENCE in parts:
            self.part_subscriptions[REFERENCE] = self.subscription(
                PredicateArray, "reference", self._on_reference, STREAM_QOS, stream=REFERENCE)
        if matching.EVALUATED_ENTITIES in parts:
            self.part_subscriptions[ENTITIES] = self.subscription(
                EntityArray, "entities", self._on_entities, STREAM_QOS, stream=ENTITIES)
        if matching.REFERENCE_ENTITIES in parts:
            self.part_subscriptions[REFERENCE_ENTITIES] = self.subscription(
                EntityArray, "reference_entities", self._on_reference_entities, STREAM_QOS, stream=REFERENCE_ENTITIES)
        if model is not None and p["image_quality"]:
            camera_qos = image_qos(p["image_qos"], SUBSCRIBER_IMAGE_DEPTH, subscriber=True, node=self, topic="image")
            self.part_subscriptions[IMAGE] = self.subscription(Image, "image", self._on_image, camera_qos,
                                                               stream=IMAGE)
        self.create_timer(STALE_CHECK_PERIOD_S, self._check_stale)
        self.on_destroy(self._count_waiting_frames)

    def _check_parameters(self, values: Mapping[str, object]) -> None:
        """A change that rebuilds the monitor must give one (UserError: refused, with why)."""
        if any(name in values for name in MONITOR_REBUILT):
            self._loaded = load_monitor({**self.params.values, **values})

    def _on_parameters(self, changed: Mapping[str, object]) -> None:
        if any(name in changed for name in MONITOR_REBUILT):
            self._count_waiting_frames()
            self.monitor, self._loaded = self._loaded, None
            self._counted = self.monitor.snapshot_counters()
            self.get_logger().info(f"monitor built anew ({', '.join(sorted(set(changed) & set(MONITOR_REBUILT)))}): "
                                   f"the windows start with the next frame")
        settings = {name: value for name, value in changed.items() if name in MONITOR_RUNTIME}
        if settings:
            self.monitor.config = dataclasses.replace(self.monitor.config, **settings)
            self.monitor.order.restart_after = self.monitor.config.restart_after

    # -- input: the parts of a frame ----------------------------------------------------------------
    def _on_predicates(self, msg: PredicateArray) -> None:
        start = time.perf_counter()
        estimates = predicates_from_msg(msg, self.params["max_predicates_per_message"])  # counted malformed
        info = checked_degradation_from_msg(msg.degradation)
        self._fed(self.monitor.add_evaluated(msg.frame_index, estimates, info.kind, info.severity,
                                             tag=(msg.header, msg.degradation)), start)

    def _on_reference(self, msg: PredicateArray) -> None:
        start = time.perf_counter()
        references = predicates_from_msg(msg, self.params["max_predicates_per_message"])  # counted malformed
        checked_degradation_from_msg(msg.degradation)
        self._fed(self.monitor.add_reference(msg.frame_index, references), start)

    def _on_entities(self, msg: EntityArray) -> None:
        start = time.perf_counter()
        if self.monitor.trust_model is None:
            self._fed(self.monitor.add_evaluated_entities(msg.frame_index, self._entities(msg)), start)
            return
        entities = self._entities(msg, masks=True)               # the mask areas are evidence
        quality = self._image_measures.pop(stamp_to_ns(msg.header), None)
        self._fed(self.monitor.add_evaluated_entities(msg.frame_index, entities, (msg.image_width, msg.image_height),
                                                      quality), start)

    def _on_image(self, msg: Image) -> None:
        """Measure the image now and keep the measures until its entities come (a bounded buffer)."""
        measures = self._quality.measure(image_to_numpy(msg))   # ValueError: counted malformed
        self._image_measures[stamp_to_ns(msg.header)] = measures
        self.count(IMAGE, PROCESSED)
        while len(self._image_measures) > self.params["match_buffer"]:
            self._image_measures.popitem(last=False)

    def _on_reference_entities(self, msg: EntityArray) -> None:
        start = time.perf_counter()
        self._fed(self.monitor.add_reference_entities(msg.frame_index, self._entities(msg)), start)

    def _entities(self, msg: EntityArray, masks: bool = False) -> list:
        """The entities of an EntityArray, without their masks unless asked: association and identity
        switches read boxes, classes and visibility only (ValueError, counted malformed, for a bad message)."""
        entities = entities_from_msg(msg, decode_masks=masks, max_entities=self.params["max_entities_per_message"])
        checked_degradation_from_msg(msg.degradation)
        return entities

    def _fed(self, processed: bool, start: float) -> None:
        """After a part went to the monitor: account for it, and report when it completed a frame."""
        self._account()
        if processed:
            self._after_frame(start)

    def _account(self) -> None:
        """Count what the monitor did with the frames since the last call."""
        now = self.monitor.snapshot_counters()
        for key, targets in self._outcomes.items():
            added = now.get(key, 0) - self._counted.get(key, 0)
            if added:
                for stream, outcome in targets:
                    self.count(stream, outcome, added)
        if now.get(RESTARTS, 0) > self._counted.get(RESTARTS, 0):
            self.log_throttled(f"{PREDICATES}.{RESTARTS}", f"{PREDICATES}: {self.monitor.order.reason}: the rolling "
                               f"window starts anew")
        self._counted = now

    def _after_frame(self, start: float) -> None:
        self._processed += 1
        self._last_processed = time.monotonic()
        self.health.clear("stale")
        if self._processed % self.params["publish_every_n_frames"] or not wanted(self.report_publisher):
            return
        report = self.monitor.report(streams=self.params["report_streams"])
        header, degradation = report.tag
        self.report_publisher.publish(reliability_report_to_msg(report, header, degradation))
        self.latency.add(time.perf_counter() - start)

    def _count_waiting_frames(self) -> None:
        self.monitor.reset()        # frames still waiting for their twin are unmatched
        self._account()

    # -- staleness and diagnostics ---------------------------------------------------------------
    def _stale_for(self) -> float | None:
        """Seconds since the last processed frame when that is over stale_after_s (None: fresh);
        infinity before the first frame."""
        if self._last_processed is None:
            return float("inf")
        age = time.monotonic() - self._last_processed
        return age if age > self.params["stale_after_s"] else None

    def _check_stale(self) -> None:
        age = self._stale_for()
        if age is None or self._last_processed is None:
            return
        text = f"no frame processed for {age:.1f} s"
        silent = [self.resolve_topic_name(stream) for stream, subscription in self.part_subscriptions.items()
                  if subscription.get_publisher_count() == 0]
        if silent:
            text += f" (nobody publishes {', '.join(silent)}: remap them, e.g. reference:=clean/predicates)"
        self.health.raise_condition("stale", WARN, text)

    def diagnostic_values(self) -> dict[str, object]:
        counters = self.monitor.snapshot_counters()
        values: dict[str, object] = {"reference_mode": self.params["reference_mode"], "window": self.params["window"],
                                     "reports_after_frames": self._processed}
        for key in (*(f"pending_{part}" for part in self.monitor.config.parts), "reference_out_of_scope", "restarts",
                    "unassociated_estimates", "replaced_track_estimates"):
            if key in counters:
                values[key] = counters[key]
        return values

    def extra_diagnostic_statuses(self) -> list:
        """One status per predicate group: level = its trust (STALE while frames stopped)."""
        report = self.monitor.report(streams=False)
        age = self._stale_for()
        prefix = self.get_fully_qualified_name()
        statuses = []
        for group in GROUPS:
            record = report.group(group)
            name = f"{prefix}/{group}"
            if age is not None:
                waiting = "waiting for the first frame" if age == float("inf") else f"no frame for {age:.1f} s"
                statuses.append(diagnostics.status(name, TRUST_CODES[STALE], waiting))
                continue
            if record is None:
                statuses.append(diagnostics.status(name, TRUST_CODES[STALE],
                                                   f"no {group} predicates in the last {report.window} frames"))
                continue
            values: dict[str, object] = {metric: getattr(record, metric) for metric in (
                "prs", "pds", "tpc", "tpc_s", "cws", "mean_confidence", "rule_violation_rate", "samples")}
            for member in report.predicates:
                if member.pooled and member.group == group:
                    values[f"trust.{member.predicate}"] = member.trust
            values["frame_index"] = report.frame_index
            if not math.isnan(record.expected_agreement):
                values["expected_agreement"] = record.expected_agreement
            statuses.append(diagnostics.status(name, TRUST_CODES[record.trust],
                                               record.reason or record.trust, values))
        return statuses


def main(args: list[str] | None = None) -> int:
    return run_node(ReliabilityNode, args)


if __name__ == "__main__":
    sys.exit(main())
