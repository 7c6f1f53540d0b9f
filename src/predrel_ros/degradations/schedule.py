"""Which condition (kind, severity) applies at which frame: constant, sweep, or explicit segments.

A schedule is a pure function of the frame index, so a replay, an offline evaluation and a live node
that share a schedule degrade the same frames the same way. A node changes the condition at runtime
by swapping the schedule of its `ScheduledDegrader` (e.g. from a parameter callback); frames already
published are not affected.

Text form (ROS parameters, command line):
    none                        clean
    blur:3                      constant condition
    sweep:blur:30               severities 0..5 of blur, 30 frames each, repeating
    sweep:blur,occlusion:30     all severities of blur, then of occlusion, repeating
    sweep:all:30:1,3,5          every kind at severities 1, 3 and 5
    segments:0=none,100=blur:2,200=occlusion:4
                                explicit: a condition from each first frame on (clean before the first)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Sequence

from predrel_ros.degradations.degrader import Degrader
from predrel_ros.degradations.options import DegradationOptions
from predrel_ros.degradations.table import (
    DEFAULT_TABLE,
    KINDS,
    NONE,
    SEVERITIES,
    ParameterTable,
    check_kind,
    check_severity,
)


@dataclass(frozen=True)
class Condition:
    """A degradation kind at one severity (kind "none" only at severity 0)."""

    kind: str
    severity: int

    def __post_init__(self) -> None:
        check_kind(self.kind)
        object.__setattr__(self, "severity", check_severity(self.severity))
        if self.kind == NONE and self.severity != 0:
            raise ValueError(f"severity must be 0 for kind 'none'; got {self.severity}")


CLEAN = Condition(NONE, 0)


class Schedule(Protocol):
    def condition_at(self, frame_index: int) -> Condition: ...


@dataclass(frozen=True)
class ConstantSchedule:
    condition: Condition

    def condition_at(self, frame_index: int) -> Condition:
        return self.condition


@dataclass(frozen=True)
class SweepSchedule:
    """Each severity for `period` frames, kind after kind, repeating, starting at `start_frame`.

    Frames before `start_frame` get the first condition.
    """

    kinds: tuple[str, ...]
    period: int
    severities: tuple[int, ...] = SEVERITIES
    start_frame: int = 0

    def __post_init__(self) -> None:
        kinds = tuple(self.kinds)
        if not kinds:
            raise ValueError("sweep: kinds must not be empty")
        for kind in kinds:
            check_kind(kind, allow_none=False)
        severities = tuple(check_severity(s) for s in self.severities)
        if not severities:
            raise ValueError("sweep: severities must not be empty")
        if isinstance(self.period, bool) or not isinstance(self.period, int) or self.period < 1:
            raise ValueError(f"sweep: period must be an integer >= 1 frame, got {self.period!r}")
        object.__setattr__(self, "kinds", kinds)
        object.__setattr__(self, "severities", severities)

    def condition_at(self, frame_index: int) -> Condition:
        step = max(0, frame_index - self.start_frame) // self.period
        kind = self.kinds[(step // len(self.severities)) % len(self.kinds)]
        return Condition(kind, self.severities[step % len(self.severities)])


@dataclass(frozen=True)
class SegmentSchedule:
    """(first_frame, condition) pairs: each condition holds from its first frame to the next one."""

    segments: tuple[tuple[int, Condition], ...]

    def __post_init__(self) -> None:
        segments = tuple((int(first), condition) for first, condition in self.segments)
        if not segments:
            raise ValueError("segments: at least one (first_frame, condition) is needed")
        firsts = [first for first, _ in segments]
        if firsts != sorted(set(firsts)):
            raise ValueError(f"segments: first frames must be strictly increasing, got {firsts}")
        object.__setattr__(self, "segments", segments)

    def condition_at(self, frame_index: int) -> Condition:
        current = CLEAN
        for first, condition in self.segments:
            if first > frame_index:
                break
            current = condition
        return current


def _integer(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{what} must be an integer, got {text.strip()!r}") from None


def parse_condition(text: str) -> Condition:
    """"none" or "KIND:SEVERITY", e.g. "blur:3"."""
    text = text.strip()
    if text == NONE:
        return CLEAN
    kind, sep, severity = text.partition(":")
    if not sep or not severity.strip().isdigit():
        raise ValueError(f"condition must be 'none' or KIND:SEVERITY (e.g. blur:3), got {text!r}")
    return Condition(kind.strip(), int(severity))


def parse_schedule(text: str, start_frame: int = 0) -> Schedule:
    """A schedule from its text form (see the module docstring); ValueError names what is wrong."""
    text = text.strip()
    head, _, rest = text.partition(":")
    try:
        if head == "sweep":
            parts = rest.split(":")
            if len(parts) not in (2, 3):
                raise ValueError("expected sweep:KINDS:PERIOD[:SEVERITIES]")
            kinds = KINDS if parts[0].strip() == "all" else tuple(k.strip() for k in parts[0].split(","))
            period = _integer(parts[1], "sweep period")
            severities = (tuple(_integer(s, "severity") for s in parts[2].split(",")) if len(parts) == 3
                          else SEVERITIES)
            return SweepSchedule(kinds, period, severities, start_frame)
        if head == "segments":
            segments = []
            for item in rest.split(","):
                first, sep, condition = item.partition("=")
                if not sep:
                    raise ValueError(f"segment {item!r} must be FIRST_FRAME=CONDITION")
                segments.append((_integer(first, "segment first frame"), parse_condition(condition)))
            return SegmentSchedule(tuple(segments))
        return ConstantSchedule(parse_condition(text))
    except ValueError as error:
        raise ValueError(f"schedule {text!r}: {error}") from None


class ScheduledDegrader:
    """The `Degrader` of each frame under a schedule that may be swapped at runtime."""

    def __init__(self, schedule: Schedule, seed: int = 0, table: ParameterTable = DEFAULT_TABLE,
                 options: DegradationOptions | None = None) -> None:
        self.schedule = schedule
        self.seed = seed
        self.table = table
        self.options = options if options is not None else DegradationOptions()
        self._degraders: dict[Condition, Degrader] = {}
        self.degrader_at(0)  # validates seed, table and options now rather than on the first frame

    def set_schedule(self, schedule: Schedule) -> None:
        self.schedule = schedule

    def degrader_at(self, frame_index: int) -> Degrader:
        condition = self.schedule.condition_at(frame_index)
        degrader = self._degraders.get(condition)
        if degrader is None:
            degrader = Degrader(condition.kind, condition.severity, self.seed, self.table, self.options)
            self._degraders[condition] = degrader
        return degrader


def conditions(kinds: Sequence[str] = KINDS, severities: Sequence[int] = SEVERITIES) -> list[Condition]:
    """Every kind x severity, in order (the offline sweep of paper 4.3)."""
    return [Condition(kind, severity) for kind in kinds for severity in severities]
