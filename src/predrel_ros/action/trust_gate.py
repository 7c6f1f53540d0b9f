"""When to assert a recognized primitive: the action node's trust gate (docs/design.md, runtime trust).

An estimate is untrusted when
- its probability is below `min_probability`, or
- a predicate the decision relies on is untrusted: its trust level (from `reliability.trust.
  TrustAssessor`, keyed by predicate name; or of one of its streams; or of its group) is one of
  `untrusted_levels`, or it has no assessment while `require_trust` is set.
The predicates a decision relies on are those whose share of the positive contributions to the
winning class's margin (`PrimitiveModel.reliance`) is at least `reliance_share`. A predicate the
decision does not rely on may be untrusted without touching the estimate.

`reason` says why, for people: "relies on contact (62%, ERROR: tpc_s 0.62 < 0.70); probability
0.41 < 0.50". Settings load from `config/action.yaml` (section "action").
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from predrel_ros.core.config_io import ConfigFile
from predrel_ros.predicates import vocabulary
from predrel_ros.reliability.trust import ERROR, LEVELS, OK

STALE = "STALE"   # PredicateReliability.msg: not enough samples to judge
TRUST_LEVELS = LEVELS + (STALE,)


@dataclass
class ActionConfig(ConfigFile):
    """Settings of the action recognizer and its trust gate.

    model: model file (empty: the packaged model, downstream/models/primitive-recognizer.json).
    min_probability: an estimate below this probability is untrusted.
    reliance_share: a predicate whose share of the decision's positive contributions is at least
        this is relied on.
    untrusted_levels: trust levels that make a relied-on predicate untrusted (OK, WARN, ERROR, STALE).
    require_trust: when trust levels are given, a relied-on predicate without one is untrusted.
    """

    model: str = ""
    min_probability: float = 0.5
    reliance_share: float = 0.15
    untrusted_levels: tuple[str, ...] = (ERROR,)
    require_trust: bool = False

    NAME = "action"

    def __post_init__(self) -> None:
        for name in ("min_probability", "reliance_share"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must lie in [0, 1], got {value}")
        self.untrusted_levels = tuple(self.untrusted_levels)
        unknown = [level for level in self.untrusted_levels if level not in TRUST_LEVELS]
        if unknown:
            raise ValueError(f"untrusted_levels: unknown level(s) {unknown}; expected some of {list(TRUST_LEVELS)}")
        if OK in self.untrusted_levels:
            raise ValueError("untrusted_levels must not contain OK")


def _level_and_reasons(entry: Any) -> tuple[str, list[str]]:
    """A trust entry: a level string, or an object with .level (and .reasons), e.g. TrustAssessment."""
    level = entry if isinstance(entry, str) else getattr(entry, "level", None)
    if level not in TRUST_LEVELS:
        raise ValueError(f"trust level must be one of {list(TRUST_LEVELS)}, got {entry!r}")
    reasons = [] if isinstance(entry, str) else list(getattr(entry, "reasons", []) or [])
    return level, reasons


def _entries_of(name: str, trust: Mapping[Any, Any]) -> list[tuple[str, Any]]:
    """(label, entry) of the trust entries that speak for predicate `name`: its own entry, else the
    entries of its streams (keys (name, subject, object)), else its group's entry."""
    if name in trust:
        return [(name, trust[name])]
    streams = [(f"{key[0]}({key[1]}, {key[2]})", entry) for key, entry in trust.items()
               if isinstance(key, tuple) and key and key[0] == name]
    if streams:
        return sorted(streams, key=lambda item: item[0])
    group = vocabulary.group_of(name)
    return [(group, trust[group])] if group in trust else []


def trust_decision(reliance: Mapping[str, float], probability: float, trust: Mapping[Any, Any] | None,
                   config: ActionConfig) -> tuple[bool, str, tuple[str, ...]]:
    """(trusted, reason, relied-on predicates) of one estimate.

    reliance: predicate -> share of the decision (`PrimitiveModel.reliance`).
    trust: level (or TrustAssessment) per predicate name, per group name, or per stream
        (name, subject, object); a predicate's own entry comes first, then its streams' (any
        untrusted stream makes it untrusted), then its group's. None: no reliability information."""
    relied = tuple(name for name, share in sorted(reliance.items(), key=lambda item: -item[1])
                   if share >= config.reliance_share)
    problems: list[str] = []
    if trust is not None:
        for name in relied:
            share = f"{reliance[name]:.0%}"
            entries = _entries_of(name, trust)
            if not entries and config.require_trust:
                problems.append(f"relies on {name} ({share}), which has no trust assessment")
            for label, entry in entries:
                level, reasons = _level_and_reasons(entry)
                if level in config.untrusted_levels:
                    source = "" if label == name else f"{label} "
                    detail = f"{source}{level}: {'; '.join(reasons)}" if reasons else f"{source}{level}"
                    problems.append(f"relies on {name} ({share}, {detail})")
                    break
    if probability < config.min_probability:
        problems.append(f"probability {probability:.2f} < {config.min_probability:.2f}")
    return not problems, "; ".join(problems), relied
