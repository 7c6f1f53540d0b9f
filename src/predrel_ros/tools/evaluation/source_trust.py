"""Reference-free trust on any footage: how often the self-mode trust flags each group.

Footage without ground truth (a robot's bag, a phone video) cannot say whether the pipeline is
right, but it can say whether the trust says it is not: `source_trust` runs perception, the
predicate extractor and a `self`-mode reliability monitor (with the trust model and the images'
quality, as the live graph's reliability node) over the frames and reports per group the share of
judged frames flagged WARN or ERROR, the mean expected agreement and the commonest strongest
evidence. For a model trained on rendered scenes, real footage should be flagged
(`predrel trust run`).

With labels (`footage_labels`: real footage labelled every few frames), the trust is also compared
with the true agreement against them, window by window as `predrel eval` compares it with the
ground truth (`trust_measurement`): at every judged frame t of a group whose window
(t-window+1..t, by position in the sequence) holds a labelled frame with a reference stream of the
group, the pooled share of the window's reference streams the pipeline agrees on, beside the
trust's expected agreement and level (`label_comparison`).
"""
from __future__ import annotations

from collections import Counter
from typing import Iterable, Mapping, Sequence

import numpy as np

from predrel_ros.core.frame import Frame
from predrel_ros.perception.perceiver import Perceiver
from predrel_ros.predicates.extractor import PredicateExtractor
from predrel_ros.predicates.vocabulary import GROUPS
from predrel_ros.reliability.image_quality import ImageQuality
from predrel_ros.reliability.monitor import ReliabilityMonitor
from predrel_ros.reliability.trust import ERROR, STALE
from predrel_ros.tools.evaluation.footage_labels import FootageLabels, LabelScore
from predrel_ros.tools.evaluation.rolling_agreement import windowed_sum
from predrel_ros.tools.evaluation.tables import shown
from predrel_ros.tools.evaluation.trust_measurement import FLAGGED, LOW_AGREEMENT, mean_of


def source_trust(frames: Iterable[Frame], perceiver: Perceiver, extractor: PredicateExtractor,
                 monitor: ReliabilityMonitor, max_frames: int | None = None,
                 labels: FootageLabels | None = None) -> dict:
    """Per group the flagged share of judged frames, the mean expected agreement and the commonest
    first reason, over the frames of one sequence (the monitor in self mode with entities); with
    `labels`, also `labels`: the trust against the agreement with them (`label_comparison`)."""
    quality = ImageQuality()
    perceiver.reset()
    extractor.reset()
    monitor.reset()
    levels: dict[str, list[str]] = {group: [] for group in GROUPS}
    expected: dict[str, list[float]] = {group: [] for group in GROUPS}
    reasons: dict[str, Counter] = {group: Counter() for group in GROUPS}
    any_flagged: list[bool] = []      # per frame with a judged group: whether any group is flagged
    series: list[dict[str, tuple[float, bool]]] = []   # per frame: judged group -> (expected, flagged)
    score = LabelScore()
    count = 0
    for frame in frames:
        if max_frames is not None and count >= max_frames:
            break
        count += 1
        entities = perceiver.process(frame.rgb, frame.index, depth=frame.depth,
                                     camera=frame.camera if frame.depth is not None else None, bgr=False)
        estimates = extractor.update(frame.index, entities, depth_m=frame.depth)
        height, width = frame.rgb.shape[:2]
        monitor.add_evaluated_entities(frame.index, entities, (width, height), quality.measure(frame.rgb))
        monitor.add_evaluated(frame.index, estimates)
        report = monitor.report(streams=False)
        judged = [record for record in report.groups if record.trust != STALE]
        if labels is not None:
            series.append({record.predicate: (record.expected_agreement, record.trust in FLAGGED)
                           for record in judged})
            score.add(labels.agreement(frame.index, entities, estimates))
        if judged:
            any_flagged.append(any(record.trust in FLAGGED for record in judged))
        for record in judged:
            levels[record.predicate].append(record.trust)
            if not np.isnan(record.expected_agreement):
                expected[record.predicate].append(record.expected_agreement)
            if record.trust in FLAGGED and record.reason:
                reasons[record.predicate][_first_evidence(record.reason)] += 1
    groups = {}
    for group in GROUPS:
        judged = levels[group]
        groups[group] = {
            "judged_frames": len(judged),
            "flagged_share": mean_of([level in FLAGGED for level in judged]),
            "error_share": mean_of([level == ERROR for level in judged]),
            "expected_agreement": mean_of(expected[group]),
            "commonest_evidence": reasons[group].most_common(1)[0][0] if reasons[group] else None}
    result = {"frames": count, "groups": groups,
              "any_group_flagged_share": mean_of(any_flagged)}
    if labels is not None:
        result["labels"] = {"clip": labels.clip, **score.pooled(),
                            "groups": label_comparison(score.group_counts(), series, monitor.config.window)}
    return result


