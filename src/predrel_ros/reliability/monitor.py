"""The live reliability monitor: predicate streams in, a rolling reliability report with trust out.

It is the reliability node's logic without ROS. The evaluated stream (e.g. the degraded pipeline's
predicates) is fed frame by frame; in the two reference modes a reference stream is fed as well
and joined with it by frame_index (`matching.FrameIndexMatcher`: bounded buffer, unmatched and late
frames counted):

- `ground_truth`: the reference is the ground-truth predicates (controlled set, annotated bags);
- `clean_twin`: the reference is the clean twin pipeline's predicates (same frames, no degradation);
- `self`: no reference (a live robot): reference-free evidence only (docs/design.md, "Runtime trust").

Entities. Each side's predicates name entities by that side's track ids, and two pipelines that
track independently (the clean twin, the ground truth) number the same object differently as soon
as one of them loses a track once. With `associate` (reference modes) the entities each side's
predicates were computed from are fed too (`add_evaluated_entities`, `add_reference_entities`), a
frame is complete when all four parts are there, and its evaluated entities are associated with
the reference entities (`association.associate`: same class, box IoU, Hungarian); the evaluated
predicates are renamed into the reference's ids before they are paired with the reference
predicates, so a stream is "contact of this hand and this cube" however either tracker numbered
them. Evaluated predicates about an entity without a partner (a false detection) have no
reference and are left out (`unassociated_estimates`); reference predicates about a reference
entity the evaluated pipeline missed are paired with UNK: a disagreement. In self mode with
`skip_replaced_tracks` the evaluated entities are fed as well and the predicates of a track that
was replaced by a new track of the same class (an identity switch, `identity_switches`) are left
out from then on (`replaced_track_estimates`): the object is tracked again under its new id.

Agreement with a reference is counted as `predrel eval` counts it (`tools.evaluation.scores`), so
the rolling numbers equal the offline ones on the same frames:
- a frame the evaluated pipeline published nothing for (dropped by the frame-drop degradation, or
  lost) while its reference came is scored, every reference stream with an UNK estimate (a
  disagreement), once a newer frame completed or the reference buffer is full (the matcher's
  `incomplete` frames);
- in `ground_truth` mode a reference stream counts once it is in scope: the streams the predicate
  extractor evaluates on the reference entities (a scope extractor run on them, as the evaluation
  runs the extractor on the true entities; ground truth also covers pairs the extractor never
  evaluates), from the first frame it evaluated them on; without reference entities
  (`associate` off) the scope is every stream the evaluated pipeline has produced since the start.
  A stream the pipeline later lost stays in scope: its missed frames disagree.

Each processed frame feeds `RollingReliability` (PRS, agreement, TPC, CWS with a reference; TPC-S,
confidence, UNK rate and calibrated expected agreement always), `LogicMonitor` (violation rates of
the independent logic rules, on the evaluated predicates as the pipeline produced them) and, with a
reference, `RollingSensitivity` (PDS over the severities seen in the window). `report()` turns them
into records per predicate stream, per predicate name and per group, each with a trust level from
`TrustAssessor` (and the clean profile, when given):

- a predicate name: its pooled metrics and its violation rate, judged by `TrustAssessor`;
- a stream (one pair): its own metrics, judged the same way against its predicate's baseline (no
  violation rate: the logic monitor counts per predicate, not per pair);
- a group: the worst level of its predicate names, with their reasons; in self mode with entities
  also a group with no predicate in the window (perception found no hand: no contact), once the
  evidence covers `trust.min_frames` frames: its only metric UNK rate 1, judged by the trust model
  on that and the evidence beyond the predicates, STALE without one. A trust model sets the level
  of each group it models; once the evidence covers `trust.min_frames` frames it does so also when
  every predicate of the group is younger than that (each STALE on its own: a hand just found), so
  a group judged on the evidence alone does not turn STALE when its first predicate appears.
The expected agreement of every record is scaled by the share of the window's frames the
evaluated stream delivered (`stream_timing`), since a frame it never published disagrees.
A record with fewer than `trust.min_frames` frames is STALE (not enough samples to judge); for
pooled records that is the longest stream of the pool. DIS needs the downstream task run with and
without the predicate, which a live stream does not have: it is NaN.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any, Hashable, Iterable, Mapping, Sequence

import numpy as np

from predrel_ros.core.entities import Entity
from predrel_ros.core.stream_order import OUT_OF_ORDER, RESTART, StreamOrder
from predrel_ros.degradations.table import MAX_SEVERITY
from predrel_ros.predicates import vocabulary
from predrel_ros.predicates.config import PredicateConfig
from predrel_ros.predicates.estimate import PredicateEstimate
from predrel_ros.predicates.extractor import PredicateExtractor
from predrel_ros.predicates.logic_rules import INDEPENDENT, LogicMonitor, rules_of
from predrel_ros.reliability import sensitivity
from predrel_ros.reliability.association import MIN_IOU, associate, renamed
from predrel_ros.reliability.detection_statistics import DetectionStatistics
from predrel_ros.reliability.identity_switches import IdentitySwitches
from predrel_ros.reliability.matching import (
    EVALUATED,
    EVALUATED_ENTITIES,
    REFERENCE,
    REFERENCE_ENTITIES,
    FrameIndexMatcher,
)
from predrel_ros.reliability.rolling import METRIC_NAMES, RollingReliability, pair_with_references
from predrel_ros.reliability.rolling import REFERENCE as ROLLING_REFERENCE
from predrel_ros.reliability.rolling import SELF as ROLLING_SELF
from predrel_ros.reliability.scene_memory import SceneMemory
from predrel_ros.reliability.sensitivity import RollingSensitivity
from predrel_ros.reliability.stream_timing import StreamTiming
from predrel_ros.reliability.trust import (
    CLEAN_TWIN,
    GROUND_TRUTH,
    LEVELS,
    OK,
    STALE,
    CleanProfile,
    TrustAssessment,
    TrustAssessor,
    TrustConfig,
)
from predrel_ros.reliability.trust_estimator import TrustModel
from predrel_ros.reliability.trust_evidence import FEATURES as EVIDENCE_FEATURES
from predrel_ros.reliability.trust_evidence import TrustEvidence

SELF = "self"
REFERENCE_MODES = (GROUND_TRUTH, CLEAN_TWIN, SELF)

#: subject and object of records that pool several streams (a predicate name, a group)
POOLED = -1


@dataclass
class MonitorConfig:
    """Settings of the reliability monitor.

    reference_mode: ground_truth | clean_twin | self (see the module docstring).
    window: frames of the rolling window (metrics, violation rates, PDS).
    match_buffer: frames per side waiting for their partner (reference modes).
    tpc_tolerance: frames within which a transition matches a reference transition (TPC).
    pds_mode: endpoint | mean_step (metrics.pds).
    logic_memory: frames back that precedence rules look (the extractor's event_memory).
    logic_window: frames of co-occurrence rules (the extractor's window).
    restart_after: consecutive out-of-order evaluated frames that mean the stream restarted
        (state is reset); 0 = never (the stream-order policy, `predrel_ros.core.stream_order`: a
        frame far ahead is out of order too).
    min_rule_checks: rule checks in the window below which a violation rate is reported but not
        judged (one violation in two checks says little).
    associate: reference modes: associate the evaluated with the reference entities every frame and
        compare predicates about associated entities (needs both sides' entities); off: streams are
        matched by the ids each side gives (only right when both share the ids, e.g. both were
        computed from the same ground-truth entities).
    match_iou: box IoU an evaluated entity needs with its reference entity to be associated.
    skip_replaced_tracks: self mode: leave out the predicates of tracks replaced by a new track of
        the same class (needs the evaluated entities).
    track_memory: frames a track is remembered after it was last listed (the extractor's).
    min_visibility: visibility below which an entity counts as not observed (the extractor's).
    """

    reference_mode: str = SELF
    window: int = 30
    match_buffer: int = 64
    tpc_tolerance: int = 2
    pds_mode: str = "endpoint"
    logic_memory: int = 15
    logic_window: int = 5
    restart_after: int = 5
    min_rule_checks: int = 5
    associate: bool = True
    match_iou: float = MIN_IOU
    skip_replaced_tracks: bool = True
    track_memory: int = 15
    min_visibility: float = 0.05

    def __post_init__(self) -> None:
        if self.reference_mode not in REFERENCE_MODES:
            raise ValueError(f"reference_mode must be one of {', '.join(REFERENCE_MODES)}, got {self.reference_mode!r}")
        for name in ("window", "match_buffer", "logic_memory", "logic_window", "track_memory"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1 frame, got {getattr(self, name)}")
        for name in ("tpc_tolerance", "restart_after", "min_rule_checks"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0 frames, got {getattr(self, name)}")
        if self.pds_mode not in ("endpoint", "mean_step"):
            raise ValueError(f"pds_mode must be endpoint or mean_step, got {self.pds_mode!r}")
        for name in ("match_iou", "min_visibility"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must lie in [0, 1], got {getattr(self, name)}")

    @classmethod
    def for_predicates(cls, predicates: PredicateConfig, **settings: Any) -> "MonitorConfig":
        """The settings that follow the pipeline's predicate config (logic_memory, logic_window,
        track_memory, min_visibility: the extractor's), with the others given."""
        return cls(logic_memory=predicates.event_memory, logic_window=predicates.window,
                   track_memory=predicates.track_memory, min_visibility=predicates.confidence.min_visibility,
                   **settings)

    @property
    def has_reference(self) -> bool:
        return self.reference_mode != SELF

    @property
    def parts(self) -> tuple[str, ...]:
        """The parts of a frame the monitor needs before it processes the frame."""
        if self.has_reference:
            if self.associate:
                return EVALUATED, EVALUATED_ENTITIES, REFERENCE, REFERENCE_ENTITIES
            return EVALUATED, REFERENCE
        return (EVALUATED, EVALUATED_ENTITIES) if self.skip_replaced_tracks else (EVALUATED,)


@dataclass
class ReliabilityRecord:
    """Rolling reliability of one predicate stream, one predicate name or one group
    (the fields of PredicateReliability.msg; NaN where a metric is undefined). Not frozen: a report
    holds one per stream, over a hundred a frame, and a frozen dataclass costs ten times as much to
    build."""

    predicate: str          # predicate name, or the group name for group records
    group: str
    subject: int            # POOLED (-1) for name and group records
    object: int
    prs: float
    pds: float
    tpc: float
    tpc_s: float
    cws: float
    dis: float
    mean_confidence: float
    rule_violation_rate: float
    samples: int            # stream-frames that entered the numbers
    trust: str              # OK | WARN | ERROR | STALE
    reason: str             # why trust is not OK ("; "-joined), empty when OK
    #: share of frames with a known reference on which the value equals it (PRS without the
    #: confidence weight; what trust judges with a reference). Not in PredicateReliability.msg:
    #: NaN in a record read from a message.
    agreement: float = math.nan
    #: the agreement to expect without a reference: the calibrated confidence (scaled by the
    #: delivered share), or with a trust model the model's for a name or group record of a group it
    #: models. Not in PredicateReliability.msg either.
    expected_agreement: float = math.nan

    @property
    def pooled(self) -> bool:
        return self.subject == POOLED and self.object == POOLED

    def to_dict(self) -> dict[str, Any]:
        return {f.name: _plain(getattr(self, f.name)) for f in fields(self)}


@dataclass
class ReliabilityReport:
    """The monitor's report after the newest processed frame."""

    frame_index: int | None            # newest frame that entered the window (None: none yet)
    window: int
    reference_mode: str
    degradation_kind: str              # degradation of the newest frame
    degradation_severity: int
    predicates: list[ReliabilityRecord]   # per predicate name (pooled) followed by its streams
    groups: list[ReliabilityRecord]
    counters: dict[str, int] = field(default_factory=dict)
    tag: Any = None                    # what the caller passed with the newest frame (header, ...)

    def trust(self) -> dict[str, TrustAssessment]:
        """Predicate name or group -> its trust, for `downstream.ActionRecognizer.update(trust=...)`
        (names first: "contact" is both a predicate and a group, with the same streams)."""
        result = {record.predicate: _assessment(record) for record in self.groups}
        result.update({record.predicate: _assessment(record) for record in self.predicates if record.pooled})
        return result

    def record(self, predicate: str, subject: int = POOLED, obj: int = POOLED) -> ReliabilityRecord | None:
        """The record of a predicate name (pooled) or of one stream."""
        return next((r for r in self.predicates
                     if r.predicate == predicate and r.subject == subject and r.object == obj), None)

    def group(self, name: str) -> ReliabilityRecord | None:
        return next((r for r in self.groups if r.predicate == name), None)

    def to_dict(self) -> dict[str, Any]:
        return {"frame_index": self.frame_index, "window": self.window, "reference_mode": self.reference_mode,
                "degradation": {"kind": self.degradation_kind, "severity": self.degradation_severity},
                "predicates": [r.to_dict() for r in self.predicates], "groups": [r.to_dict() for r in self.groups],
                "counters": dict(self.counters)}


def _assessment(record: ReliabilityRecord) -> TrustAssessment:
    return TrustAssessment(record.predicate, record.trust, [record.reason] if record.reason else [], {})


def _plain(value: Any) -> Any:
    return None if isinstance(value, float) and math.isnan(value) else value


def worst_level(levels: Iterable[str]) -> str:
    """OK < WARN < ERROR; STALE only when every level is STALE (or there is none)."""
    judged = [level for level in levels if level != STALE]
    return max(judged, key=LEVELS.index) if judged else STALE


class ReliabilityMonitor:
    """Rolling reliability and trust of a predicate stream (see the module docstring).

    trust: bounds of the trust signals; profile: the clean profile (confidence and UNK baselines,
    calibration for the expected agreement), optional; predicates: the extractor's settings, for
    the scope extractor of `ground_truth` mode (the pipeline's predicate config).
    """

    def __init__(self, config: MonitorConfig | None = None, trust: TrustConfig | None = None,
                 profile: CleanProfile | None = None, predicates: PredicateConfig | None = None,
                 trust_model: TrustModel | None = None) -> None:
        self.config = config if config is not None else MonitorConfig()
        self.trust_model = trust_model
        self.trust_config = trust if trust is not None else TrustConfig()
        self.profile = profile
        self.assessor = TrustAssessor(self.trust_config, profile,
                                      self.config.reference_mode if self.config.has_reference else None)
        config = self.config
        self._rolling = RollingReliability(
            config.window, ROLLING_REFERENCE if config.has_reference else ROLLING_SELF, tol=config.tpc_tolerance,
            calibration=profile.calibration_maps() if profile is not None else None)
        self._logic = LogicMonitor(rules_of(INDEPENDENT), memory=config.logic_memory, window=config.logic_window,
                                   rate_window=config.window)
        self._rule_predicates = {rule.name: rule.predicate for rule in self._logic.rules}
        self._logic_counts: dict[str, tuple[int, int]] | None = None     # the logic monitor's, this frame
        #: the last report's stream keys, their rows in the report's order and the keys in it (`_report_order`)
        self._stream_order: tuple[list, np.ndarray, list] | None = None
        self._sensitivity = RollingSensitivity(config.window, config.pds_mode)
        self._timing = StreamTiming(config.window)
        parts = config.parts
        #: reference modes: a frame may lack the evaluated side (dropped or lost), never the reference
        optional = tuple(part for part in parts if part in (EVALUATED, EVALUATED_ENTITIES)) \
            if config.has_reference else ()
        self._matcher = FrameIndexMatcher(parts, config.match_buffer, optional) if len(parts) > 1 else None
        #: ground_truth mode: the reference streams that count (see the module docstring)
        self._scope: set[tuple[str, int, int]] = set()
        self._scope_extractor = PredicateExtractor(predicates) \
            if config.reference_mode == GROUND_TRUTH and REFERENCE_ENTITIES in parts else None
        self._switches = IdentitySwitches(config.track_memory, config.min_visibility) \
            if EVALUATED_ENTITIES in parts and not config.has_reference else None
        #: self mode with entities: the evidence beyond the predicates (`trust_evidence`)
        self._evidence = TrustEvidence(config.window, SceneMemory(min_visibility=config.min_visibility),
                                       DetectionStatistics(min_visibility=config.min_visibility)) \
            if self._switches is not None else None
        self._frame_images: dict[int, tuple[tuple[int, int] | None, Mapping[str, float] | None]] = {}
        self._image_size: tuple[int, int] | None = None      # the camera's: kept across restarts
        if trust_model is not None:
            if self._evidence is None:
                raise ValueError("a trust model needs self mode with the entities (skip_replaced_tracks)")
            if trust_model.window != config.window:
                raise ValueError(f"the trust model was fitted over {trust_model.window}-frame windows and the "
                                 f"monitor's window is {config.window}")
        self.order = StreamOrder(config.restart_after)
        self.counters = {"processed": 0, "out_of_order": 0, "restarts": 0}
        if REFERENCE_ENTITIES in parts:
            self.counters["unassociated_estimates"] = 0
        if self._switches is not None:
            self.counters["replaced_track_estimates"] = 0
        if self.config.reference_mode == GROUND_TRUTH:
            self.counters["reference_out_of_scope"] = 0
        self._newest: tuple[int, str, int, Any] | None = None   # frame_index, kind, severity, tag

    # ------------------------------------------------------------------------------- input

    def add_evaluated(self, frame_index: int, estimates: Sequence[PredicateEstimate], kind: str = "none",
                      severity: int = 0, tag: Any = None) -> bool:
        """One frame of the evaluated stream with its degradation; `tag` comes back with the report
        of this frame. Returns whether a frame was processed (in reference modes, when this frame
        completes a pair). Raises ValueError for a malformed frame (nothing changes then)."""
        frame_index = _check_frame_index(frame_index)
        keys = _check_frame(estimates)
        if not 0 <= severity <= MAX_SEVERITY:
            raise ValueError(f"degradation severity must lie in 0..{MAX_SEVERITY}, got {severity}")
        verdict = self.order.check(frame_index)
        if verdict == OUT_OF_ORDER:
            self.counters["out_of_order"] += 1
            return False
        if verdict == RESTART:
            self.counters["restarts"] += 1
            self.reset()
        self.order.accept(frame_index)
        return self._add(EVALUATED, frame_index, (list(estimates), keys, kind, severity, tag))

    def add_reference(self, frame_index: int, references: Sequence[PredicateEstimate]) -> bool:
        """One frame of the reference stream (reference modes only); returns whether a frame was
        processed. Raises ValueError for a malformed frame."""
        frame_index = self._check_part(REFERENCE, frame_index)
        _check_frame(references)
        return self._add(REFERENCE, frame_index, list(references))

    def add_evaluated_entities(self, frame_index: int, entities: Sequence[Entity],
                               image_size: tuple[int, int] | None = None,
                               image_quality: Mapping[str, float] | None = None) -> bool:
        """The entities the evaluated predicates of a frame were computed from (when `config.parts`
        names them); returns whether a frame was processed. Raises ValueError for a malformed
        frame. Self mode: image_size (width, height) of the image they come from (the scene
        memory's image border; the last one given holds until another comes, and without any the
        evidence is not gathered) and the image's measures (`ImageQuality.measure`), if known."""
        frame_index = self._check_part(EVALUATED_ENTITIES, frame_index)
        entities = _checked_entities(entities)
        if self._evidence is not None and (image_size is not None or image_quality is not None):
            self._frame_images[frame_index] = (image_size, image_quality)
        return self._add(EVALUATED_ENTITIES, frame_index, entities)

    def add_reference_entities(self, frame_index: int, entities: Sequence[Entity]) -> bool:
        """The entities the reference predicates of a frame were computed from (reference modes
        with `associate`); returns whether a frame was processed."""
        frame_index = self._check_part(REFERENCE_ENTITIES, frame_index)
        return self._add(REFERENCE_ENTITIES, frame_index, _checked_entities(entities))

    def _check_part(self, part: str, frame_index: int) -> int:
        config = self.config
        if part not in config.parts:
            raise ValueError(f"the monitor ({config.reference_mode} mode, associate={config.associate}, "
                             f"skip_replaced_tracks={config.skip_replaced_tracks}) takes no "
                             f"{part.replace('_', ' ')} frames; it takes "
                             f"{', '.join(each.replace('_', ' ') for each in config.parts)}")
        return _check_frame_index(frame_index)

    def _add(self, part: str, frame_index: int, item: Any) -> bool:
        if self._matcher is None:
            self._process(frame_index, {part: item})
            return True
        match = self._matcher.add(part, frame_index, item)
        for incomplete in self._matcher.take_incomplete():
            self._process_missing(*incomplete)
        if match is None:
            return False
        self._process(*match)
        return True

    def _process_missing(self, frame_index: int, parts: Mapping[str, Any]) -> None:
        """A frame whose reference came and whose evaluated predicates did not: every reference
        stream in scope disagrees (as offline). The report's newest frame stays the last complete one."""
        pairs = pair_with_references([], parts[REFERENCE])
        self._update_scope(frame_index, parts, ())
        if self.config.reference_mode == GROUND_TRUTH:
            pairs = self._in_scope(pairs)
        self._rolling.update_paired(frame_index, pairs)

    def _update_scope(self, frame_index: int, parts: Mapping[str, Any],
                      estimates: Sequence[PredicateEstimate]) -> None:
        if self.config.reference_mode != GROUND_TRUTH:
            return
        if self._scope_extractor is not None:
            estimates = self._scope_extractor.update(frame_index, parts[REFERENCE_ENTITIES])
        self._scope.update(estimate.canonical_key for estimate in estimates)

    def _process(self, frame_index: int, parts: Mapping[str, Any]) -> None:
        produced, produced_keys, kind, severity, tag = parts[EVALUATED]
        estimates, keys = produced, produced_keys
        self._logic_counts = None
        if REFERENCE_ENTITIES in parts:
            mapping = associate(parts[EVALUATED_ENTITIES], parts[REFERENCE_ENTITIES], self.config.match_iou)
            estimates, left_out = renamed(produced, mapping)
            self.counters["unassociated_estimates"] += left_out
        elif self._switches is not None:
            self._update_evidence(frame_index, parts[EVALUATED_ENTITIES])
            replaced = self._switches.update(frame_index, parts[EVALUATED_ENTITIES])
            if replaced:
                kept = [(estimate, key) for estimate, key in zip(produced, keys)
                        if estimate.subject not in replaced and estimate.object not in replaced]
                estimates, keys = [estimate for estimate, _ in kept], [key for _, key in kept]
                self.counters["replaced_track_estimates"] += len(produced) - len(estimates)
        if REFERENCE not in parts:
            self._rolling.update_keyed(frame_index, keys, estimates)
        else:
            pairs = pair_with_references(estimates, parts[REFERENCE])
            self._update_scope(frame_index, parts, estimates)
            if self.config.reference_mode == GROUND_TRUTH:
                pairs = self._in_scope(pairs)
            self._rolling.update_paired(frame_index, pairs)
            self._sensitivity.update(kind, severity, pairs)
        self._logic.update(frame_index, produced, produced_keys)
        self._timing.update(frame_index)
        self.counters["processed"] += 1
        self._newest = (frame_index, kind, severity, tag)

    def _update_evidence(self, frame_index: int, entities: Sequence[Entity]) -> None:
        """Feed the frame's entities (and image, if it came) to the evidence, once an image size is known."""
        image_size, quality = self._frame_images.pop(frame_index, (None, None))
        for stale in [index for index in self._frame_images if index < frame_index]:    # frames never completed
            del self._frame_images[stale]
        if image_size is not None:
            self._image_size = image_size
        if self._image_size is not None:
            self._evidence.update(frame_index, entities, image_size=self._image_size, quality=quality)

    def _in_scope(self, pairs: list) -> list:
        """The pairs of streams in scope (ground_truth mode, see the module docstring); the others
        are counted in `reference_out_of_scope`."""
        scope = self._scope
        kept = [pair for pair in pairs if pair[0] in scope]
        self.counters["reference_out_of_scope"] += len(pairs) - len(kept)
        return kept

    def reset(self) -> None:
        """Start a new sequence: windows, pending frames and order are forgotten; counters stay."""
        self._rolling.reset()
        self._logic.reset()
        self._logic_counts = None
        self._stream_order = None
        self._sensitivity.reset()
        self._timing.reset()
        if self._matcher is not None:
            self._matcher.reset()
        if self._switches is not None:
            self._switches.reset()
        if self._evidence is not None:
            self._evidence.reset()
        self._frame_images.clear()
        self._scope.clear()
        if self._scope_extractor is not None:
            self._scope_extractor.reset()
        self.order.reset()
        self._newest = None

    # ------------------------------------------------------------------------------ output

    def snapshot_counters(self) -> dict[str, int]:
        """Frame accounting: processed, out_of_order, restarts, the estimates left out
        (unassociated, of replaced tracks) and, when frames are joined from several parts, the
        matcher's matched / unmatched / late / duplicate / pending counts per part."""
        counters = dict(self.counters)
        if self._matcher is not None:
            counters.update(self._matcher.snapshot())
        return counters

    def report(self, streams: bool = True) -> ReliabilityReport:
        """The report after the newest processed frame; streams=False leaves the per-stream records
        out (names and groups only)."""
        config = self.config
        names_metrics = self._with_gaps(self._rolling.by_predicate())
        groups_metrics = self._with_evidence_only_groups(self._with_gaps(self._rolling.by_group()))
        name_checks = self._rule_counts(lambda name: name)
        group_checks = self._rule_counts(vocabulary.group_of)
        violation_rates = {name: _rate(counts) for name, counts in name_checks.items()}
        judged_rates = self._judged_rates(name_checks)
        if config.has_reference:
            pds_streams = self._sensitivity.compute(sensitivity.by_stream) if streams else {}
            pds_names = self._sensitivity.compute(sensitivity.by_predicate)
            pds_groups = self._sensitivity.compute(sensitivity.by_group)
        else:
            pds_streams = pds_names = pds_groups = {}
        longest = _longest_streams(self._rolling.frames_by_stream())
        assessments = self.assessor.assess(names_metrics, judged_rates)
        modelled = self.trust_model.assess(self._with_group_violations(groups_metrics), self.evidence_features()) \
            if self.trust_model is not None else {}

        name_records: dict[str, ReliabilityRecord] = {}
        for name, values in names_metrics.items():
            group = vocabulary.group_of(name)
            level, reason = self._level(assessments[name], longest.get(name, 0))
            model = modelled.get(group)
            if model is not None and level != STALE:
                level, reason = model.level, model.reason
            name_records[name] = _record(name, group, POOLED, POOLED, values, pds_names.get(name, math.nan),
                                         violation_rates.get(name, math.nan), level, reason,
                                         model.expected if model is not None else None)
        stream_records = self._stream_records(pds_streams) if streams else {}
        predicates: list[ReliabilityRecord] = []
        for name in sorted(name_records, key=_NAME_ORDER.__getitem__):
            predicates.append(name_records[name])
            predicates.extend(stream_records.get(name, ()))

        groups: list[ReliabilityRecord] = []
        for group in vocabulary.GROUPS:
            values = groups_metrics.get(group)
            if values is None:
                continue
            members = [record for record in name_records.values() if record.group == group]
            level = worst_level(record.trust for record in members)
            model = modelled.get(group)
            if model is not None and (level != STALE or self.evidence_covers_min_frames()):
                level, reason = model.level, model.reason     # members too young or none: judged on the evidence
            elif not members:
                level, reason = STALE, "no predicate in the window"
            else:
                reason = "; ".join(f"{record.predicate}: {record.reason}" for record in members
                                   if record.trust != OK and record.reason)
            groups.append(_record(group, group, POOLED, POOLED, values, pds_groups.get(group, math.nan),
                                  _rate(group_checks.get(group, (0, 0))), level, reason,
                                  model.expected if model is not None else None))

        frame_index, kind, severity, tag = self._newest if self._newest is not None else (None, "none", 0, None)
        return ReliabilityReport(frame_index, config.window, config.reference_mode, kind, severity, predicates,
                                 groups, self.snapshot_counters(), tag)

    def _stream_records(self, pds: Mapping[tuple[str, int, int], float]) -> dict[str, list[ReliabilityRecord]]:
        """predicate name -> the records of its streams in the window, in the report's order, each
        judged against its predicate's baseline (STALE below `trust.min_frames`)."""
        keys, columns = self._rolling.stream_columns()
        share = self._timing.delivered_share()
        if share < 1.0:                     # as `_with_gaps`
            columns["expected_agreement"] = columns["expected_agreement"] * share
        order, keys = self._report_order(keys)
        columns = {metric: column[order] for metric, column in columns.items()}
        names = [key[0] for key in keys]
        verdicts = self.assessor.assess_streams(names, columns)
        minimum = self.trust_config.min_frames
        nan = math.nan
        sensitivities = [pds.get(key, nan) for key in keys] if pds else [nan] * len(keys)
        streams = [ReliabilityRecord(
            name, _GROUP_OF[name], subject, obj, prs, sensitivity, tpc, tpc_s, cws, nan, confidence, nan, frames,
            STALE if frames < minimum else level,
            f"not enough frames ({frames} < {minimum})" if frames < minimum else "; ".join(reasons),
            agreement, expected)
            for (name, subject, obj), (level, reasons), sensitivity, prs, tpc, tpc_s, cws, confidence, frames,
            agreement, expected in zip(keys, verdicts, sensitivities,
                                       *(_listed(columns[metric]) for metric in _STREAM_FIELDS))]
        # the rows are in the report's order, so each name's streams are one run of them
        starts = [row for row in range(len(names)) if row == 0 or names[row] != names[row - 1]]
        return {names[start]: streams[start:end] for start, end in zip(starts, starts[1:] + [len(names)])}

    def _report_order(self, keys: list[tuple[str, int, int]]) -> tuple[np.ndarray, list[tuple[str, int, int]]]:
        """(rows in the report's order, the keys in that order) of the window's stream keys; kept
        from the last report while the window lists the same streams in the same order (most frames)."""
        if self._stream_order is None or self._stream_order[0] != keys:
            places = [(_NAME_ORDER[name], subject, obj) for name, subject, obj in keys]
            order = np.array(sorted(range(len(keys)), key=places.__getitem__), dtype=np.int64)
            self._stream_order = (keys, order, [keys[row] for row in order.tolist()])
        return self._stream_order[1], self._stream_order[2]

    def window_signals(self) -> dict[str, dict[str, float]]:
        """Per predicate name what trust judges over the current window: its pooled metrics
        (`rolling.METRIC_NAMES`; TPC, which trust does not judge, is left NaN: it is the costly one),
        `violation_rate` (NaN with fewer than `min_rule_checks` checks) and `longest_stream` (frames
        of its longest stream: below `trust.min_frames` it is STALE). The clean profile is made of
        these (`clean_profile.build_clean_profile`), one window per frame."""
        judged = self._judged_rates(self._rule_counts(lambda name: name))
        longest = _longest_streams(self._rolling.frames_by_stream())
        signals = self._with_gaps(self._rolling.by_predicate(with_tpc=False))
        for name, values in signals.items():
            values["violation_rate"] = judged.get(name, math.nan)
            values["longest_stream"] = float(longest.get(name, 0))
        return signals

    def group_signals(self) -> dict[str, dict[str, float]]:
        """Per group its pooled metrics over the current window (`rolling.METRIC_NAMES`, TPC left
        NaN), e.g. the expected agreement that `predrel eval` compares with the true agreement, and
        `violation_rate` (NaN with fewer than `min_rule_checks` checks): what the trust estimator reads."""
        return self._with_evidence_only_groups(
            self._with_group_violations(self._with_gaps(self._rolling.by_group(with_tpc=False))))

    def _with_evidence_only_groups(self, metrics: dict) -> dict:
        """Group metrics with, in self mode with entities, every group that has no predicate in the
        window added once the evidence covers `trust.min_frames` frames, as a group whose every
        estimate is unknown (UNK rate 1, the other metrics NaN): a trust model judges it on that and
        the evidence (a scene where perception finds no hand still gets a contact trust, issue 14);
        without one it is STALE."""
        if not self.evidence_covers_min_frames():
            return metrics
        for group in vocabulary.GROUPS:
            if group not in metrics:
                metrics[group] = {**dict.fromkeys(METRIC_NAMES, math.nan), "unk_rate": 1.0,
                                  "frames": float(self._evidence.frames()), "violation_rate": math.nan}
        return metrics

    def evidence_covers_min_frames(self) -> bool:
        """Whether the window's evidence beyond the predicates (self mode with entities) covers
        `trust.min_frames` frames: then a trust model judges every group it models, also one whose
        predicates are all younger than that (a hand just found) or absent."""
        return self._evidence is not None and self._evidence.frames() >= self.trust_config.min_frames

    def _with_group_violations(self, metrics: dict) -> dict:
        """Group metrics with each group's judged violation rate added (`violation_rate`)."""
        judged = self._judged_rates(self._rule_counts(vocabulary.group_of))
        for group, values in metrics.items():
            values["violation_rate"] = judged.get(group, math.nan)
        return metrics

    def evidence_features(self) -> dict[str, float]:
        """The window's evidence beyond the predicates (`TrustEvidence.features`; self mode with
        entities and a known image size, else all NaN)."""
        if self._evidence is None:
            return dict.fromkeys(EVIDENCE_FEATURES, math.nan)
        return self._evidence.features()

    def _with_gaps(self, metrics: dict) -> dict:
        """The expected agreements times the share of the window's frames the evaluated stream
        delivered (`stream_timing`: a frame it never published disagrees on every stream)."""
        share = self._timing.delivered_share()
        if share < 1.0:
            for values in metrics.values():
                values["expected_agreement"] *= share
        return metrics

    def _judged_rates(self, checks: Mapping[str, tuple[int, int]]) -> dict[str, float]:
        """Violation rates of the pools with at least `min_rule_checks` checks in the window."""
        return {name: _rate(counts) for name, counts in checks.items() if counts[0] >= self.config.min_rule_checks}

    def _level(self, assessment: TrustAssessment, frames: int) -> tuple[str, str]:
        minimum = self.trust_config.min_frames
        if frames < minimum:
            return STALE, f"not enough frames ({frames} < {minimum})"
        return assessment.level, "; ".join(assessment.reasons)

    def _rule_counts(self, pool_of) -> dict[str, tuple[int, int]]:
        """pool -> (checks, violations) over the window of the rules whose premise is a predicate
        of the pool (`pool_of(predicate name)`)."""
        if self._logic_counts is None:          # once per frame
            self._logic_counts = self._logic.rule_counts()
        totals: dict[str, tuple[int, int]] = {}
        for rule_name, (checks, broken) in self._logic_counts.items():
            pool = pool_of(self._rule_predicates[rule_name])
            total_checks, total_broken = totals.get(pool, (0, 0))
            totals[pool] = (total_checks + checks, total_broken + broken)
        return totals


def _longest_streams(frames: Mapping[tuple[str, int, int], int]) -> dict[str, int]:
    """predicate name -> frames of its longest stream in the window (`RollingReliability.frames_by_stream`)."""
    longest: dict[str, int] = {}
    for (name, _, _), count in frames.items():
        if count > longest.get(name, 0):
            longest[name] = count
    return longest


def _rate(counts: tuple[int, int]) -> float:
    checks, broken = counts
    return broken / checks if checks else math.nan


def _record(predicate: str, group: str, subject: int, obj: int, values: Mapping[str, float], pds: float,
            violation_rate: float, trust: str, reason: str, expected: float | None = None) -> ReliabilityRecord:
    return ReliabilityRecord(
        predicate=predicate, group=group, subject=subject, object=obj, prs=float(values["prs"]), pds=float(pds),
        tpc=float(values["tpc"]), tpc_s=float(values["tpc_s"]), cws=float(values["cws"]), dis=math.nan,
        mean_confidence=float(values["confidence"]), rule_violation_rate=float(violation_rate),
        samples=int(values["frames"]), trust=trust, reason=reason, agreement=float(values["agreement"]),
        expected_agreement=_canonical(values["expected_agreement"] if expected is None else expected))


def _listed(column: np.ndarray) -> list:
    """The column's values, every NaN as math.nan (as `_canonical`)."""
    unknown = np.isnan(column)
    if not unknown.any():
        return column.tolist()
    if unknown.all():
        return [math.nan] * len(column)
    return [math.nan if value != value else value for value in column.tolist()]


def _canonical(value: float) -> float:
    """The value, with every NaN as math.nan (so records with NaN fields compare equal)."""
    value = float(value)
    return math.nan if math.isnan(value) else value


#: predicate name -> its place in the vocabulary (the report's order) and its group
_NAME_ORDER = {name: place for place, name in enumerate(vocabulary.PREDICATES)}
_GROUP_OF = {name: vocabulary.group_of(name) for name in vocabulary.PREDICATES}


#: the stream columns a stream record takes, in the order `_stream_records` reads them
_STREAM_FIELDS = ("prs", "tpc", "tpc_s", "cws", "confidence", "frames", "agreement", "expected_agreement")


def _check_frame_index(frame_index: int) -> int:
    if isinstance(frame_index, bool) or int(frame_index) != frame_index or frame_index < 0:
        raise ValueError(f"frame_index must be a non-negative integer, got {frame_index!r}")
    return int(frame_index)


def _checked_entities(entities: Sequence[Entity]) -> list[Entity]:
    """One frame's entities: Entity objects with distinct ids."""
    entities = list(entities)
    ids: set[int] = set()
    for entity in entities:
        if not isinstance(entity, Entity):
            raise ValueError(f"entities must be predrel_ros.core.entities.Entity, got {type(entity).__name__}")
        if entity.id in ids:
            raise ValueError(f"the frame holds entity {entity.id} twice")
        ids.add(entity.id)
    return entities


def _check_frame(estimates: Sequence[PredicateEstimate]) -> list[tuple[str, int, int]]:
    """One frame may hold each stream (name, pair in either orientation) once; returns the estimates'
    canonical keys."""
    keys = [estimate.canonical_key for estimate in estimates]
    if len(set(keys)) != len(keys):
        seen: set[Hashable] = set()
        for name, subject, obj in keys:
            if (name, subject, obj) in seen:
                raise ValueError(f"the frame holds {name}({subject}, {obj}) twice")
            seen.add((name, subject, obj))
    return keys

