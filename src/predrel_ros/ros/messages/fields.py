"""What every message conversion shares: std_msgs/Header <-> nanoseconds, and ROS string fields."""
from __future__ import annotations

from predrel_ros.ros.messages.message_classes import HEADER, RCLPY, TIME, Message, MessageClasses


def stamp_to_ns(header: Message) -> int:
    """header.stamp in nanoseconds."""
    return int(header.stamp.sec) * 1_000_000_000 + int(header.stamp.nanosec)


def header_at(stamp_ns: int, frame_id: str, *, classes: MessageClasses = RCLPY) -> Message:
    """std_msgs/Header with the stamp `stamp_ns` (nanoseconds) and `frame_id`."""
    sec, nanosec = divmod(int(stamp_ns), 1_000_000_000)
    return classes.build(HEADER, stamp=classes.build(TIME, sec=sec, nanosec=nanosec), frame_id=frame_id)


def header_or_default(header: Message | None, classes: MessageClasses) -> Message:
    """`header`, or an unset one (stamp 0, no frame_id) for a message built without one."""
    return header if header is not None else header_at(0, "", classes=classes)


def check_ros_string(value: str, field: str) -> None:
    """ValueError unless `value` can travel as a ROS string: UTF-8 without NUL characters."""
    if "\x00" in value:
        raise ValueError(f"{field} {value!r} contains a NUL character, which ROS strings cannot carry")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ValueError(f"{field} {value!r} is not valid UTF-8 text: {error.reason}") from None
