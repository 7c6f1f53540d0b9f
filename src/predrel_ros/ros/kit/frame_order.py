"""A node taking an input stream in order: the one policy (`core.stream_order.StreamOrder`) decides,
this adapter counts and logs what it decided (every node that orders an input uses it).

    if not admit(self, self.order, "entities", frame_index, "predicate extraction", self.extractor.reset):
        return                      # counted out_of_order and logged (rate-limited)
    ... process; then self.order.accept(frame_index) (or the library stage sharing the order does)

A frame out of order (old, repeated, or implausibly far ahead) is counted `<stream>.out_of_order`;
a restart resets the node's state through `reset`, is counted `<stream>.restarts` and logged
(rate-limited too: a stream of bogus values must not flood the log), and the frame is then taken.
"""
from __future__ import annotations

from typing import Callable

from predrel_ros.core.stream_order import OUT_OF_ORDER as BEHIND
from predrel_ros.core.stream_order import RESTART, RESTART_AFTER, StreamOrder
from predrel_ros.ros.kit.frame_counters import OUT_OF_ORDER
from predrel_ros.ros.kit.parameter_specs import ParameterSpec

#: counted when a stream restarted (not an outcome: the frame is processed too)
RESTARTS = "restarts"


def restart_after_parameter(stream: str, state: str) -> ParameterSpec:
    """The `restart_after` parameter of a node whose `state` restarts with its input `stream`
    (runtime: the node sets it on its StreamOrders, which read it at every frame)."""
    return ParameterSpec("restart_after", RESTART_AFTER, f"consecutive out-of-order frames after which the {stream} "
                         f"stream is taken to have restarted its numbering ({state} starts anew); 0: never",
                         minimum=0, maximum=1000, runtime=True)


def admit(node, order: StreamOrder, stream: str, position: int, work: str, reset: Callable[[], None] = lambda: None,
          stamp_ns: int | None = None, restarts_under: str | None = None) -> bool:
    """Whether the node takes the frame at `position` (and `stamp_ns`) of `stream` (False: counted
    out_of_order); a restart is counted under `restarts_under` (default `stream`)."""
    verdict = order.check(position, stamp_ns)
    if verdict == BEHIND:
        node.reject(stream, f"{order.reason}: skipped", OUT_OF_ORDER)
        return False
    if verdict == RESTART:
        reset()
        order.reset()
        restarted(node, restarts_under or stream, f"{order.reason}: {work} starts a new sequence")
    return True


def restarted(node, stream: str, text: str) -> None:
    """Count a restart of `stream` and log it, rate-limited."""
    node.count(stream, RESTARTS)
    node.log_throttled(f"{stream}.{RESTARTS}", f"{stream}: {text}")
