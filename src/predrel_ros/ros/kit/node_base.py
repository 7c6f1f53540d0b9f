"""`PredrelNode`: what every predrel_ros node shares, so each node file holds only its own logic.

- parameters from `ParameterSpec`s (`self.params`, validated at start and on change);
- counters of every input's outcome (`self.count(stream, outcome)`), logged at shutdown;
- subscriptions whose callbacks never kill the node: a `ValueError` (bad content) is counted
  `malformed` for that stream (a `TooLarge` one, more items than the node's bound, `too_large`)
  and logged rate-limited with how many were held back, any other
  exception is counted `failed` and logged with its traceback (rate-limited too);
- publishers and subscriptions that log incompatible QoS clearly (`qos.py`) and turn it into an
  ERROR condition on `/diagnostics` for a while;
- `/diagnostics` about once a second (`diagnostics.py`) with counters, rates and latency;
- `wanted(publisher)`: whether anybody subscribes (lazy work);
- `forward_library_logs()`: the core libraries' Python `logging` records (which backend was chosen
  and why, model input sizes) appear in this node's ROS log.

A node sets `self.exit_code` to end `run_node`'s loop (a replay that finished), and registers the
release of what it holds with `self.on_destroy(fn)` as soon as it holds it (threads, models): a
node whose constructor fails half-way (a bad parameter) is destroyed by rclpy at shutdown with only
what it registered, in reverse order.
"""
from __future__ import annotations

import logging
import traceback
from typing import Any, Callable, Mapping, Sequence

from rclpy.node import Node
from rclpy.qos import QoSProfile

from predrel_ros.ros.kit import qos
from predrel_ros.ros.kit.diagnostics import NodeDiagnostics
from predrel_ros.ros.kit.frame_counters import FAILED, MALFORMED, TOO_LARGE, FrameCounters, summary
from predrel_ros.ros.kit.health import ERROR, Health
from predrel_ros.ros.kit.latency import LatencyWindow
from predrel_ros.ros.kit.log_throttle import LogThrottle, suppressed_note
from predrel_ros.ros.kit.parameter_specs import ParameterSpec
from predrel_ros.ros.kit.parameters import NodeParameters
from predrel_ros.ros.messages.fields import TooLarge

#: the shortest time between two log lines about the same kind of bad input on one stream
REJECT_LOG_PERIOD_S = 5.0
#: how long a QoS mismatch keeps the node's diagnostics at ERROR after the last event
QOS_CONDITION_HOLD_S = 30.0


class _RosLogHandler(logging.Handler):
    """Python logging -> a node's ROS logger (one call site per severity: rclpy requires it)."""

    def __init__(self, node) -> None:
        super().__init__(logging.INFO)
        self._node = node

    def emit(self, record: logging.LogRecord) -> None:
        text = f"{record.name}: {record.getMessage()}"
        logger = self._node.get_logger()
        if record.levelno >= logging.ERROR:
            logger.error(text)
        elif record.levelno >= logging.WARNING:
            logger.warning(text)
        else:
            logger.info(text)


def wanted(publisher) -> bool:
    """Whether anybody subscribes to `publisher` (skip building messages nobody receives)."""
    return publisher.get_subscription_count() > 0


