"""image_qos `matched` (image_pipeline's rule): a camera subscriber takes its publishers' reliability
and durability, best effort when any publisher is, sensor_data when none is up yet; the perception
graph's camera inputs subscribe that way."""
import pytest
from ros_testing import require_ros

require_ros()

from node_graph import run_until  # noqa: E402
from rclpy.node import Node  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data  # noqa: E402
from sensor_msgs.msg import Image  # noqa: E402

from predrel_ros.ros.inputs.camera_inputs import IMAGE  # noqa: E402
from predrel_ros.ros.kit.qos import MATCHED, SUBSCRIBER_IMAGE_DEPTH, image_qos, matched_publisher_qos  # noqa: E402
from predrel_ros.ros.nodes.degrade_node import DegradeNode  # noqa: E402

pytestmark = pytest.mark.ros

RELIABLE = QoSProfile(depth=5, reliability=ReliabilityPolicy.RELIABLE)
BEST_EFFORT = QoSProfile(depth=5, reliability=ReliabilityPolicy.BEST_EFFORT)


def discovered(node, topic, count):
    return lambda: len(node.get_publishers_info_by_topic(topic)) == count


def test_matched_follows_the_publishers_and_falls_back_to_sensor_data(ros_context, ros_executor):
    camera = Node("qos_camera", context=ros_context)
    other = Node("qos_other_camera", context=ros_context)
    listener = Node("qos_listener", context=ros_context)
    for n in (camera, other, listener):
        ros_executor.add_node(n)
    assert matched_publisher_qos(listener, "/qos/image") is qos_profile_sensor_data   # nobody publishes yet
    camera.create_publisher(Image, "/qos/image", RELIABLE)
    run_until(ros_executor, discovered(listener, "/qos/image", 1), 10, "the reliable camera")
    profile = image_qos(MATCHED, 5, subscriber=True, node=listener, topic="/qos/image")
    assert profile.reliability == ReliabilityPolicy.RELIABLE and profile.durability == DurabilityPolicy.VOLATILE
    assert profile.depth == SUBSCRIBER_IMAGE_DEPTH
    other.create_publisher(Image, "/qos/image", BEST_EFFORT)
    run_until(ros_executor, discovered(listener, "/qos/image", 2), 10, "the best-effort camera")
    assert matched_publisher_qos(listener, "/qos/image").reliability == ReliabilityPolicy.BEST_EFFORT
    # publishers never match anything: sensor_data
    assert image_qos(MATCHED, 5, node=listener, topic="/qos/image").reliability == ReliabilityPolicy.BEST_EFFORT


def test_a_node_started_after_a_reliable_camera_subscribes_reliably(ros_context, ros_executor):
    camera = Node("qos_reliable_camera", context=ros_context, namespace="qcam")
    camera.create_publisher(Image, "image_raw", RELIABLE)
    probe = Node("qos_probe", context=ros_context)
    ros_executor.add_node(camera)
    ros_executor.add_node(probe)
    run_until(ros_executor, discovered(probe, "/qcam/image_raw", 1), 10, "the camera")
    node = DegradeNode(context=ros_context, namespace="qcam")   # image_qos defaults to matched
    try:
        assert node.params["image_qos"] == MATCHED
        assert node.inputs.qos[IMAGE].reliability == ReliabilityPolicy.RELIABLE
    finally:
        node.destroy_node()
    late = DegradeNode(context=ros_context, namespace="qcam_without_camera",
                       parameter_overrides=[Parameter("image_qos", value=MATCHED)])
    try:
        assert late.inputs.qos[IMAGE].reliability == ReliabilityPolicy.BEST_EFFORT   # sensor_data fallback
    finally:
        late.destroy_node()
