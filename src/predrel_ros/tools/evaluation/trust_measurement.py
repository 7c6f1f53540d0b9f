"""How well reference-free trust (`self` mode) tracks the true agreement: `trust.json` of `predrel eval`.

Per episode and condition, the pipeline's own predicates and entities go through a `self`-mode
reliability monitor, as on a robot (`self_trust`); after every frame its group trust levels and
expected agreements are recorded (a dropped frame keeps the last report: what a consumer holds).
They are compared with the true rolling agreement of the same window (`rolling_agreement`, the
number the reference modes give) over every group-window with a known truth (`trust_document`):

- `mae`: mean |expected - true| over the group-windows where both are defined;
- `recall_below_0_6`: share of group-windows with true agreement < 0.6 flagged WARN or ERROR, and
  `recall_by_kind` the same per degradation kind;
- `false_alarm_clean`: share of clean windows (frames) with any group flagged. Perception fails on
  clean frames too (an object missed or named wrongly for a whole episode), so it is split:
  `clean_low_share`, the share of clean windows with some group's true agreement < 0.6;
  `false_alarm_clean_good`, the share of the other clean windows (every group >= 0.6) with a group
  flagged, the false alarms proper; `flagged_clean_low`, the share of the failed clean windows
  flagged. A recall of r over failed clean windows alone flags r * `clean_low_share` of all clean
  windows: where that share is large, a high recall and few clean flags cannot both be had;
- `median_delay_frames`: on switching schedules (clean up to the middle frame of the episode, then
  severity 3 of one kind: the clean run's frames spliced with the degraded run's, `spliced`; the
  extractor's state is the degraded run's from its start, a switch in a live stream differs in its
  first few frames), per group whose true agreement falls below 0.6 after the switch, the frames
  from the switch to the first flag at or after it; a series never flagged counts as infinitely late
  (null when more than half are). `switch_series` and `switch_series_flagged` count them;
- `episodes`: per episode its `mae` over all its conditions (and their `group_windows`) and, per
  group, its clean condition's mean true and expected agreement (`clean_true`, `clean_expected`):
  an object missed or misnamed for a whole episode shows as a clean truth far below the
  expectation, which no window's evidence explains (docs/results.md).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from predrel_ros.action.recognizer import ActionRecognizer
from predrel_ros.core.entities import Entity
from predrel_ros.core.errors import UserError
from predrel_ros.degradations import NONE, Condition
from predrel_ros.predicates import vocabulary
from predrel_ros.predicates.estimate import PredicateEstimate
from predrel_ros.reliability.monitor import SELF, MonitorConfig, ReliabilityMonitor
from predrel_ros.reliability.trust import ERROR, STALE, WARN, CleanProfile, TrustConfig
from predrel_ros.reliability.trust_estimator import GROUP_SIGNALS, LOW_AGREEMENT, TrustModel
from predrel_ros.reliability.trust_evidence import FEATURES
from predrel_ros.tools.evaluation.rolling_agreement import rolling_agreement, rolling_agreement_of
from predrel_ros.tools.evaluation.sequences import EpisodeSequences, save_atomically
from predrel_ros.tools.evaluation.tables import shown

GROUPS = vocabulary.GROUPS
FLAGGED = (WARN, ERROR)
#: the severity switching schedules switch to
SWITCH_SEVERITY = 3


@dataclass
class TrustSeries:
    """Self-mode trust of one condition, (G, T) per group of `GROUPS` and frame, and what the trust
    estimator reads (`trust_estimator`): the groups' window signals (G, T, len(GROUP_SIGNALS)) and
    the window's evidence (T, len(FEATURES)); NaN where there is none (no frame yet, an old file)."""

    expected: np.ndarray   # expected agreement of the group (NaN: none, e.g. no calibration)
    flagged: np.ndarray    # trust WARN or ERROR
    judged: np.ndarray     # trust not STALE (a level was given)
    signals: np.ndarray | None = None
    features: np.ndarray | None = None
    #: the action node's gate fed with this trust (T,): its estimate was right (1), wrong (0), or
    #: the frame has no label or no estimate (NaN); and whether the gate trusted it
    action_correct: np.ndarray | None = None
    action_trusted: np.ndarray | None = None
    #: (T,) the window's evidence covered trust.min_frames, so a trust model judged every group the
    #: monitor had (`ReliabilityMonitor.evidence_covers_min_frames`); False in files saved before it
    evidence_covered: np.ndarray | None = None

    def __post_init__(self) -> None:
        groups, count = self.expected.shape
        if self.signals is None:
            self.signals = np.full((groups, count, len(GROUP_SIGNALS)), np.nan)
        if self.features is None:
            self.features = np.full((count, len(FEATURES)), np.nan)
        if self.action_correct is None:
            self.action_correct = np.full(count, np.nan)
        if self.action_trusted is None:
            self.action_trusted = np.zeros(count, dtype=bool)
        if self.evidence_covered is None:
            self.evidence_covered = np.zeros(count, dtype=bool)


