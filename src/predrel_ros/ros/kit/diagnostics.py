"""About once a second, each node publishes its own `diagnostic_msgs/DiagnosticStatus` on
`/diagnostics` (rqt_robot_monitor, the demo dashboard, tests read it).

The status is named by the node's fully qualified name (e.g. `/degraded/perception`); its level
and message come from `health.Health` (counters of the last interval, raised conditions), and its
key/values hold every counter (totals), the rates of the last interval (`rate.<key>` per second),
the latency window (`latency.median_ms`, ...) and whatever the node adds (`values()` callback).
Nodes with more to say (the reliability node: one status per predicate group) pass
`extra_statuses`, a callback returning more DiagnosticStatus messages for the same array.
"""
from __future__ import annotations

import socket
from typing import Callable, Mapping

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue

from predrel_ros.ros.kit.frame_counters import FrameCounters
from predrel_ros.ros.kit.health import Health
from predrel_ros.ros.kit.latency import LatencyWindow

TOPIC = "/diagnostics"
PERIOD_S = 1.0


def status(name: str, level: int, message: str, values: Mapping[str, object] | None = None,
           hardware_id: str = "") -> DiagnosticStatus:
    """A DiagnosticStatus; values are written with str() (floats with 4 significant digits)."""
    msg = DiagnosticStatus(name=name, message=message, hardware_id=hardware_id or socket.gethostname())
    msg.level = bytes([level])
    msg.values = [KeyValue(key=str(k), value=f"{v:.4g}" if isinstance(v, float) else str(v))
                  for k, v in (values or {}).items()]
    return msg


def values_of(msg: DiagnosticStatus) -> dict[str, str]:
    return {kv.key: kv.value for kv in msg.values}


def level_of(msg: DiagnosticStatus) -> int:
    return msg.level[0] if isinstance(msg.level, (bytes, bytearray)) else int(msg.level)


class NodeDiagnostics:
    def __init__(self, node, counters: FrameCounters, health: Health, latency: LatencyWindow | None = None,
                 values: Callable[[], Mapping[str, object]] | None = None,
                 extra_statuses: Callable[[], list[DiagnosticStatus]] | None = None,
                 period_s: float = PERIOD_S) -> None:
        self._node = node
        self._counters = counters
        self._health = health
        self._latency = latency
        self._values = values
        self._extra = extra_statuses
        self._publisher = node.create_publisher(DiagnosticArray, TOPIC, 10)
        self.last_status: DiagnosticStatus | None = None
        self._timer = node.create_timer(period_s, self.publish)

    def build(self) -> DiagnosticStatus:
        seconds, increments = self._counters.interval()
        level, message = self._health.assess(seconds, increments)
        values: dict[str, object] = dict(self._counters.snapshot())
        if seconds > 0:
            values.update({f"rate.{key}": n / seconds for key, n in increments.items()})
        if self._latency is not None:
            values.update({f"latency.{key}": v for key, v in self._latency.summary_ms().items()})
        if self._values is not None:
            values.update(self._values())
        return status(self._node.get_fully_qualified_name(), level, message, values)

    def publish(self) -> None:
        own = self.build()
        self.last_status = own
        msg = DiagnosticArray(status=[own] + (self._extra() if self._extra is not None else []))
        msg.header.stamp = self._node.get_clock().now().to_msg()
        self._publisher.publish(msg)
