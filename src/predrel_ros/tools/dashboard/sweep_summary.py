"""The summary of a degradation sweep watched live: per condition, how reliable each predicate group
stayed, what the trust monitor said, and how often the downstream action was right.

`SweepRecorder` collects what the dashboard receives: both pipelines' predicates (clean twin and
degraded, with the condition each degraded frame was made under) and the entities they were
computed from, the reliability reports, the recognised and the true actions, and every node's
counters from /diagnostics. `summary()` then computes, per condition (degradation kind and
severity, in order of appearance):

- `prs` and `agreement`: PRS (confidence-weighted) and the agreement rate (unweighted) of the
  degraded predicates against the clean twin's, pooled per group over all the condition's frames,
  as the reliability node defines them without its window: each frame's degraded entities are
  associated with the clean twin's (`reliability.association`; the twins track independently, so
  their ids differ) and the degraded predicates renamed into the clean ids, then
  `RollingReliability` in reference mode over the whole condition (`associate=False`: by the ids
  each side gives);
- `trust`: how many reports of each label (e.g. `reliability`) put each group at OK/WARN/ERROR/STALE;
- `action`: frames with a recognised action, accuracy against ground truth overall, on the frames
  the action was trusted and on the ones it was not, and the trusted fraction;
- `frames`: degraded frames seen, clean twins matched, degraded frames without a clean twin (or,
  when associating, without both sides' entities);
- `entities` (when associating): per compared frame, the degraded detections (entities seen:
  visibility > 0; a lost track the tracker still reports for a few frames is not a detection, and
  its predicates are UNK), those with no clean partner (`extra_per_frame`), split into those a clean
  entity of another class covers (`relabelled_per_frame`: an object the degraded side names wrongly)
  and the rest (`false_per_frame`: false detections against the clean twin, e.g. an occluder taken
  for an object), and the clean detections with no degraded partner (`missed_per_frame`).
It also holds `frame_accounting` (each node's outcome counters, last /diagnostics; what the dashboard
itself received and each stream's first frame index, which bounds what a late listener missed) and a
`timeline` (per report: frame, condition, trust per group) for plots and tests.
"""
from __future__ import annotations

import math
from collections import Counter, OrderedDict
from dataclasses import dataclass
from typing import Sequence

from predrel_ros.core.entities import Entity
from predrel_ros.predicates.estimate import PredicateEstimate
from predrel_ros.predicates.vocabulary import GROUPS
from predrel_ros.reliability.association import MIN_IOU, associate, renamed
from predrel_ros.reliability.rolling import REFERENCE, RollingReliability
from predrel_ros.reliability.trust import TrustConfig
from predrel_ros.tools.dashboard.view import TRUST_LEVELS, ActionView, Condition, NodeStatus, ReportView
from predrel_ros.tools.evaluation.entity_partners import OTHER_CLASS, partner_outcomes

CLEAN_SIDE, DEGRADED_SIDE = "clean", "degraded"
SIDES = (CLEAN_SIDE, DEGRADED_SIDE)


@dataclass(frozen=True)
class _Frame:
    condition: Condition
    estimates: tuple[PredicateEstimate, ...]


def _plain(value: float) -> float | None:
    return None if value is None or math.isnan(value) else round(float(value), 4)


def _ratio(numerator: int, denominator: int) -> float | None:
    return None if denominator == 0 else round(numerator / denominator, 4)


def _checked(side: str) -> str:
    if side not in SIDES:
        raise ValueError(f"side must be one of {SIDES}, got {side!r}")
    return side