#: a delivered frame: (frame index, the pipeline's estimates, its entities, the image measures of the
#: frame perception saw (`ImageQuality.measure`) or None)
TrustFrame = tuple[int, Sequence[PredicateEstimate], Sequence[Entity], Mapping[str, float] | None]


def self_trust(frames: Sequence[TrustFrame], count: int, window: int, image_size: tuple[int, int],
               trust: TrustConfig | None = None, profile: CleanProfile | None = None, track_memory: int = 15,
               min_visibility: float = 0.05, model: TrustModel | None = None,
               recognizer: ActionRecognizer | None = None, labels: np.ndarray | None = None) -> TrustSeries:
    """The self-mode trust after each of `count` frames, given the delivered frames in order;
    image_size: (width, height). With a trust model the expected agreement and the levels of the
    groups it models are the model's (where the monitor judges: `ReliabilityMonitor.report`), as the
    reliability node gives them. With a
    recognizer and the (T,) class index of each frame's primitive (-1: none), the action node's
    gate is run on every delivered frame with the report of that frame, as in the live graph."""
    monitor = ReliabilityMonitor(MonitorConfig(reference_mode=SELF, window=window, track_memory=track_memory,
                                               min_visibility=min_visibility), trust, profile, trust_model=model)
    series = TrustSeries(np.full((len(GROUPS), count), np.nan), np.zeros((len(GROUPS), count), dtype=bool),
                         np.zeros((len(GROUPS), count), dtype=bool))
    delivered = {t: rest for t, *rest in frames}
    for t in range(count):
        if t in delivered:
            estimates, entities, quality = delivered[t]
            monitor.add_evaluated_entities(t, entities, image_size, quality)
            monitor.add_evaluated(t, estimates)
            report = monitor.report(streams=False)
            signals = monitor.group_signals()
            features = monitor.evidence_features()
            series.features[t] = [features[name] for name in FEATURES]
            series.evidence_covered[t] = monitor.evidence_covers_min_frames()
            for row, group in enumerate(GROUPS):
                record = report.group(group)
                if record is None:
                    continue
                values = signals.get(group, {})
                series.signals[row, t] = [values.get(name, math.nan) for name in GROUP_SIGNALS]
                series.judged[row, t] = record.trust != STALE
                series.flagged[row, t] = record.trust in FLAGGED
                series.expected[row, t] = record.expected_agreement
            if recognizer is not None:
                result = recognizer.update(t, estimates, report.trust())
                series.action_trusted[t] = result.trusted
                if labels[t] >= 0:
                    series.action_correct[t] = float(recognizer.model.class_names.index(result.primitive) == labels[t])
        elif t > 0:
            for array in (series.expected, series.flagged, series.judged, series.signals):
                array[:, t] = array[:, t - 1]
            for array in (series.features, series.action_correct, series.action_trusted, series.evidence_covered):
                array[t] = array[t - 1]
    return series


