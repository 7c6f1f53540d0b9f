"""predrel_ros/ActionEstimate <-> the manipulation primitive of a frame, for rclpy and rosbags
messages alike."""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from predrel_ros.core.frame import PRIMITIVE_LABELS
from predrel_ros.ros.messages.fields import header_or_default
from predrel_ros.ros.messages.message_classes import ACTION_ESTIMATE, RCLPY, Message, MessageClasses


def action_to_msg(frame_index: int, class_names: Sequence[str], probabilities: Sequence[float],
                  trusted: bool = True, reason: str = "", header: Message | None = None, *,
                  classes: MessageClasses = RCLPY) -> Message:
    """ActionEstimate of a probability per class; the primitive is the most probable class."""
    probabilities = np.asarray(probabilities, dtype=np.float64)
    if len(class_names) == 0 or probabilities.shape != (len(class_names),):
        raise ValueError(f"ActionEstimate needs one probability per class name, got {len(class_names)} names "
                         f"and {probabilities.shape} probabilities")
    if not np.all(np.isfinite(probabilities)) or probabilities.min() < 0:
        raise ValueError(f"ActionEstimate probabilities must be finite and >= 0, got {probabilities.tolist()}")
    best = int(np.argmax(probabilities))
    return classes.build(
        ACTION_ESTIMATE, header=header_or_default(header, classes), frame_index=int(frame_index),
        primitive=class_names[best], probability=float(probabilities[best]), class_names=list(class_names),
        probabilities=classes.sequence(probabilities, np.float32), trusted=bool(trusted), reason=reason)


def ground_truth_action_to_msg(primitive: str, frame_index: int, header: Message | None = None, *,
                               classes: MessageClasses = RCLPY) -> Message:
    """The ActionEstimate of a known primitive: probability 1 over PRIMITIVE_LABELS, trusted."""
    if primitive not in PRIMITIVE_LABELS:
        raise ValueError(f"unknown primitive {primitive!r}; expected one of {PRIMITIVE_LABELS}")
    return action_to_msg(frame_index, PRIMITIVE_LABELS, [float(label == primitive) for label in PRIMITIVE_LABELS],
                         header=header, classes=classes)


def primitive_from_msg(msg: Message) -> str:
    """The primitive an ActionEstimate names, if it is one of PRIMITIVE_LABELS, else ValueError."""
    if msg.primitive not in PRIMITIVE_LABELS:
        raise ValueError(f"ActionEstimate names unknown primitive {msg.primitive!r}; expected one of "
                         f"{PRIMITIVE_LABELS}")
    return msg.primitive


def check_action_estimate(msg: Message) -> None:
    """ValueError unless an ActionEstimate is consistent: a non-empty primitive that is the most
    probable of its class names, probabilities finite in [0, 1] summing to 1, one per class name,
    and `probability` the primitive's."""
    names, probabilities = list(msg.class_names), np.asarray(msg.probabilities, dtype=np.float64)
    if not names or probabilities.shape != (len(names),):
        raise ValueError(f"ActionEstimate has {len(names)} class names and {probabilities.size} probabilities; "
                         f"expected one probability per class name")
    if not np.all(np.isfinite(probabilities)) or probabilities.min() < 0 or probabilities.max() > 1:
        raise ValueError(f"ActionEstimate probabilities must lie in [0, 1], got {probabilities.tolist()}")
    if abs(probabilities.sum() - 1.0) > 1e-3:
        raise ValueError(f"ActionEstimate probabilities sum to {probabilities.sum():.4f}, not 1")
    best = int(np.argmax(probabilities))
    if msg.primitive != names[best] or not math.isclose(float(msg.probability), probabilities[best], abs_tol=1e-6):
        raise ValueError(f"ActionEstimate primitive {msg.primitive!r} with probability {msg.probability} is not "
                         f"the most probable class ({names[best]!r}, {probabilities[best]:.4f})")
