"""What the dashboard knows at one moment: the newest report, action, degradation and counters.

Records are plain values converted from messages by the dashboard node; `DashboardState` keeps the
newest of each and the few numbers the screen shows (frames seen, when each stream was last heard).
"""
from __future__ import annotations

import math
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Callable, Mapping

from predrel_ros.reliability.trust import ERROR, OK, STALE, WARN

#: trust level names in the order of their numbers in PredicateReliability / DiagnosticStatus
TRUST_LEVELS = (OK, WARN, ERROR, STALE)
#: ground-truth actions kept to compare with the recognised ones arriving later
GROUND_TRUTH_MEMORY = 600


def trust_name(level: int) -> str:
    return TRUST_LEVELS[level] if 0 <= level < len(TRUST_LEVELS) else f"level {level}"


@dataclass(frozen=True)
class Condition:
    """The degradation in effect: kind ("none" when clean) and severity 0..5."""

    kind: str
    severity: int

    @property
    def text(self) -> str:
        return "clean" if self.kind == "none" or self.severity == 0 else f"{self.kind} {self.severity}"

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.severity}"


CLEAN = Condition("none", 0)


@dataclass(frozen=True)
class GroupTrust:
    """One predicate group's entry of a reliability report."""

    group: str
    trust: str           # OK | WARN | ERROR | STALE
    prs: float = math.nan
    tpc_s: float = math.nan
    mean_confidence: float = math.nan
    samples: int = 0
    reason: str = ""


@dataclass(frozen=True)
class ReportView:
    frame_index: int
    reference_mode: str
    condition: Condition
    groups: Mapping[str, GroupTrust]


@dataclass(frozen=True)
class ActionView:
    frame_index: int
    primitive: str
    probability: float
    trusted: bool
    reason: str = ""


@dataclass(frozen=True)
class NodeStatus:
    """A node's newest /diagnostics status: level name, message, counters (key -> int)."""

    name: str
    level: str
    message: str
    counters: Mapping[str, int] = field(default_factory=dict)


class DashboardState:
    """The newest of everything, plus counts; `clock` is injectable for tests."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.started = clock()
        self.condition: Condition | None = None
        self.reports: dict[str, ReportView] = {}
        self.action: ActionView | None = None
        self.ground_truth: OrderedDict[int, str] = OrderedDict()
        self.nodes: dict[str, NodeStatus] = {}
        self.frames: dict[str, int] = {}
        self.last_heard: dict[str, float] = {}
        #: the frame_index last heard per stream (the dashboard node keeps each stream in its order)
        self.latest: dict[str, int] = {}

    @property
    def newest_frame(self) -> int:
        """The newest frame the streams are at (-1: none heard)."""
        return max(self.latest.values(), default=-1)

    def _heard(self, stream: str, frame_index: int | None = None) -> None:
        self.frames[stream] = self.frames.get(stream, 0) + 1
        self.last_heard[stream] = self.clock()
        if frame_index is not None:
            self.latest[stream] = int(frame_index)

    def on_degradation(self, condition: Condition) -> None:
        self.condition = condition
        self.last_heard["degradation"] = self.clock()

    def on_report(self, label: str, report: ReportView) -> None:
        self.reports[label] = report
        self._heard(label, report.frame_index)

    def on_action(self, action: ActionView) -> None:
        self.action = action
        self._heard("action", action.frame_index)

    def on_ground_truth_action(self, frame_index: int, primitive: str) -> None:
        self.ground_truth[int(frame_index)] = primitive
        while len(self.ground_truth) > GROUND_TRUTH_MEMORY:
            self.ground_truth.popitem(last=False)
        self._heard("ground_truth/action", frame_index)

    def on_predicates(self, stream: str, frame_index: int) -> None:
        self._heard(stream, frame_index)

    def on_node_status(self, status: NodeStatus) -> None:
        self.nodes[status.name] = status

    def ground_truth_of_action(self) -> str | None:
        """The true primitive of the frame of the newest recognised action, when known."""
        return None if self.action is None else self.ground_truth.get(self.action.frame_index)

    def seconds_since(self, stream: str) -> float | None:
        heard = self.last_heard.get(stream)
        return None if heard is None else self.clock() - heard

    def elapsed(self) -> float:
        return self.clock() - self.started
