"""Reference-free trust on any footage: how often the self-mode trust flags each group.

Footage without ground truth (a robot's bag, a phone video) cannot say whether the pipeline is
right, but it can say whether the trust says it is not: `source_trust` runs perception, the
predicate extractor and a `self`-mode reliability monitor (with the trust model and the images'
quality, as the live graph's reliability node) over the frames and reports per group the share of
judged frames flagged WARN or ERROR, the mean expected agreement and the commonest strongest
evidence. For a model trained on rendered scenes, real footage should be flagged
(`predrel trust run`).
"""
from __future__ import annotations

from collections import Counter
from typing import Iterable

import numpy as np

from predrel_ros.core.frame import Frame
from predrel_ros.perception.perceiver import Perceiver
from predrel_ros.predicates.extractor import PredicateExtractor
from predrel_ros.predicates.vocabulary import GROUPS
from predrel_ros.reliability.image_quality import ImageQuality
from predrel_ros.reliability.monitor import ReliabilityMonitor
from predrel_ros.reliability.trust import ERROR, STALE, WARN


def source_trust(frames: Iterable[Frame], perceiver: Perceiver, extractor: PredicateExtractor,
                 monitor: ReliabilityMonitor, max_frames: int | None = None) -> dict:
    """Per group the flagged share of judged frames, the mean expected agreement and the commonest
    first reason, over the frames of one sequence (the monitor in self mode with entities)."""
    quality = ImageQuality()
    perceiver.reset()
    extractor.reset()
    monitor.reset()
    levels: dict[str, list[str]] = {group: [] for group in GROUPS}
    expected: dict[str, list[float]] = {group: [] for group in GROUPS}
    reasons: dict[str, Counter] = {group: Counter() for group in GROUPS}
    any_flagged: list[bool] = []      # per frame with a judged group: whether any group is flagged
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
        if judged:
            any_flagged.append(any(record.trust in (WARN, ERROR) for record in judged))
        for record in judged:
            levels[record.predicate].append(record.trust)
            if not np.isnan(record.expected_agreement):
                expected[record.predicate].append(record.expected_agreement)
            if record.trust in (WARN, ERROR) and record.reason:
                reasons[record.predicate][_first_evidence(record.reason)] += 1
    groups = {}
    for group in GROUPS:
        judged = levels[group]
        groups[group] = {
            "judged_frames": len(judged),
            "flagged_share": float(np.mean([level in (WARN, ERROR) for level in judged])) if judged else None,
            "error_share": float(np.mean([level == ERROR for level in judged])) if judged else None,
            "expected_agreement": float(np.mean(expected[group])) if expected[group] else None,
            "commonest_evidence": reasons[group].most_common(1)[0][0] if reasons[group] else None}
    return {"frames": count, "groups": groups,
            "any_group_flagged_share": float(np.mean(any_flagged)) if any_flagged else None}


def _first_evidence(reason: str) -> str:
    """The strongest evidence a trust model's reason names ("expected agreement 0.41 < 0.60 (warn):
    unexplained_birth_rate +2.10, ..." -> "unexplained_birth_rate"), else the reason's first word."""
    _, _, evidence = reason.partition("): ")
    return (evidence or reason).split()[0]
