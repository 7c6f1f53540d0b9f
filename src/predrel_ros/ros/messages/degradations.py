"""predrel_ros/DegradationState <-> the degradation in effect for a frame (kind, severity, seed,
parameters), for rclpy and rosbags messages alike."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from predrel_ros.degradations.table import ALL_KINDS, MAX_SEVERITY, NONE
from predrel_ros.ros.messages.message_classes import DEGRADATION_STATE, RCLPY, Message, MessageClasses


@dataclass(frozen=True)
class DegradationInfo:
    """The content of a DegradationState message."""

    kind: str
    severity: int
    seed: int
    parameters: dict[str, float]


def degradation_to_msg(kind: str, severity: int, seed: int = 0, parameters: Mapping[str, float] | None = None,
                       *, classes: MessageClasses = RCLPY) -> Message:
    if not kind:
        raise ValueError(f"DegradationState.kind must be a kind name or {NONE!r}, got ''")
    if not 0 <= int(severity) <= MAX_SEVERITY:
        raise ValueError(f"DegradationState.severity must lie in 0..{MAX_SEVERITY}, got {severity}")
    if not 0 <= int(seed) < 2**32:
        raise ValueError(f"DegradationState.seed must fit in uint32, got {seed}")
    parameters = dict(parameters or {})
    return classes.build(
        DEGRADATION_STATE, kind=kind, severity=int(severity), seed=int(seed), parameter_names=list(parameters),
        parameter_values=classes.sequence([float(v) for v in parameters.values()], np.float64))


def degradation_or_none(degradation: Message | None, classes: MessageClasses) -> Message:
    """`degradation`, or the DegradationState of a clean frame (kind none)."""
    return degradation if degradation is not None else degradation_to_msg(NONE, 0, classes=classes)


def degradation_from_msg(msg: Message) -> DegradationInfo:
    """Content of `msg`; an unset kind ('') reads as no degradation."""
    names: Sequence[str] = list(msg.parameter_names)
    values = [float(v) for v in msg.parameter_values]
    if len(names) != len(values):
        raise ValueError(f"DegradationState.parameter_names has {len(names)} entries but "
                         f"parameter_values has {len(values)}")
    if msg.severity > MAX_SEVERITY:
        raise ValueError(f"DegradationState.severity must lie in 0..{MAX_SEVERITY}, got {msg.severity}")
    return DegradationInfo(kind=msg.kind or NONE, severity=int(msg.severity), seed=int(msg.seed),
                           parameters=dict(zip(names, values)))


def checked_degradation_from_msg(msg: Message) -> DegradationInfo:
    """Content of `msg` (`degradation_from_msg`) if its kind is one of the project's degradation
    kinds (or none), else ValueError: what a node checks on the frames it receives."""
    info = degradation_from_msg(msg)
    if info.kind not in ALL_KINDS + (NONE,):
        raise ValueError(f"DegradationState.kind {info.kind!r} is not one of {(NONE,) + ALL_KINDS}")
    if info.kind == NONE and info.severity != 0:
        raise ValueError(f"DegradationState.kind none must have severity 0, got {info.severity}")
    return info
