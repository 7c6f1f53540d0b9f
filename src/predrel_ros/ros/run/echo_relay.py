"""echo_relay: decodes every Image and PredicateArray it receives and publishes them again.

It checks a DDS setup and the message conversions between processes: each echo is rebuilt from
the decoded pixels (numpy) and predicate records (PredicateEstimate), so a corrupted transfer or a
conversion bug shows up as a difference at the sender (`predrel transport-check`,
tests/ros/run/test_dds_exchange.py).

Topics: image (sensor_msgs/Image) -> image_echo, predicates (predrel_ros/PredicateArray) ->
predicates_echo; remap them with --ros-args -r image:=/camera/image_raw ...
It runs until interrupted (Ctrl-C, SIGINT).
"""
from __future__ import annotations

import sys
import time

from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Image

from predrel_ros.msg import PredicateArray
from predrel_ros.ros.kit.runtime import run_node
from predrel_ros.ros.messages.images import image_to_numpy, numpy_to_image
from predrel_ros.ros.messages.predicates import predicates_from_msg, predicates_to_msg

#: reliable, last 10: a checker must not lose what it was sent
ECHO_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)


class EchoRelay(Node):
    def __init__(self, **kwargs) -> None:
        super().__init__("echo_relay", **kwargs)
        self.images_echoed = 0
        self.predicates_echoed = 0
        self.conversion_seconds = 0.0
        self._image_pub = self.create_publisher(Image, "image_echo", ECHO_QOS)
        self._predicate_pub = self.create_publisher(PredicateArray, "predicates_echo", ECHO_QOS)
        self.create_subscription(Image, "image", self._on_image, ECHO_QOS)
        self.create_subscription(PredicateArray, "predicates", self._on_predicates, ECHO_QOS)

    def _on_image(self, msg: Image) -> None:
        start = time.perf_counter()
        try:
            pixels = image_to_numpy(msg)
        except ValueError as error:  # a malformed image is reported, not echoed, and not fatal
            self.get_logger().error(f"image not echoed: {error}")
            return
        echo = numpy_to_image(pixels, msg.encoding, header=msg.header)
        self.conversion_seconds += time.perf_counter() - start
        self._image_pub.publish(echo)
        self.images_echoed += 1

    def _on_predicates(self, msg: PredicateArray) -> None:
        try:
            estimates = predicates_from_msg(msg)
        except ValueError as error:
            self.get_logger().error(f"predicates not echoed: {error}")
            return
        self._predicate_pub.publish(predicates_to_msg(
            estimates, frame_index=msg.frame_index, source=msg.source, header=msg.header,
            degradation=msg.degradation))
        self.predicates_echoed += 1

    def destroy_node(self) -> None:
        if self.images_echoed:
            self.get_logger().info(
                f"echoed {self.images_echoed} images and {self.predicates_echoed} predicate arrays; image "
                f"decode + encode {1e3 * self.conversion_seconds / self.images_echoed:.2f} ms on average")
        super().destroy_node()


def main(args: list[str] | None = None) -> int:
    return run_node(EchoRelay, args)


if __name__ == "__main__":
    sys.exit(main())
