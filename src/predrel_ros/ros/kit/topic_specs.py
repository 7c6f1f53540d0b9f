"""What a node publishes and subscribes, as data: docs/nodes.md tables are generated from it and tests
compare it with the node's real endpoints, so the documentation cannot drift (no rclpy here)."""
from __future__ import annotations

from dataclasses import dataclass

PUBLISHES, SUBSCRIBES = "publishes", "subscribes"


@dataclass(frozen=True)
class TopicSpec:
    name: str          # relative to the node's namespace (absolute for /diagnostics)
    type: str          # e.g. "sensor_msgs/Image"
    direction: str     # PUBLISHES or SUBSCRIBES
    qos: str           # in words, e.g. "image_qos" or "reliable, keep last 50"
    description: str
    condition: str = ""  # when the endpoint exists, e.g. "use_depth"

    def __post_init__(self) -> None:
        if self.direction not in (PUBLISHES, SUBSCRIBES):
            raise ValueError(f"topic {self.name}: direction must be {PUBLISHES!r} or {SUBSCRIBES!r}")


#: QoS in words, for the tables
IMAGE_QOS_TEXT = "`image_qos` (default matched: the publishers', else best effort)"
STREAM_QOS_TEXT = "reliable, keep last 50"
LATCHED_QOS_TEXT = "reliable, transient local, depth 1"
DIAGNOSTICS = TopicSpec("/diagnostics", "diagnostic_msgs/DiagnosticArray", PUBLISHES, "reliable, keep last 10",
                        "about 1 Hz: this node's status, counters, rates and latency")