def switch_frame(count: int) -> int:
    """The first degraded frame of a switching schedule over `count` frames."""
    return count // 2


def spliced(clean: Sequence, degraded: Sequence, switch: int) -> list:
    """Delivered frames of a switching schedule: the clean run's before `switch`, the degraded run's
    from it (frames are (frame index, ...) tuples)."""
    return [frame for frame in clean if frame[0] < switch] + [frame for frame in degraded if frame[0] >= switch]


def save_series(path: str | Path, series: Sequence[TrustSeries], switches: dict[str, TrustSeries]) -> Path:
    """One episode's series, condition axis first (in the order of its sequences' conditions), and
    its switching schedules' series by degradation kind."""
    kinds = sorted(switches)
    arrays = {name: np.stack([getattr(s, name) for s in series]) for name in _SERIES_ARRAYS}
    arrays["switch_kinds"] = np.array(kinds, dtype=str)
    if kinds:
        arrays.update({f"switch_{name}": np.stack([getattr(switches[k], name) for k in kinds])
                       for name in _SERIES_ARRAYS})
    return save_atomically(path, arrays)


def load_series(path: str | Path) -> tuple[list[TrustSeries], dict[str, TrustSeries]]:
    """What `save_series` wrote (files without signals and features load with NaN there). Raises
    UserError for a file whose evidence has another number of features than this version's."""
    with np.load(path) as data:
        def series_of(prefix: str) -> list[TrustSeries]:
            present = [name for name in _SERIES_ARRAYS if prefix + name in data.files]
            return [TrustSeries(**dict(zip(present, parts))) for parts in zip(*(data[prefix + n] for n in present))]
        if "features" in data.files and data["features"].shape[-1] != len(FEATURES):
            raise UserError(f"{path}: its trust evidence has {data['features'].shape[-1]} features, this version "
                             f"{len(FEATURES)} (run `predrel eval` again with this version)")
        kinds = [str(kind) for kind in data["switch_kinds"]]
        switches = dict(zip(kinds, series_of("switch_"))) if kinds else {}
        return series_of(""), switches


_SERIES_ARRAYS = ("expected", "flagged", "judged", "signals", "features", "action_correct", "action_trusted",
                  "evidence_covered")


def switch_delays(sequences: EpisodeSequences, switches: dict[str, TrustSeries], window: int) -> list[float]:
    """Frames from the switch to the first flag, per (kind, group) whose true agreement falls below
    LOW_AGREEMENT after the switch (infinity: never flagged)."""
    count = sequences.y.shape[-1]
    switch = switch_frame(count)
    clean = sequences.conditions.index(Condition(NONE, 0))
    delays = []
    for kind, trust in sorted(switches.items()):
        degraded = sequences.conditions.index(Condition(kind, SWITCH_SEVERITY))
        y = np.concatenate([sequences.y[clean][:, :switch], sequences.y[degraded][:, switch:]], axis=1)
        truth = rolling_agreement_of(sequences, y, window)
        for row, group in enumerate(GROUPS):
            true = truth.get(group)
            if true is None or not (np.nan_to_num(true[switch:], nan=1.0) < LOW_AGREEMENT).any():
                continue
            flags = np.flatnonzero(trust.flagged[row][switch:])
            delays.append(float(flags[0]) if len(flags) else math.inf)
    return delays


