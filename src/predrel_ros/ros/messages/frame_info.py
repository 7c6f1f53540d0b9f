"""predrel_ros/FrameInfo (what the replay and degrade nodes did with a frame) <-> its content, for
rclpy and rosbags messages alike."""
from __future__ import annotations

from dataclasses import dataclass

from predrel_ros.ros.messages.degradations import DegradationInfo, checked_degradation_from_msg
from predrel_ros.ros.messages.fields import stamp_to_ns
from predrel_ros.ros.messages.message_classes import FRAME_INFO, RCLPY, Message, MessageClasses

#: FrameInfo.action values (predrel_ros.degradations.FrameAction)
FRAME_ACTIONS = ("deliver", "repeat", "drop")


@dataclass(frozen=True)
class FrameInfoData:
    """The content of a FrameInfo message."""

    stamp_ns: int
    frame_id: str
    frame_index: int
    source: str
    action: str
    source_index: int
    degradation: DegradationInfo
    degradation_msg: Message  # the DegradationState as received, to pass on unchanged (EntityArray.degradation)


def frame_info_to_msg(header: Message, frame_index: int, source: str, action: str, source_index: int,
                      degradation: Message, *, classes: MessageClasses = RCLPY) -> Message:
    if action not in FRAME_ACTIONS:
        raise ValueError(f"FrameInfo.action must be one of {FRAME_ACTIONS}, got {action!r}")
    return classes.build(FRAME_INFO, header=header, frame_index=int(frame_index), source=source, action=action,
                         source_index=int(source_index), degradation=degradation)


def frame_info_from_msg(msg: Message) -> FrameInfoData:
    """The content of `msg`, validated (action, degradation kind and severity), else ValueError."""
    if msg.action not in FRAME_ACTIONS:
        raise ValueError(f"FrameInfo.action must be one of {FRAME_ACTIONS}, got {msg.action!r}")
    degradation = checked_degradation_from_msg(msg.degradation)
    return FrameInfoData(stamp_ns=stamp_to_ns(msg.header), frame_id=msg.header.frame_id,
                         frame_index=int(msg.frame_index), source=msg.source, action=msg.action,
                         source_index=int(msg.source_index), degradation=degradation,
                         degradation_msg=msg.degradation)
