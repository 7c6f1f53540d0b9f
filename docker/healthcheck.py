"""Container health: healthy while the perception node reports OK or WARN on /diagnostics.

Listens up to PREDREL_HEALTH_TIMEOUT_S seconds (default 8) for a DiagnosticStatus named
<namespace>/<node> where the node is PREDREL_HEALTH_NODE (default perception): exit 0 when its level
is OK (0) or WARN (1), 1 when it is ERROR or STALE, or when none arrived. Runs in the container's
ROS environment (docker/entrypoint.sh); Docker's HEALTHCHECK calls it.
"""
import os
import sys
import time

import rclpy
from diagnostic_msgs.msg import DiagnosticArray

NODE = os.environ.get("PREDREL_HEALTH_NODE", "perception")
TIMEOUT_S = float(os.environ.get("PREDREL_HEALTH_TIMEOUT_S", "8"))


def main() -> int:
    rclpy.init()
    node = rclpy.create_node(f"healthcheck_{os.getpid()}")
    levels = []

    def on_diagnostics(msg: DiagnosticArray) -> None:
        for status in msg.status:
            if status.name.rsplit("/", 1)[-1] == NODE:
                levels.append((status.level[0] if isinstance(status.level, bytes) else int(status.level),
                               status.name, status.message))

    node.create_subscription(DiagnosticArray, "/diagnostics", on_diagnostics, 10)
    deadline = time.monotonic() + TIMEOUT_S
    try:
        while not levels and time.monotonic() < deadline:
            rclpy.spin_once(node, timeout_sec=0.1)
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    if not levels:
        print(f"unhealthy: no /diagnostics status of a node named {NODE} within {TIMEOUT_S:g} s")
        return 1
    level, name, message = levels[-1]
    print(f"{name}: level {level} {message}")
    return 0 if level <= 1 else 1


if __name__ == "__main__":
    sys.exit(main())
