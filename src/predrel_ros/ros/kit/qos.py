"""QoS of predrel_ros topics, and clear logs when a peer's QoS prevents a connection.

Images: the `image_qos` parameter with `image_qos_depth`; publishers keep `image_qos_depth` frames
(default 5), subscribers at most 2, because they process only the newest frame. The default,
`matched`, is image_pipeline's rule: a subscriber takes the reliability and durability of the
topic's publishers when it starts (best effort if any of them is), and the sensor-data profile (best
effort, which connects to every publisher) when none is up yet; publishers use sensor_data. Other
streams (FrameInfo, entities, predicates): reliable, keep last 50 (`STREAM_QOS`). The current
degradation: reliable + transient local, depth 1 (`LATCHED_QOS`), so a late subscriber (a dashboard)
still gets it.

"No output" is the most common complaint about ROS perception nodes, and the usual cause is a
reliable subscriber on a best-effort camera: the two never connect and nothing says so. Every
endpoint created through `create_publisher` / `create_subscription` here logs an incompatible-QoS
event as an error naming the topic, the policy, both sides' settings and the parameter to change.
"""
from __future__ import annotations

from typing import Callable

from rclpy.event_handler import PublisherEventCallbacks, SubscriptionEventCallbacks
from rclpy.qos import (
    DurabilityPolicy,
    HistoryPolicy,
    QoSPolicyKind,
    QoSProfile,
    ReliabilityPolicy,
    qos_profile_sensor_data,
    qos_profile_system_default,
)

from predrel_ros.ros.kit.parameter_specs import ParameterSpec

#: image_qos values
SENSOR_DATA, RELIABLE, BEST_EFFORT, SYSTEM_DEFAULT = "sensor_data", "reliable", "best_effort", "system_default"
MATCHED = "matched"
IMAGE_QOS_CHOICES = (MATCHED, SENSOR_DATA, RELIABLE, BEST_EFFORT, SYSTEM_DEFAULT)
#: the most frames an image subscriber keeps: it processes only the newest
SUBSCRIBER_IMAGE_DEPTH = 2

STREAM_QOS = QoSProfile(depth=50, reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST)
LATCHED_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)

#: why QoS parameters are read-only
QOS_FIXED = "a topic's QoS is fixed when its endpoint is created"
IMAGE_QOS_PARAMETERS = (
    ParameterSpec("image_qos", MATCHED,
                  "QoS of the image, depth and camera_info topics: matched (subscribers take the publishers' "
                  "reliability and durability at start, else sensor_data; publishers sensor_data), "
                  "sensor_data / best_effort (best effort, what most camera drivers publish), reliable, or "
                  "system_default; a reliable subscriber never connects to a best-effort publisher",
                  choices=IMAGE_QOS_CHOICES, fixed_because=QOS_FIXED),
    ParameterSpec("image_qos_depth", 5, "history depth of image publishers (subscribers keep at most "
                  f"{SUBSCRIBER_IMAGE_DEPTH}: they process the newest frame only)", minimum=1, maximum=100,
                  fixed_because=QOS_FIXED),
)


def matched_publisher_qos(node, topic: str) -> QoSProfile:
    """image_pipeline's rule: the reliability and durability the publishers of `topic` offer (best
    effort / volatile if any of them does), else the sensor-data profile."""
    try:
        publishers = node.get_publishers_info_by_topic(node.resolve_topic_name(topic))
    except Exception:  # a graph query that fails must not stop a node from starting
        publishers = []
    if not publishers:
        return qos_profile_sensor_data
    profiles = [info.qos_profile for info in publishers]
    best_effort = any(p.reliability == ReliabilityPolicy.BEST_EFFORT for p in profiles)
    volatile = any(p.durability == DurabilityPolicy.VOLATILE for p in profiles)
    return QoSProfile(depth=qos_profile_sensor_data.depth, history=HistoryPolicy.KEEP_LAST,
                      reliability=ReliabilityPolicy.BEST_EFFORT if best_effort else ReliabilityPolicy.RELIABLE,
                      durability=DurabilityPolicy.VOLATILE if volatile else DurabilityPolicy.TRANSIENT_LOCAL)