class SweepRecorder:
    """associate: compare the predicates of associated entities (`add_entities` of both sides for
    every compared frame); match_iou: the association's box IoU."""

    def __init__(self, associate: bool = True, match_iou: float = MIN_IOU) -> None:
        self.associate = associate
        self.match_iou = match_iou
        self.frames: dict[str, dict[int, _Frame]] = {side: {} for side in SIDES}
        #: per side, the entities of each frame (boxes, classes, ids; no masks needed)
        self.entities: dict[str, dict[int, tuple[Entity, ...]]] = {side: {} for side in SIDES}
        self.reports: list[tuple[str, ReportView]] = []
        self.actions: dict[int, ActionView] = {}
        self.ground_truth_actions: dict[int, str] = {}
        self.node_status: dict[str, NodeStatus] = {}

    def add_predicates(self, side: str, frame_index: int, condition: Condition,
                       estimates: Sequence[PredicateEstimate]) -> None:
        self.frames[_checked(side)][int(frame_index)] = _Frame(condition, tuple(estimates))

    def add_entities(self, side: str, frame_index: int, entities: Sequence[Entity]) -> None:
        self.entities[_checked(side)][int(frame_index)] = tuple(entities)

    def add_report(self, label: str, report: ReportView) -> None:
        self.reports.append((label, report))

    def add_action(self, action: ActionView) -> None:
        self.actions[action.frame_index] = action

    def add_ground_truth_action(self, frame_index: int, primitive: str) -> None:
        self.ground_truth_actions[int(frame_index)] = primitive

    def set_node_status(self, status: NodeStatus) -> None:
        self.node_status[status.name] = status

    # -- the summary --------------------------------------------------------------------------
    def conditions(self) -> list[Condition]:
        """Conditions of the degraded frames, in order of first appearance."""
        seen: OrderedDict[Condition, None] = OrderedDict()
        for index in sorted(self.frames[DEGRADED_SIDE]):
            seen.setdefault(self.frames[DEGRADED_SIDE][index].condition, None)
        return list(seen)

    def _comparison(self, condition: Condition) -> tuple[dict[str, dict[str, float | None]], dict[str, int],
                                                         dict[str, float | None]]:
        """{"prs": per group, "agreement": per group}, the frame counts and the entity counts of one condition."""
        degraded, clean = self.frames[DEGRADED_SIDE], self.frames[CLEAN_SIDE]
        indices = sorted(i for i, frame in degraded.items() if frame.condition == condition)
        twins = [i for i in indices if i in clean]
        frames = {"degraded": len(indices), "matched": len(twins), "without_clean_twin": len(indices) - len(twins)}
        entities = self.entities
        if self.associate:
            compared = [i for i in twins if i in entities[DEGRADED_SIDE] and i in entities[CLEAN_SIDE]]
            frames["matched"], frames["without_entities"] = len(compared), len(twins) - len(compared)
        else:
            compared = twins
        rolling = RollingReliability(window=max(len(compared), 1), mode=REFERENCE)
        seen = extra = missed = relabelled = 0
        for index in compared:
            estimates = degraded[index].estimates
            if self.associate:
                ids = associate(entities[DEGRADED_SIDE][index], entities[CLEAN_SIDE][index], self.match_iou)
                estimates, _ = renamed(estimates, ids)
                # the detections of both sides: a lost track the tracker still reports (visibility 0) is none
                detected, clean_detected = ([e for e in entities[side][index] if e.visibility > 0]
                                            for side in (DEGRADED_SIDE, CLEAN_SIDE))
                partners = associate(detected, clean_detected, self.match_iou)
                seen += len(detected)
                extra += len(detected) - len(partners)
                missed += len(clean_detected) - len(partners)
                # the degraded detections judged from the clean side: a clean entity of another class under an
                # unpartnered one makes it a relabelled object, not a false detection
                outcomes = partner_outcomes(clean_detected, detected,
                                            {clean_id: own for own, clean_id in partners.items()}, self.match_iou)
                relabelled += sum(n for (_, outcome), n in outcomes.items() if outcome == OTHER_CLASS)
            rolling.update(index, estimates, clean[index].estimates)
        pooled = rolling.by_group(with_tpc=False) if compared else {}
        values = {metric: {group: _plain(pooled[group][metric]) if group in pooled else None for group in GROUPS}
                  for metric in ("prs", "agreement")}
        counts = {"per_frame": _ratio(seen, len(compared)), "extra_per_frame": _ratio(extra, len(compared)),
                  "relabelled_per_frame": _ratio(relabelled, len(compared)),
                  "false_per_frame": _ratio(extra - relabelled, len(compared)),
                  "missed_per_frame": _ratio(missed, len(compared))} if self.associate else {}
        return values, frames, counts

    def _trust(self, condition: Condition) -> dict[str, dict[str, dict[str, int]]]:
        counts: dict[str, dict[str, Counter]] = {}
        for label, report in self.reports:
            if report.condition != condition:
                continue
            for group, entry in report.groups.items():
                counts.setdefault(label, {}).setdefault(group, Counter())[entry.trust] += 1
        return {label: {group: {level: counter[level] for level in TRUST_LEVELS} for group, counter in groups.items()}
                for label, groups in counts.items()}

    def _action(self, condition: Condition) -> dict:
        total = trusted = correct = trusted_correct = untrusted_correct = judged = trusted_judged = 0
        degraded = self.frames[DEGRADED_SIDE]
        for frame_index, action in self.actions.items():
            frame = degraded.get(frame_index)
            if frame is None or frame.condition != condition:
                continue
            total += 1
            trusted += action.trusted
            truth = self.ground_truth_actions.get(frame_index)
            if truth is None:
                continue
            right = truth == action.primitive
            judged += 1
            correct += right
            if action.trusted:
                trusted_judged += 1
                trusted_correct += right
            else:
                untrusted_correct += right
        return {"frames": total, "with_ground_truth": judged, "accuracy": _ratio(correct, judged),
                "trusted_fraction": _ratio(trusted, total),
                "accuracy_trusted": _ratio(trusted_correct, trusted_judged),
                "accuracy_untrusted": _ratio(untrusted_correct, judged - trusted_judged)}

    def frame_accounting(self) -> dict:
        nodes = {name: dict(status.counters) for name, status in sorted(self.node_status.items())}
        degraded, clean = self.frames[DEGRADED_SIDE], self.frames[CLEAN_SIDE]
        streams = {"clean_predicate": clean, "degraded_predicate": degraded, "action": self.actions,
                   "ground_truth_action": self.ground_truth_actions}
        return {"nodes": nodes,
                "dashboard": {"clean_predicate_frames": len(clean), "degraded_predicate_frames": len(degraded),
                              "matched": len(degraded.keys() & clean.keys()),
                              "actions": len(self.actions), "ground_truth_actions": len(self.ground_truth_actions),
                              "reports": len(self.reports),
                              # a late listener misses what was published before it matched: at most
                              # this many frames of each stream (frame indices count from 0 and rise)
                              "first_frames": {name: min(frames) if frames else None
                                               for name, frames in streams.items()}}}

    def timeline(self) -> list[dict]:
        return [{"label": label, "frame_index": report.frame_index, "condition": report.condition.key,
                 "trust": {group: entry.trust for group, entry in report.groups.items()}}
                for label, report in self.reports]

    def summary(self, trust: TrustConfig | None = None) -> dict:
        trust = trust or TrustConfig()
        conditions = []
        for condition in self.conditions():
            values, frames, counts = self._comparison(condition)
            conditions.append({"kind": condition.kind, "severity": condition.severity, "frames": frames,
                               **values, "entities": counts, "trust": self._trust(condition),
                               "action": self._action(condition)})
        return {"conditions": conditions, "frame_accounting": self.frame_accounting(),
                "agreement_limits": {"warn": trust.agreement.warn, "error": trust.agreement.error},
                "timeline": self.timeline()}
