"""config/perception.run.yaml feeds the camera images to the reliability node: the topic the
perception node reads, with the QoS it matches, so the image-quality trust evidence works on a
best-effort camera in the live graph."""
from pathlib import Path

import numpy as np
import pytest
from node_graph import run_until
from ros_testing import require_ros

require_ros()

from rclpy.node import Node  # noqa: E402
from rclpy.qos import ReliabilityPolicy, qos_profile_sensor_data  # noqa: E402
from sensor_msgs.msg import Image  # noqa: E402

from predrel_ros.ros.kit.frame_counters import PROCESSED  # noqa: E402
from predrel_ros.ros.messages.images import numpy_to_image  # noqa: E402
from predrel_ros.ros.nodes.reliability_node import IMAGE, ReliabilityNode  # noqa: E402
from predrel_ros.ros.run.run_file import load_run_file  # noqa: E402

pytestmark = pytest.mark.ros

RUN_FILE = Path(__file__).resolve().parents[3] / "config" / "perception.run.yaml"


def nodes(values: dict):
    return {spec.name: spec for spec in load_run_file(RUN_FILE, values).nodes}


@pytest.mark.parametrize("values", [{}, {"image": "/robot/front/rgb", "image_qos": "best_effort"},
                                     {"image_qos": "reliable"}], ids=["defaults", "best_effort", "reliable"])
def test_the_reliability_node_reads_the_perception_nodes_camera_topic_with_its_qos(values):
    graph = nodes(values)
    perception, reliability = graph["perception"], graph["reliability"]
    assert dict(reliability.remappings)["image"] == dict(perception.remappings)["image_raw"]
    assert reliability.parameters["image_qos"] == perception.parameters["image_qos"] == values.get("image_qos",
                                                                                                   "matched")
    assert reliability.parameters["reference_mode"] == "self"


def test_a_best_effort_camera_reaches_the_reliability_node_of_the_run_file(ros_context, ros_executor):
    """A camera driver publishing best effort (sensor_data) before the graph starts: the reliability
    node as the run file starts it (params files, values, remappings) subscribes best effort and
    measures every image it gets."""
    camera = Node("camera", context=ros_context)
    publisher = camera.create_publisher(Image, "camera/color/image_raw", qos_profile_sensor_data)
    ros_executor.add_node(camera)
    spec = nodes({})["reliability"]
    node = ReliabilityNode(context=ros_context, cli_args=["--ros-args", *spec.ros_arguments()])
    ros_executor.add_node(node)
    subscription = node.part_subscriptions[IMAGE]
    assert subscription.topic_name == "/camera/color/image_raw"
    assert subscription.qos_profile.reliability == ReliabilityPolicy.BEST_EFFORT
    run_until(ros_executor, lambda: publisher.get_subscription_count() > 0, 10, "discovery")
    pixels = np.random.default_rng(3).integers(0, 256, (240, 320, 3), dtype=np.uint8)
    for k in range(5):
        image = numpy_to_image(pixels, "rgb8")
        image.header.stamp.sec = k + 1
        publisher.publish(image)
        run_until(ros_executor, lambda: node.counters.total(IMAGE) == k + 1, 5, f"image {k}")
    assert node.counters.stream(IMAGE) == {PROCESSED: 5}
    assert len(node._image_measures) == 5     # measured, waiting for their entities
