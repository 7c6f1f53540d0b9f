"""predrel_ros/Predicate and PredicateArray <-> `PredicateEstimate`s, for rclpy and rosbags messages
alike."""
from __future__ import annotations

from typing import Iterable

from predrel_ros.predicates.estimate import EVIDENCE_FACTORS, PredicateEstimate
from predrel_ros.ros.messages.degradations import degradation_or_none
from predrel_ros.ros.messages.fields import (
    MAX_PREDICATES_PER_MESSAGE,
    check_count,
    check_ros_string,
    header_or_default,
)
from predrel_ros.ros.messages.message_classes import PREDICATE, PREDICATE_ARRAY, RCLPY, Message, MessageClasses

#: evidence factor -> Predicate field
EVIDENCE_FIELDS = {factor: f"q_{factor}" for factor in EVIDENCE_FACTORS}


def predicate_to_msg(estimate: PredicateEstimate, *, classes: MessageClasses = RCLPY) -> Message:
    return classes.build(
        PREDICATE, name=estimate.name, group=estimate.group, subject=int(estimate.subject), object=int(estimate.object),
        value=estimate.value, code=int(estimate.code), confidence=float(estimate.confidence),
        **{field: float(estimate.evidence[factor]) for factor, field in EVIDENCE_FIELDS.items()})


def predicate_from_msg(msg: Message, frame_index: int = 0) -> PredicateEstimate:
    """The estimate of a Predicate message; ValueError when its code contradicts its value or an
    evidence factor is not in [0, 1] (NaN included)."""
    evidence = {factor: float(getattr(msg, field)) for factor, field in EVIDENCE_FIELDS.items()}
    outside = {EVIDENCE_FIELDS[f]: v for f, v in evidence.items() if not 0.0 <= v <= 1.0}
    if outside:
        raise ValueError(f"Predicate {msg.name}({msg.subject}, {msg.object}): evidence factors must lie in "
                         f"[0, 1], got {outside}")
    estimate = PredicateEstimate(
        name=msg.name, subject=int(msg.subject), object=int(msg.object), value=msg.value,
        confidence=float(msg.confidence), evidence=evidence,
        frame_index=int(frame_index), group=msg.group)
    if estimate.code != msg.code:
        raise ValueError(f"Predicate {msg.name}({msg.subject}, {msg.object}): code {msg.code} does not "
                         f"match value {msg.value!r} (code {estimate.code})")
    return estimate


def predicates_to_msg(estimates: Iterable[PredicateEstimate], *, frame_index: int, source: str,
                      header: Message | None = None, degradation: Message | None = None,
                      classes: MessageClasses = RCLPY) -> Message:
    check_ros_string(source, "PredicateArray.source")
    return classes.build(
        PREDICATE_ARRAY, header=header_or_default(header, classes), frame_index=int(frame_index), source=source,
        degradation=degradation_or_none(degradation, classes),
        predicates=[predicate_to_msg(estimate, classes=classes) for estimate in estimates])


def predicates_from_msg(msg: Message, max_predicates: int = MAX_PREDICATES_PER_MESSAGE) -> list[PredicateEstimate]:
    """The estimates of a PredicateArray; TooLarge beyond `max_predicates`, before any work."""
    check_count(len(msg.predicates), max_predicates, "PredicateArray.predicates", "max_predicates_per_message")
    estimates = []
    for i, predicate in enumerate(msg.predicates):
        try:
            estimates.append(predicate_from_msg(predicate, msg.frame_index))
        except ValueError as error:
            raise ValueError(f"PredicateArray.predicates[{i}]: {error}") from None
    return estimates
