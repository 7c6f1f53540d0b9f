"""A stateful node taking its input stream in frame order: `stream_order.StreamOrder` plus the node's
counters and log (predicate_node, action_node).

    if not admit(self, self.order, "entities", frame_index, "predicate extraction", self.extractor.reset):
        return                      # counted out_of_order and logged (rate-limited)
    ... process; then self.order.accept(frame_index)

A restart (`restart_after` old frames in a row) resets the node's state through `reset`, is counted
`<stream>.restarts` and logged; the frame is then taken.
"""
from __future__ import annotations

from typing import Callable

from predrel_ros.ros.kit.frame_counters import OUT_OF_ORDER
from predrel_ros.ros.kit.parameter_specs import ParameterSpec
from predrel_ros.core.stream_order import OUT_OF_ORDER as BEHIND
from predrel_ros.core.stream_order import RESTART, StreamOrder

#: counted when a stream restarted (not an outcome: the frame is processed too)
RESTARTS = "restarts"


def restart_after_parameter(stream: str, state: str) -> ParameterSpec:
    """The `restart_after` parameter of a node whose `state` restarts with its input `stream`."""
    return ParameterSpec("restart_after", 5, f"consecutive out-of-order frames after which the {stream} stream is "
                         f"taken to have restarted its numbering ({state} starts anew); 0: never", minimum=0,
                         maximum=1000)


def admit(node, order: StreamOrder, stream: str, frame_index: int, work: str, reset: Callable[[], None]) -> bool:
    """Whether the node takes frame `frame_index` of `stream` (False: counted out_of_order)."""
    verdict = order.check(frame_index)
    if verdict == BEHIND:
        node.reject(stream, f"frame {frame_index} after frame {order.last}: skipped", OUT_OF_ORDER)
        return False
    if verdict == RESTART:
        reset()
        node.count(stream, RESTARTS)
        node.get_logger().warning(f"{stream} restarted at frame {frame_index} after frame {order.last}: {work} starts "
                                  f"a new sequence")
        order.reset()
    return True
