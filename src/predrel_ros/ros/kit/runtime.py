"""The main loop every predrel_ros node executable shares: `main = lambda: run_node(MyNode)`.

rclpy is initialised, the node is built, spun by a SingleThreadedExecutor (rclpy 9.1's
MultiThreadedExecutor busy-loops) until SIGINT or SIGTERM (Ctrl-C, ros2 launch, `stop_node`), and
then destroyed and shut down in order, so a node can still log its summary from `destroy_node`.
A `UserError` while building the node (a bad parameter) is printed without a traceback, exit 1.
A node ends the loop itself by setting its attribute `exit_code` (e.g. a replay that played its
last frame): `run_node` then shuts down the same way and returns that code.
`spin_until` spins an executor until a condition holds (tools and tests that wait for messages);
`fresh_context` gives tools that build nodes in their own process a context and executor of their own.
"""
from __future__ import annotations

import signal
import sys
import time
from contextlib import contextmanager
from typing import Callable, Iterator

#: the longest time Python waits inside rcl before it can act on a signal
SPIN_PERIOD_S = 0.1


def _raise_interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def run_node(make_node: Callable[[], object], args: list[str] | None = None) -> int:
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.signals import SignalHandlerOptions

    from predrel_ros.core.errors import UserError

    # Our own handlers instead of rclpy's: rclpy's would invalidate the context at once (no logging
    # while shutting down), and a process started with SIGINT ignored (a background shell job)
    # must still stop on SIGINT.
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    signal.signal(signal.SIGINT, _raise_interrupt)
    signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        node = make_node()
    except UserError as error:
        print(f"{getattr(make_node, '__name__', 'node')}: error: {error}", file=sys.stderr)
        rclpy.try_shutdown()
        return 1
    except KeyboardInterrupt:
        rclpy.try_shutdown()
        return 0
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    try:
        while rclpy.ok() and getattr(node, "exit_code", None) is None:
            executor.spin_once(timeout_sec=SPIN_PERIOD_S)
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the shutdown short
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()
    return getattr(node, "exit_code", None) or 0


def spin_until(executor, condition: Callable[[], bool], timeout_s: float) -> bool:
    """Spin `executor` until `condition()` holds or `timeout_s` passes; returns `condition()`."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return condition()
        executor.spin_once(timeout_sec=min(0.05, remaining))
    return True


@contextmanager
def fresh_context() -> Iterator[tuple]:
    """(context, executor): an rclpy Context of its own, initialised, with a SingleThreadedExecutor
    on it; both are shut down on leaving (nodes built on it are the caller's to destroy)."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor

    context = rclpy.Context()
    rclpy.init(context=context)
    executor = SingleThreadedExecutor(context=context)
    try:
        yield context, executor
    finally:
        executor.shutdown()
        rclpy.try_shutdown(context=context)