class PredrelNode(Node):
    def __init__(self, node_name: str, parameters: Sequence[ParameterSpec], *,
                 on_parameters: Callable[[dict[str, Any]], None] | None = None,
                 check_parameters: Callable[[dict[str, Any]], None] | None = None, **node_kwargs) -> None:
        super().__init__(node_name, **node_kwargs)
        self.exit_code: int | None = None
        self._log_handlers: list[tuple[logging.Logger, logging.Handler]] = []
        self._cleanups: list[Callable[[], None]] = []
        self.counters = FrameCounters()
        self.latency = LatencyWindow()
        self.health = Health()
        self._throttle = LogThrottle(REJECT_LOG_PERIOD_S)
        self.params = NodeParameters(self, parameters, on_change=on_parameters, check_change=check_parameters)
        self.diagnostics = NodeDiagnostics(self, self.counters, self.health, self.latency,
                                           values=self.diagnostic_values,
                                           extra_statuses=self.extra_diagnostic_statuses)

    # -- counting and rejecting ------------------------------------------------------------------
    def count(self, stream: str | None, outcome: str, n: int = 1) -> None:
        self.counters.count(stream, outcome, n)

    def reject(self, stream: str, error: BaseException | str, outcome: str = MALFORMED) -> None:
        """Count one input of `stream` as `outcome` and log why, rate-limited per stream and outcome."""
        self.counters.count(stream, outcome)
        self.log_throttled(f"{stream}.{outcome}", f"{stream}: input {outcome.replace('_', ' ')}: {error}")

    def log_throttled(self, key: str, text: str, error: bool = False) -> None:
        suppressed = self._throttle.allow(key)
        if suppressed is None:
            return
        # two call sites: rclpy's logger refuses one call site with two severities
        if error:
            self.get_logger().error(text + suppressed_note(suppressed))
        else:
            self.get_logger().warning(text + suppressed_note(suppressed))

    def guarded(self, stream: str, callback: Callable[..., None]) -> Callable[..., None]:
        """`callback` wrapped so that no input can raise out of it (see the module docstring)."""
        def run(*args) -> None:
            try:
                callback(*args)
            except TooLarge as error:
                self.reject(stream, error, TOO_LARGE)
            except ValueError as error:
                self.reject(stream, error)
            except Exception as error:  # a bug must cost one message, not the node
                self.counters.count(stream, FAILED)
                self.log_throttled(f"{stream}.{FAILED}", f"{stream}: processing failed: {error!r}\n"
                                   f"{traceback.format_exc()}", error=True)
        return run

    def forward_library_logs(self, name: str = "predrel_ros") -> None:
        """Send INFO and above of Python logger `name` (and its children) to this node's log, until
        `destroy_node` (or `stop_forwarding_library_logs`, when the constructor fails)."""
        library = logging.getLogger(name)
        library.setLevel(logging.INFO)
        handler = _RosLogHandler(self)
        library.addHandler(handler)
        self._log_handlers.append((library, handler))

    # -- endpoints -------------------------------------------------------------------------------
    def _qos_mismatch(self, topic: str) -> None:
        self.health.raise_condition(f"qos:{topic}", ERROR, f"QoS mismatch on {self.resolve_topic_name(topic)} "
                                    f"(see the log)", hold_s=QOS_CONDITION_HOLD_S)

    def publisher(self, msg_type, topic: str, qos_profile: QoSProfile):
        return qos.create_publisher(self, msg_type, topic, qos_profile, on_incompatible=self._qos_mismatch)

    def subscription(self, msg_type, topic: str, callback: Callable[..., None], qos_profile: QoSProfile,
                     stream: str | None = None, **kwargs):
        """A subscription whose callback is `guarded` (counted under `stream`, default the topic)."""
        return qos.create_subscription(self, msg_type, topic, self.guarded(stream or topic, callback), qos_profile,
                                       on_incompatible=self._qos_mismatch, **kwargs)

    # -- diagnostics (nodes override these two) --------------------------------------------------
    def diagnostic_values(self) -> Mapping[str, object]:
        """Extra key/values for this node's DiagnosticStatus."""
        return {}

    def extra_diagnostic_statuses(self) -> list:
        """More DiagnosticStatus messages to publish with this node's own."""
        return []

    def stop_forwarding_library_logs(self) -> None:
        for library, handler in self._log_handlers:
            library.removeHandler(handler)
        self._log_handlers.clear()

    def on_destroy(self, cleanup: Callable[[], None]) -> None:
        """Run `cleanup` in destroy_node (cleanups run newest first, before the counters are logged)."""
        self._cleanups.append(cleanup)

    def destroy_node(self) -> None:
        while self._cleanups:
            cleanup = self._cleanups.pop()
            try:
                cleanup()
            except Exception as error:  # the other cleanups and the node's destruction must still run
                self.get_logger().error(f"while shutting down: {error!r}")
        self.get_logger().info(f"counters: {summary(self.counters.snapshot())}")
        self.stop_forwarding_library_logs()
        super().destroy_node()
