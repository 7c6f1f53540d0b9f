"""Typed logic rules over predicate streams, and a monitor that reports their violations.

The rules are evidence about a predicate stream only when the extractor does not enforce them
(the anti-circularity design of the hierarchical benchmark synthesis: rules that hold by
construction cannot fail and say nothing). So every rule states why it can fail:

Group "independent" (used for trust): semantic constraints the built-in extractor never applies.
- release_after_grasp (temporal precedence): release(h,o) = T needs grasp(h,o) = T within the last
  `memory` frames. The extractor releases the end of a hold (`hold_state`), which is decided on the
  reported contact while the grasp stream is reported under its own confidence: a hold whose grasp
  frames were all under the confidence floor (UNK), or one that began more than `memory` frames
  before a long UNK gap, releases what the grasp stream never showed.
- in_asymmetric (mutual exclusion): In(a,b) and In(b,a) never together. Each ordered pair is
  decided on its own; two overlapping containers of similar size can each be inside the other's box.
- support_asymmetric (mutual exclusion): Sup(a,b) and Sup(b,a) never together. Each direction is
  decided from the pixels under a different lower boundary; ragged masks can satisfy both.
- in_excludes_support_elsewhere (mutual exclusion): an object In a container is not at the same
  time Sup on another entity (In and Sup are decided per pair; an object in a bowl cannot stand on
  the table). The extractor's priority In > Sup only acts within one pair.
- single_container (cardinality): an object is In at most one container at a time, unless one of
  those containers is In the other (nested). Each (object, container) pair is decided alone.
- hand_moving_together_implies_contact (co-occurrence): a hand-object pair that moves together (MT
  or FMT) has contact T on at least one frame of the last `window` frames (the hand carries or
  pushes it). MT is decided from trajectories only; FMT looks at contact but over the extractor's
  raw window, not the reported values this rule reads.
- containment_implies_contact_or_grasp (co-occurrence): an object In a container touches it, or is
  held by a grasping hand (nothing floats inside a container). In is decided from box containment,
  contact from mask boundary distance.

Group "consistency" (hold by construction for the built-in extractor; useful to validate other
streams: reference annotations, a learned extractor, predicates read from a bag):
- grasp_implies_contact: grasp(h,o) = T needs contact(h,o) = T (a hold is a run of contact T).
- release_excludes_grasp: release and grasp of one pair are never T on the same frame.
- support_implies_contact: Sup(a,b) needs contact(a,b) = T.

A rule is checked only when its premise holds with known values and its conclusion can be decided
(UNK is not evidence of a violation). The violation rate of a predicate is the number of violations
of the rules whose premise is that predicate, divided by the number of checks of those rules.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, Sequence

from predrel_ros.predicates import vocabulary
from predrel_ros.predicates.estimate import PredicateEstimate, stream_key

INDEPENDENT = "independent"
CONSISTENCY = "consistency"

_T = vocabulary.TRUE_LABEL
_N = vocabulary.FALSE_LABEL
_UNK = vocabulary.UNK_LABEL


@dataclass(frozen=True)
class Violation:
    """One rule broken at one frame by one pair (object is NO_OBJECT = -1 for a single entity)."""

    frame_index: int
    rule: str
    predicate: str
    subject: int
    object: int
    detail: str


class FrameView:
    """One frame's predicate values, indexed for the rules (unordered names by either orientation)."""

    def __init__(self, frame_index: int, estimates: Iterable[PredicateEstimate],
                 keys: Iterable[tuple[str, int, int]] | None = None) -> None:
        """keys: the estimates' canonical keys, when the caller has them already (else computed)."""
        estimates = list(estimates)
        self.frame_index = frame_index
        self.values: dict[tuple[str, int, int], str] = dict(zip(
            (e.canonical_key for e in estimates) if keys is None else keys, (e.value for e in estimates)))
        self.by_name: dict[str, list[PredicateEstimate]] = {}
        for estimate in estimates:
            self.by_name.setdefault(estimate.name, []).append(estimate)

    def value(self, name: str, subject: int, obj: int) -> str:
        return self.values.get(stream_key(name, subject, obj), _UNK)

    def with_value(self, name: str, value: str) -> Iterator[PredicateEstimate]:
        return (e for e in self.by_name.get(name, ()) if e.value == value)


