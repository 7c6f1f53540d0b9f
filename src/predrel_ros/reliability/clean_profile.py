"""Measuring a clean profile: how each predicate's trust signals look over rolling windows of clean data.

The reference-free trust (`trust.TrustAssessor`) asks whether a live stream is worse than clean data
of the same setup gets. `build_clean_profile` answers "how bad does clean data get": it runs the
reliability monitor over clean sequences exactly as the live node would (same rolling window, same
logic rules, identity switches left out when the entities are given) and records, per predicate
name, every window's TPC-S, mean confidence, UNK rate, calibrated expected agreement and logic-rule
violation rate, and with ground truth its agreement with it. The baseline of each signal is the
worst window (`quantile` 1.0; 0.99 leaves out the worst 1 % as outliers): the lowest TPC-S,
confidence, expected agreement and agreement, the highest UNK and violation rates. Windows whose
longest stream has fewer than `min_frames` frames are not counted (the monitor reports them STALE).

The calibration (confidence -> observed agreement with ground truth, `calibration.calibration_summary`)
comes from the same frames. Perception names entities by its own track ids and ground truth by
others: given both sides' entities, each frame's estimates are compared with ground truth under the
ground-truth ids of their associated entities (`association`), as the offline evaluator does.

Several sequences may be concatenated as long as frame indices keep increasing; leave a gap of more
than the window (and the track memory) between them, so no window spans two sequences
(`profile_command.dataset_profile` does).
"""
from __future__ import annotations

import math
from collections import defaultdict
from typing import Iterable, NamedTuple, Sequence

import numpy as np

from predrel_ros.core.entities import Entity
from predrel_ros.predicates import vocabulary
from predrel_ros.predicates.estimate import PredicateEstimate, match_references
from predrel_ros.reliability.association import associate, renamed
from predrel_ros.reliability.calibration import calibration_summary
from predrel_ros.reliability.monitor import GROUND_TRUTH, SELF, MonitorConfig, ReliabilityMonitor
from predrel_ros.reliability.trust import CleanProfile, PredicateBaseline, TrustConfig


class CleanFrame(NamedTuple):
    """One clean frame of the profile's data."""

    frame_index: int
    estimates: Sequence[PredicateEstimate]
    references: Sequence[PredicateEstimate] | None = None   # ground-truth predicates (calibration, agreement)
    entities: Sequence[Entity] | None = None                 # the entities the estimates were computed from
    reference_entities: Sequence[Entity] | None = None       # the ground-truth entities


#: window signal (= baseline field) -> its worst end, "low" or "high"
_SIGNALS = {"confidence": "low", "tpc_s": "low", "unk_rate": "high", "violation_rate": "high",
            "expected_agreement": "low"}


def build_clean_profile(frames: Iterable[CleanFrame | tuple], n_bins: int = 10, memory: int = 15, window: int = 5,
                        rolling_window: int = 30, quantile: float = 1.0, min_frames: int = 10,
                        min_rule_checks: int = 5, track_memory: int = 15, min_visibility: float = 0.05) -> CleanProfile:
    """The clean profile of `frames` (CleanFrames, or tuples of their fields, in frame order).

    memory, window: the logic rules' look-back and co-occurrence window (the extractor's
    event_memory and window); rolling_window: the monitor's window; min_frames: trust.min_frames;
    min_rule_checks, track_memory, min_visibility: as the monitor (`MonitorConfig`).
    """
    frames = [CleanFrame(*frame) for frame in frames]
    with_entities = bool(frames) and all(frame.entities is not None for frame in frames)
    compared = [_compared(frame) if frame.references is not None else None for frame in frames]
    calibrations = _calibrations(frames, compared, n_bins)
    monitor_settings = dict(window=rolling_window, logic_memory=memory, logic_window=window,
                            min_rule_checks=min_rule_checks, track_memory=track_memory, min_visibility=min_visibility)
    trust = TrustConfig(min_frames=min_frames)
    own = ReliabilityMonitor(MonitorConfig(reference_mode=SELF, skip_replaced_tracks=with_entities, **monitor_settings),
                             trust, CleanProfile({name: PredicateBaseline(math.nan, math.nan, math.nan, math.nan, c)
                                                  for name, c in calibrations.items()}, rolling_window))
    # fed the estimates already under the ground-truth ids (`_compared`): no association of its own
    truth = ReliabilityMonitor(MonitorConfig(reference_mode=GROUND_TRUTH, associate=False, **monitor_settings), trust)
    values: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    names: set[str] = set()
    for frame, estimates_compared in zip(frames, compared):
        names.update(estimate.name for estimate in frame.estimates)
        if with_entities:
            own.add_evaluated_entities(frame.frame_index, frame.entities)
        own.add_evaluated(frame.frame_index, frame.estimates)
        _collect(own, values, min_frames, list(_SIGNALS))
        if frame.references is not None:
            truth.add_reference(frame.frame_index, frame.references)
            if truth.add_evaluated(frame.frame_index, estimates_compared):
                _collect(truth, values, min_frames, ["agreement"])
    baselines = {}
    for name in sorted(names):
        bounds = {signal: _worst(values[name][signal], end, quantile) for signal, end in _SIGNALS.items()}
        baselines[name] = PredicateBaseline(**bounds, calibration=calibrations.get(name),
                                            agreement=_worst(values[name]["agreement"], "low", quantile))
    return CleanProfile(baselines, rolling_window, quantile)


def _compared(frame: CleanFrame) -> Sequence[PredicateEstimate]:
    """The estimates under the ground-truth ids of their entities (as they are without entities)."""
    if frame.entities is None or frame.reference_entities is None:
        return frame.estimates
    return renamed(frame.estimates, associate(frame.entities, frame.reference_entities))[0]


def _calibrations(frames: Sequence[CleanFrame], compared: Sequence[Sequence[PredicateEstimate] | None],
                  n_bins: int) -> dict:
    samples: dict[str, list[tuple[float, bool]]] = defaultdict(list)
    for frame, estimates in zip(frames, compared):
        if frame.references is None:
            continue
        for estimate, reference in match_references(estimates, frame.references):
            if reference != vocabulary.UNK_LABEL:
                samples[estimate.name].append((estimate.confidence, estimate.value == reference))
    return {name: calibration_summary([c for c, _ in pairs], [ok for _, ok in pairs], n_bins)
            for name, pairs in samples.items()}


def _collect(monitor: ReliabilityMonitor, values, min_frames: int, signals: list[str]) -> None:
    """Add the current window's signals of every predicate name that is not STALE."""
    for name, window in monitor.window_signals().items():
        if window["longest_stream"] < min_frames:
            continue
        for signal in signals:
            value = window[signal]
            if not math.isnan(value):
                values[name][signal].append(float(value))


def _worst(samples: list[float], end: str, quantile: float) -> float:
    if not samples:
        return math.nan
    return float(np.quantile(samples, quantile if end == "high" else 1.0 - quantile))