def image_qos(name: str, depth: int, subscriber: bool = False, node=None, topic: str = "") -> QoSProfile:
    """The QoS profile of image topics for the `image_qos` parameter value `name` (`matched`: the
    publishers' of `topic` as `node` sees them, for a subscriber; sensor_data otherwise)."""
    if name not in IMAGE_QOS_CHOICES:
        raise ValueError(f"image_qos {name!r} is not one of {', '.join(IMAGE_QOS_CHOICES)}")
    if name == MATCHED:
        base = matched_publisher_qos(node, topic) if subscriber and node is not None else qos_profile_sensor_data
    else:
        base = {SENSOR_DATA: qos_profile_sensor_data, SYSTEM_DEFAULT: qos_profile_system_default}.get(name)
    if base is None:
        reliability = ReliabilityPolicy.RELIABLE if name == RELIABLE else ReliabilityPolicy.BEST_EFFORT
        base = QoSProfile(depth=depth, reliability=reliability, durability=DurabilityPolicy.VOLATILE)
    depth = min(depth, SUBSCRIBER_IMAGE_DEPTH) if subscriber else depth
    return QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=depth, reliability=base.reliability,
                      durability=base.durability, deadline=base.deadline, lifespan=base.lifespan,
                      liveliness=base.liveliness, liveliness_lease_duration=base.liveliness_lease_duration)


def describe(qos: QoSProfile) -> str:
    """"best_effort, volatile, keep_last 5" and the like."""
    history = qos.history.name.lower() + (f" {qos.depth}" if qos.history == HistoryPolicy.KEEP_LAST else "")
    return f"{qos.reliability.name.lower()}, {qos.durability.name.lower()}, {history}"


def _hint(policy: QoSPolicyKind, topic: str, subscriber: bool) -> str:
    if policy == QoSPolicyKind.RELIABILITY:
        if subscriber:
            return (f"this node subscribes {topic} as reliable but the publisher sends best effort: set "
                    f"this node's image_qos to sensor_data or best_effort, or make the publisher reliable")
        return (f"a subscriber of {topic} asks for reliable delivery but this node publishes best effort: "
                f"set this node's image_qos to reliable, or make the subscriber best effort "
                f"(e.g. `ros2 topic echo --qos-reliability best_effort`, rviz: Reliability Policy)")
    if policy == QoSPolicyKind.DURABILITY:
        return "one side asks for transient_local durability the other does not offer: match the durability"
    return "make both sides use the same setting for this policy"


def _peers(node, topic: str, subscriber: bool) -> str:
    try:
        infos = (node.get_publishers_info_by_topic if subscriber else node.get_subscriptions_info_by_topic)(topic)
    except Exception:  # graph queries fail while the context shuts down
        return ""
    peers = [f"{(info.node_namespace.rstrip('/') + '/' + info.node_name)} ({describe(info.qos_profile)})"
             for info in infos]
    side = "publishers" if subscriber else "subscribers"
    return f"; {side} of this topic: {', '.join(peers)}" if peers else ""


def _incompatible_logger(node, topic: str, ours: QoSProfile, subscriber: bool,
                         on_event: Callable[[str], None] | None) -> Callable:
    def log(info) -> None:
        policy = QoSPolicyKind(int(info.last_policy_kind))
        role = "subscription" if subscriber else "publisher"
        resolved = node.resolve_topic_name(topic)
        node.get_logger().error(
            f"QoS mismatch: the {role} {resolved} ({describe(ours)}) cannot connect to "
            f"{info.total_count} {'publisher' if subscriber else 'subscriber'}(s): incompatible "
            f"{policy.name.lower()}. {_hint(policy, resolved, subscriber)}"
            f"{_peers(node, resolved, subscriber)}")
        if on_event is not None:
            on_event(topic)
    return log


def create_publisher(node, msg_type, topic: str, qos: QoSProfile,
                     on_incompatible: Callable[[str], None] | None = None):
    """node.create_publisher with incompatible-QoS events logged (and passed to on_incompatible)."""
    callbacks = PublisherEventCallbacks(incompatible_qos=_incompatible_logger(node, topic, qos, False, on_incompatible))
    return node.create_publisher(msg_type, topic, qos, event_callbacks=callbacks)


def create_subscription(node, msg_type, topic: str, callback: Callable, qos: QoSProfile,
                        on_incompatible: Callable[[str], None] | None = None, **kwargs):
    """node.create_subscription with incompatible-QoS events logged (and passed to on_incompatible)."""
    callbacks = SubscriptionEventCallbacks(
        incompatible_qos=_incompatible_logger(node, topic, qos, True, on_incompatible))
    return node.create_subscription(msg_type, topic, callback, qos, event_callbacks=callbacks, **kwargs)