#: a check looks at the current frame and the recent history (oldest first, current frame last) and
#: yields (predicate, subject, object, violated, detail) for every premise it could decide
Check = Callable[[FrameView, Sequence[FrameView], "LogicMonitor"], Iterator[tuple[str, int, int, bool, str]]]


@dataclass(frozen=True)
class LogicRule:
    name: str
    kind: str          # precedence | exclusion | cardinality | co-occurrence
    group: str         # independent | consistency
    predicate: str     # the predicate whose premise the rule checks (its violation rate)
    description: str
    check: Check


# ------------------------------------------------------------------------------------------- checks

def _release_after_grasp(frame, history, monitor):
    for release in frame.with_value(vocabulary.RELEASE, _T):
        key = (vocabulary.GRASP, release.subject, release.object)
        recent = [view for view in history if view.frame_index >= frame.frame_index - monitor.memory]
        grasped = any(view.value(*key) == _T for view in recent)
        yield (vocabulary.RELEASE, release.subject, release.object, not grasped,
               f"release without grasp({release.subject}, {release.object}) in the last {monitor.memory} frames")


def _asymmetric(relation):
    def check(frame, history, monitor):
        for estimate in frame.with_value(vocabulary.STATIC, relation):
            reverse = frame.value(vocabulary.STATIC, estimate.object, estimate.subject)
            if reverse == _UNK or estimate.subject > estimate.object and reverse == relation:
                continue  # undecidable, or the pair was already reported from its other orientation
            yield (vocabulary.STATIC, estimate.subject, estimate.object, reverse == relation,
                   f"{relation}({estimate.subject}, {estimate.object}) and {relation}({estimate.object}, "
                   f"{estimate.subject})")
    return check


def _in_excludes_support_elsewhere(frame, history, monitor):
    supports = {}
    for estimate in frame.with_value(vocabulary.STATIC, "Sup"):
        supports.setdefault(estimate.subject, []).append(estimate.object)
    for inside in frame.with_value(vocabulary.STATIC, "In"):
        others = [o for o in supports.get(inside.subject, ()) if o != inside.object]
        yield (vocabulary.STATIC, inside.subject, inside.object, bool(others),
               f"In({inside.subject}, {inside.object}) and Sup({inside.subject}, {others})")


def _single_container(frame, history, monitor):
    containers = {}
    for inside in frame.with_value(vocabulary.STATIC, "In"):
        containers.setdefault(inside.subject, []).append(inside.object)
    for obj, holders in containers.items():
        nested = all(frame.value(vocabulary.STATIC, a, b) == "In" or frame.value(vocabulary.STATIC, b, a) == "In"
                     for index, a in enumerate(holders) for b in holders[index + 1:])
        yield (vocabulary.STATIC, obj, holders[0], not nested,
               f"{obj} In several containers {sorted(holders)} that are not nested")


def _hand_moving_together_implies_contact(frame, history, monitor):
    for estimate in frame.by_name.get(vocabulary.DYNAMIC, ()):
        if estimate.value not in ("MT", "FMT") or not monitor.is_hand_pair(estimate.subject, estimate.object):
            continue
        recent = [view.value(vocabulary.CONTACT, estimate.subject, estimate.object)
                  for view in history if view.frame_index > frame.frame_index - monitor.window]
        if all(value == _UNK for value in recent):
            continue
        yield (vocabulary.DYNAMIC, estimate.subject, estimate.object, _T not in recent,
               f"{estimate.value}({estimate.subject}, {estimate.object}) without contact in the last "
               f"{monitor.window} frames")


def _containment_implies_contact_or_grasp(frame, history, monitor):
    grasped = {e.object for e in frame.with_value(vocabulary.GRASP, _T)}
    for inside in frame.with_value(vocabulary.STATIC, "In"):
        contact = frame.value(vocabulary.CONTACT, inside.subject, inside.object)
        if contact == _UNK and inside.subject not in grasped:
            continue
        yield (vocabulary.STATIC, inside.subject, inside.object, contact != _T and inside.subject not in grasped,
               f"In({inside.subject}, {inside.object}) without contact and without a grasp")