def label_comparison(counts: Sequence[Mapping[str, tuple[int, int, int]]],
                     series: Sequence[Mapping[str, tuple[float, bool]]], window: int) -> dict[str, dict]:
    """Per group with a reference stream: over its windows (the frames it is judged on whose window
    holds a reference stream of it) the mean true and expected agreement, their mean absolute error,
    the share flagged (WARN or ERROR), and that share among the windows with true agreement below
    `LOW_AGREEMENT`; also its reference streams, the share of them whose entities the pipeline
    found, and the agreement pooled over all of them. `counts[t]`: group -> (reference streams,
    those with their entities found, those agreed on) of frame t (empty when not labelled);
    `series[t]`: judged group -> (expected agreement, flagged) after frame t."""
    comparison = {}
    for group in GROUPS:
        known, found, agreeing = np.array([frame.get(group, (0, 0, 0)) for frame in counts], dtype=np.int64
                                          ).reshape(-1, 3).T
        if not known.any():
            continue
        streams, hits = windowed_sum(known, window), windowed_sum(agreeing, window)
        windows = [(hits[t] / streams[t], *series[t][group]) for t in range(len(counts))
                   if streams[t] and group in series[t]]
        true = np.array([value for value, _, _ in windows])
        expected = np.array([value for _, value, _ in windows])
        flagged = np.array([value for _, _, value in windows], dtype=bool)
        low = true < LOW_AGREEMENT
        both = ~np.isnan(expected)
        comparison[group] = {
            "reference_streams": int(known.sum()), "found_share": float(found.sum() / known.sum()),
            "agreement": float(agreeing.sum() / known.sum()),
            "windows": len(windows), "true_agreement": mean_of(true), "expected_agreement": mean_of(expected[both]),
            "mae": mean_of(np.abs(expected[both] - true[both])), "flagged_share": mean_of(flagged),
            "low_windows": int(low.sum()), "flagged_share_low": mean_of(flagged[low])}
    return comparison


def label_table(comparison: Mapping[str, dict]) -> str:
    """The comparison of one sequence (`label_comparison`) as a Markdown table."""
    lines = ["| group | reference streams (entities found) | windows | true agreement | expected agreement | "
             f"MAE | flagged | flagged, true < {LOW_AGREEMENT} (windows) |", "|" + " --- |" * 8]
    for group, values in comparison.items():
        lines.append(f"| {group} | {values['reference_streams']} ({shown(values['found_share'])}) | "
                     f"{values['windows']} | {shown(values['true_agreement'])} | "
                     f"{shown(values['expected_agreement'])} | {shown(values['mae'])} | "
                     f"{shown(values['flagged_share'])} | {shown(values['flagged_share_low'])} "
                     f"({values['low_windows']}) |")
    return "\n".join(lines)


def _first_evidence(reason: str) -> str:
    """The strongest evidence a trust model's reason names ("expected agreement 0.41 < 0.60 (warn):
    unexplained_birth_rate +2.10, ..." -> "unexplained_birth_rate"), else the reason's first word."""
    _, _, evidence = reason.partition("): ")
    return (evidence or reason).split()[0]
