"""What every message conversion shares: std_msgs/Header <-> nanoseconds, and ROS string fields."""
from __future__ import annotations

from predrel_ros.ros.messages.message_classes import HEADER, RCLPY, TIME, Message, MessageClasses


def stamp_to_ns(header: Message) -> int:
    """header.stamp in nanoseconds; ValueError for a stamp before 0 (no clock, ROS or simulated,
    reads negative) or nanoseconds beyond a second."""
    sec, nanosec = int(header.stamp.sec), int(header.stamp.nanosec)
    if sec < 0 or not 0 <= nanosec < 1_000_000_000:
        raise ValueError(f"header.stamp sec={sec} nanosec={nanosec}: expected sec >= 0 and nanosec < 10^9")
    return sec * 1_000_000_000 + nanosec


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


#: the largest image side a message may declare (CameraInfo, EntityArray): 16K sensors exist, a
#: 2^32-1 side is a bogus message whose masks nobody could allocate
MAX_IMAGE_SIDE = 16384
#: default bounds on the items of one message (nodes make them parameters)
MAX_ENTITIES_PER_MESSAGE = 256
MAX_PREDICATES_PER_MESSAGE = 16384


class TooLarge(ValueError):
    """A message with more items than the receiver's bound: refused before any work (counted
    `too_large`, not `malformed`: it may be well-formed, just more than this node takes)."""


def check_count(count: int, bound: int, what: str, parameter: str) -> None:
    """TooLarge when a message holds more than `bound` items."""
    if count > bound:
        raise TooLarge(f"{what} holds {count} items, more than {bound} (parameter {parameter})")


def check_image_size(width: int, height: int, what: str, allow_unset: bool = False) -> None:
    """ValueError unless 0 < width, height <= MAX_IMAGE_SIDE (0 x 0 accepted with allow_unset)."""
    width, height = int(width), int(height)
    if allow_unset and width == height == 0:
        return
    if not (0 < width <= MAX_IMAGE_SIDE and 0 < height <= MAX_IMAGE_SIDE):
        raise ValueError(f"{what} declares a {width}x{height} image; expected sides in 1..{MAX_IMAGE_SIDE}")