def _grasp_implies_contact(frame, history, monitor):
    for grasp in frame.with_value(vocabulary.GRASP, _T):
        contact = frame.value(vocabulary.CONTACT, grasp.subject, grasp.object)
        if contact != _UNK:
            yield (vocabulary.GRASP, grasp.subject, grasp.object, contact != _T,
                   f"grasp({grasp.subject}, {grasp.object}) with contact {contact}")


def _release_excludes_grasp(frame, history, monitor):
    for release in frame.with_value(vocabulary.RELEASE, _T):
        grasp = frame.value(vocabulary.GRASP, release.subject, release.object)
        if grasp != _UNK:
            yield (vocabulary.RELEASE, release.subject, release.object, grasp == _T,
                   f"release and grasp({release.subject}, {release.object}) on the same frame")


def _support_implies_contact(frame, history, monitor):
    for support in frame.with_value(vocabulary.STATIC, "Sup"):
        contact = frame.value(vocabulary.CONTACT, support.subject, support.object)
        if contact != _UNK:
            yield (vocabulary.STATIC, support.subject, support.object, contact != _T,
                   f"Sup({support.subject}, {support.object}) with contact {contact}")


RULES: tuple[LogicRule, ...] = (
    LogicRule("release_after_grasp", "precedence", INDEPENDENT, vocabulary.RELEASE,
              "release(h,o) needs grasp(h,o) within the last `memory` frames", _release_after_grasp),
    LogicRule("in_asymmetric", "exclusion", INDEPENDENT, vocabulary.STATIC,
              "In(a,b) and In(b,a) never together", _asymmetric("In")),
    LogicRule("support_asymmetric", "exclusion", INDEPENDENT, vocabulary.STATIC,
              "Sup(a,b) and Sup(b,a) never together", _asymmetric("Sup")),
    LogicRule("in_excludes_support_elsewhere", "exclusion", INDEPENDENT, vocabulary.STATIC,
              "an object In a container is not Sup on another entity", _in_excludes_support_elsewhere),
    LogicRule("single_container", "cardinality", INDEPENDENT, vocabulary.STATIC,
              "an object is In at most one container (unless nested)", _single_container),
    LogicRule("hand_moving_together_implies_contact", "co-occurrence", INDEPENDENT, vocabulary.DYNAMIC,
              "hand-object MT/FMT needs contact T within the window", _hand_moving_together_implies_contact),
    LogicRule("containment_implies_contact_or_grasp", "co-occurrence", INDEPENDENT, vocabulary.STATIC,
              "In(o,c) needs contact(o,c) = T or a grasp of o", _containment_implies_contact_or_grasp),
    LogicRule("grasp_implies_contact", "co-occurrence", CONSISTENCY, vocabulary.GRASP,
              "grasp(h,o) needs contact(h,o) = T", _grasp_implies_contact),
    LogicRule("release_excludes_grasp", "exclusion", CONSISTENCY, vocabulary.RELEASE,
              "release and grasp of a pair never on the same frame", _release_excludes_grasp),
    LogicRule("support_implies_contact", "co-occurrence", CONSISTENCY, vocabulary.STATIC,
              "Sup(a,b) needs contact(a,b) = T", _support_implies_contact),
)
RULES_BY_NAME = {rule.name: rule for rule in RULES}


def rules_of(group: str | None) -> tuple[LogicRule, ...]:
    """The rules of one group (INDEPENDENT / CONSISTENCY), or all of them for None."""
    if group not in (None, INDEPENDENT, CONSISTENCY):
        raise ValueError(f"unknown rule group {group!r}; expected {INDEPENDENT!r}, {CONSISTENCY!r} or None")
    return tuple(rule for rule in RULES if group is None or rule.group == group)