def trust_document(episodes: Sequence[tuple[EpisodeSequences, Sequence[TrustSeries], dict[str, TrustSeries]]],
                   window: int) -> dict:
    """trust.json (see the module docstring) from each episode's sequences, self-trust series and
    switching schedules' series."""
    per_condition: dict[tuple[str, int], dict[str, dict[str, list]]] = {}
    errors, low_flags, clean_any, clean_low = [], [], [], []
    low_by_kind: dict[str, list] = {}
    delays: list[float] = []
    gates: dict[tuple[str, int], dict[str, list]] = {}
    by_episode = []
    for sequences, series, switches in episodes:
        delays.extend(switch_delays(sequences, switches, window))
        episode_errors = len(errors)
        clean_true: dict[str, float | None] = {}
        clean_expected: dict[str, float | None] = {}
        for index, condition in enumerate(sequences.conditions):
            truth = rolling_agreement(sequences, index, window)
            trust = series[index]
            cell = per_condition.setdefault((condition.kind, condition.severity),
                                            {"true": {}, "expected": {}, "flagged": {}})
            gate = gates.setdefault((condition.kind, condition.severity), {"correct": [], "trusted": []})
            labelled = ~np.isnan(trust.action_correct)
            gate["correct"].extend(trust.action_correct[labelled].tolist())
            gate["trusted"].extend(trust.action_trusted[labelled].tolist())
            any_flag = np.zeros(trust.flagged.shape[1], dtype=bool)
            any_known = np.zeros_like(any_flag)
            any_low = np.zeros_like(any_flag)
            for row, group in enumerate(GROUPS):
                true = truth.get(group)
                if true is None:
                    continue
                known = ~np.isnan(true)
                expected = trust.expected[row]
                both = known & ~np.isnan(expected)
                cell["true"].setdefault(group, []).extend(true[known].tolist())
                cell["expected"].setdefault(group, []).extend(expected[both].tolist())
                if condition.kind == NONE:          # an episode's one clean condition
                    clean_true[group], clean_expected[group] = mean_of(true[known]), mean_of(expected[both])
                cell["flagged"].setdefault(group, []).extend(trust.flagged[row][known].tolist())
                errors.extend(np.abs(expected[both] - true[both]).tolist())
                low = known & (np.nan_to_num(true, nan=1.0) < LOW_AGREEMENT)
                low_flags.extend(trust.flagged[row][low].tolist())
                if low.any():
                    low_by_kind.setdefault(condition.kind, []).extend(trust.flagged[row][low].tolist())
                any_flag |= trust.flagged[row] & known
                any_known |= known
                any_low |= low
            if condition.kind == NONE:
                clean_any.extend(any_flag[any_known].tolist())
                clean_low.extend(any_low[any_known].tolist())
        by_episode.append({"episode": sequences.episode, "mae": mean_of(errors[episode_errors:]),
                           "group_windows": len(errors) - episode_errors,
                           "clean_true": clean_true, "clean_expected": clean_expected})
    conditions = [{"kind": kind, "severity": severity,
                   **{part: {group: mean_of(values) for group, values in cell[part].items()} for part in cell},
                   "action": _gate(gates[(kind, severity)])}
                  for (kind, severity), cell in sorted(per_condition.items(), key=lambda item: (item[0][0] != NONE,
                                                                                                item[0]))]
    gated = [c["action"] for c in conditions if c["action"]["accuracy_when_trusted"] is not None]
    clean_gate = next((c["action"] for c in conditions if c["kind"] == NONE), {})
    clean_flagged, clean_low = np.array(clean_any, dtype=bool), np.array(clean_low, dtype=bool)
    summary = {"mae": mean_of(errors), "recall_below_0_6": mean_of(low_flags), "false_alarm_clean": mean_of(clean_any),
               "clean_low_share": mean_of(clean_low.tolist()),
               "false_alarm_clean_good": mean_of(clean_flagged[~clean_low].tolist()),
               "flagged_clean_low": mean_of(clean_flagged[clean_low].tolist()),
               "median_delay_frames": _median(delays), "switch_series": len(delays),
               "switch_series_flagged": sum(1 for d in delays if math.isfinite(d)),
               "group_windows": len(errors), "low_group_windows": len(low_flags),
               "recall_by_kind": {kind: mean_of(flags) for kind, flags in sorted(low_by_kind.items())},
               "window": window,
               "action_accuracy_when_trusted_min": min((g["accuracy_when_trusted"] for g in gated), default=None),
               "action_trusted_share_clean": clean_gate.get("trusted_share")}
    return {"summary": summary, "conditions": conditions, "episodes": by_episode}