class LogicMonitor:
    """Checks the rules frame by frame; update / reset / compute like the rolling metrics.

    rules: the rules to check (default: the independent group).
    hands: track ids of hands; the subjects of grasp / release / active_hand estimates are
        recognised as hands too.
    memory: frames back that precedence rules look (release_after_grasp).
    window: frames of the co-occurrence window (hand_moving_together_implies_contact), the
        extractor's window.
    rate_window: frames over which `compute` counts checks and violations and `violations` keeps
        them (None: all frames; a live monitor sets it, so its memory stays bounded however long it runs).
    """

    def __init__(self, rules: Sequence[LogicRule] | None = None, memory: int = 15, window: int = 5,
                 rate_window: int | None = None, hands: Iterable[int] = ()) -> None:
        if memory < 1 or window < 1 or (rate_window is not None and rate_window < 1):
            raise ValueError(f"memory, window and rate_window must be >= 1 frame, got {memory}, {window}, "
                             f"{rate_window}")
        self.rules = tuple(rules) if rules is not None else rules_of(INDEPENDENT)
        self.memory = memory
        self.window = window
        self.rate_window = rate_window
        self._declared_hands = set(hands)
        self.reset()

    def reset(self) -> None:
        self._history: deque[FrameView] = deque(maxlen=max(self.memory, self.window) + 1)
        self._counts: deque[tuple[int, dict[str, tuple[int, int]]]] = deque()
        self._hands = set(self._declared_hands)
        #: the violations of the frames in the rate window, oldest first
        self.violations: deque[Violation] = deque()

    def is_hand_pair(self, subject: int, obj: int) -> bool:
        return subject in self._hands or obj in self._hands

    def update(self, frame_index: int, estimates: Iterable[PredicateEstimate],
               keys: Iterable[tuple[str, int, int]] | None = None) -> list[Violation]:
        """Check one frame; returns its violations (also appended to `violations`, which drops those
        older than the rate window). keys: the estimates' canonical keys, if known."""
        frame = FrameView(int(frame_index), estimates, keys)
        if self._history and frame.frame_index <= self._history[-1].frame_index:
            raise ValueError(f"logic monitor: frame {frame.frame_index} after frame "
                             f"{self._history[-1].frame_index}; frames must come in increasing order")
        for name in (vocabulary.GRASP, vocabulary.RELEASE, vocabulary.ACTIVE_HAND):
            self._hands.update(e.subject for e in frame.by_name.get(name, ()))
        self._history.append(frame)
        history = list(self._history)
        found: list[Violation] = []
        counts: dict[str, tuple[int, int]] = {}
        for rule in self.rules:
            for predicate, subject, obj, violated, detail in rule.check(frame, history, self):
                checks, broken = counts.get(rule.name, (0, 0))
                counts[rule.name] = (checks + 1, broken + int(violated))
                if violated:
                    found.append(Violation(frame.frame_index, rule.name, predicate, subject, obj, detail))
        self._counts.append((frame.frame_index, counts))
        self.violations.extend(found)
        if self.rate_window is not None:
            oldest_kept = frame.frame_index - self.rate_window
            while self._counts and self._counts[0][0] <= oldest_kept:
                self._counts.popleft()
            while self.violations and self.violations[0].frame_index <= oldest_kept:
                self.violations.popleft()
        return found

    def rule_counts(self) -> dict[str, tuple[int, int]]:
        """rule -> (checks, violations) over the rate window."""
        totals: dict[str, tuple[int, int]] = {rule.name: (0, 0) for rule in self.rules}
        for _, counts in self._counts:
            for name, (checks, broken) in counts.items():
                total_checks, total_broken = totals[name]
                totals[name] = (total_checks + checks, total_broken + broken)
        return totals

    def compute(self) -> dict[str, float]:
        """predicate -> violation rate over the rate window (NaN when none of its rules was checked)."""
        per_predicate: dict[str, tuple[int, int]] = {}
        by_name = {rule.name: rule for rule in self.rules}
        for name, (checks, broken) in self.rule_counts().items():
            predicate = by_name[name].predicate
            total_checks, total_broken = per_predicate.get(predicate, (0, 0))
            per_predicate[predicate] = (total_checks + checks, total_broken + broken)
        return {predicate: (broken / checks if checks else float("nan"))
                for predicate, (checks, broken) in per_predicate.items()}


def check_sequence(frames: Iterable[tuple[int, Iterable[PredicateEstimate]]],
                   rules: Sequence[LogicRule] | None = None, memory: int = 15, window: int = 5,
                   hands: Iterable[int] = ()) -> tuple[list[Violation], dict[str, float]]:
    """All violations of a whole sequence and the violation rate per predicate."""
    monitor = LogicMonitor(rules, memory=memory, window=window, hands=hands)
    violations: list[Violation] = []
    for frame_index, estimates in frames:
        violations.extend(monitor.update(frame_index, estimates))
    return violations, monitor.compute()