def _gate(frames: dict[str, list]) -> dict:
    """The action gate as selective prediction over a condition's labelled frames: accuracy when
    trusted, the trusted share, and the accuracy of all estimates (None without labelled frames)."""
    correct = np.array(frames["correct"], dtype=float)
    trusted = np.array(frames["trusted"], dtype=bool)
    return {"accuracy_when_trusted": mean_of(correct[trusted].tolist()), "trusted_share": mean_of(trusted.tolist()),
            "accuracy": mean_of(correct.tolist()), "frames": int(correct.size)}


def trust_table(document: dict) -> str:
    """The Trust table of tables.md: per condition and group true / expected agreement and flagged share."""
    summary = document["summary"]
    lines = ["## Trust (reference-free, self mode, against the true rolling agreement)", "",
             f"Window {summary['window']} frames. MAE {shown(summary['mae'])}, recall of windows with true agreement "
             f"< {LOW_AGREEMENT} {shown(summary['recall_below_0_6'])} ({summary['low_group_windows']} group-windows), "
             f"clean false alarms {shown(summary['false_alarm_clean'])} "
             f"({shown(summary.get('false_alarm_clean_good'))} of the clean windows with every group >= "
             f"{LOW_AGREEMENT}, {shown(summary.get('flagged_clean_low'))} of the "
             f"{shown(summary.get('clean_low_share'))} with one below); median delay after a switch to severity "
             f"{SWITCH_SEVERITY} {shown(summary['median_delay_frames'])} frames ({summary['switch_series_flagged']} of "
             f"{summary['switch_series']} kind-group series flagged). Recall by kind: "
             + ", ".join(f"{kind} {shown(value)}" for kind, value in summary["recall_by_kind"].items()) + ".", "",
             f"Action gate (selective prediction): accuracy when trusted at least "
             f"{shown(summary.get('action_accuracy_when_trusted_min'))} under every condition, trusted share on clean "
             f"{shown(summary.get('action_trusted_share_clean'))}.", "",
             "| condition | " + " | ".join(f"{g} true / expected / flagged" for g in GROUPS)
             + " | action accuracy when trusted / trusted share |",
             "| --- |" + " --- |" * (len(GROUPS) + 1)]
    for condition in document["conditions"]:
        cells = [" / ".join(shown(condition[part].get(group)) for part in ("true", "expected", "flagged"))
                 for group in GROUPS]
        gate = condition.get("action", {})
        cells.append(f"{shown(gate.get('accuracy_when_trusted'))} / {shown(gate.get('trusted_share'))}")
        lines.append(f"| {condition['kind']} {condition['severity']} | " + " | ".join(cells) + " |")
    loeo = summary.get("loeo")
    if loeo:
        lines += ["", f"Each of the {loeo['episodes']} episodes judged by a model fitted without it: MAE "
                      f"{shown(loeo['mae'])}, recall {shown(loeo['recall_below_0_6'])}, clean false alarms "
                      f"{shown(loeo['false_alarm_clean'])}, median delay {shown(loeo['median_delay_frames'])} frames."]
    if document.get("episodes"):
        lines += ["", "| episode | MAE | " + " | ".join(f"{g} clean true / expected" for g in GROUPS) + " |",
                  "| --- |" + " --- |" * (len(GROUPS) + 1)]
        for episode in document["episodes"]:
            lines.append(f"| {episode['episode']} | {shown(episode['mae'])} | " + " | ".join(
                f"{shown(episode['clean_true'].get(g))} / {shown(episode['clean_expected'].get(g))}" for g in GROUPS)
                + " |")
    return "\n".join(lines)


def _median(values: list[float]) -> float | None:
    """The median, None when there is none or it is infinite (most series never flagged)."""
    if not values:
        return None
    median = float(np.median(values))
    return median if math.isfinite(median) else None


def mean_of(values: Sequence[float]) -> float | None:
    """The mean, None when there are no values."""
    return float(np.mean(values)) if len(values) else None

