"""PredrelNode: parameters at start and at runtime, guarded callbacks, /diagnostics, QoS mismatch logs."""
import pytest
from ros_testing import require_ros

require_ros()

from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from rclpy.qos import QoSProfile  # noqa: E402
from sensor_msgs.msg import Image  # noqa: E402

from predrel_ros.core.errors import UserError  # noqa: E402
from predrel_ros.ros.kit import diagnostics, health  # noqa: E402
from predrel_ros.ros.kit.frame_counters import FAILED, MALFORMED, PROCESSED  # noqa: E402
from predrel_ros.ros.kit.node_base import PredrelNode  # noqa: E402
from predrel_ros.ros.kit.parameter_specs import ParameterSpec  # noqa: E402
from predrel_ros.ros.kit.qos import IMAGE_QOS_PARAMETERS, image_qos  # noqa: E402
from predrel_ros.ros.kit.runtime import spin_until  # noqa: E402

pytestmark = pytest.mark.ros

SPECS = (ParameterSpec("rate", 1.0, "rate", minimum=0.0, runtime=True),
         ParameterSpec("label", "x", "a read-only label")) + IMAGE_QOS_PARAMETERS


def make_node(ros_context, overrides=(), **kwargs):
    return PredrelNode("base_test", SPECS, context=ros_context, parameter_overrides=list(overrides), **kwargs)


def test_parameters_are_validated_at_start(ros_context):
    node = make_node(ros_context, [Parameter("rate", value=2), Parameter("image_qos", value="reliable")])
    try:
        assert node.params.values == {"rate": 2.0, "label": "x", "image_qos": "reliable", "image_qos_depth": 5}
        descriptor = node.describe_parameter("rate")
        assert descriptor.description == "rate" and not descriptor.read_only
        assert node.describe_parameter("label").read_only
        assert "one of: matched, sensor_data" in node.describe_parameter("image_qos").additional_constraints
    finally:
        node.destroy_node()
    with pytest.raises(UserError) as error:
        make_node(ros_context, [Parameter("rate", value=-1.0), Parameter("image_qos", value="fast")])
    assert "parameter rate: -1.0 is below the minimum 0" in str(error.value)
    assert "parameter image_qos: 'fast' is not one of" in str(error.value)


def test_runtime_changes_are_validated_then_applied(ros_context):
    changes = []
    node = make_node(ros_context, on_parameters=changes.append)
    try:
        refused = node.set_parameters([Parameter("rate", value=-2.0)])[0]
        assert not refused.successful and "below the minimum" in refused.reason
        assert not node.set_parameters([Parameter("label", value="y")])[0].successful  # read-only
        assert node.set_parameters([Parameter("rate", value=3)])[0].successful  # int for a float
        assert changes == [{"rate": 3.0}] and node.params["rate"] == 3.0
    finally:
        node.destroy_node()


def test_callbacks_never_raise_and_every_input_is_counted(ros_context, ros_executor):
    node = make_node(ros_context)
    ros_executor.add_node(node)

    def on_image(msg):
        if msg.encoding == "bad":
            raise ValueError("Image.encoding 'bad' is not supported")
        if msg.encoding == "bug":
            raise KeyError("a bug")
        node.count("image", PROCESSED)

    node.subscription(Image, "image", on_image, image_qos("reliable", 50, subscriber=False), stream="image")
    publisher = node.create_publisher(Image, "image", 50)
    statuses = []
    node.create_subscription(DiagnosticArray, diagnostics.TOPIC, lambda m: statuses.extend(m.status), 10)
    assert spin_until(ros_executor, lambda: publisher.get_subscription_count() > 0, 10)
    for encoding in ["rgb8"] * 3 + ["bad"] * 5 + ["bug"] * 2:
        publisher.publish(Image(encoding=encoding))
    assert spin_until(ros_executor, lambda: node.counters.total("image") == 10, 10)
    assert node.counters.stream("image") == {FAILED: 2, MALFORMED: 5, PROCESSED: 3}
    own = lambda: [s for s in statuses if s.name == node.get_fully_qualified_name()]  # noqa: E731
    assert spin_until(ros_executor, lambda: any(diagnostics.values_of(s).get("image.malformed") == "5"
                                                for s in own()), 5)
    status = next(s for s in own() if diagnostics.values_of(s).get("image.malformed") == "5")
    assert diagnostics.level_of(status) in (health.WARN, health.ERROR)
    assert diagnostics.values_of(status)["image.failed"] == "2"


def test_qos_mismatch_is_logged_and_raises_an_error_condition(ros_context, ros_executor):
    node = make_node(ros_context)
    ros_executor.add_node(node)
    node.publisher(Image, "camera", image_qos("sensor_data", 5))
    node.subscription(Image, "camera", lambda msg: None, QoSProfile(depth=5))  # reliable: incompatible
    assert spin_until(ros_executor, lambda: any("QoS mismatch" in c.text for c in node.health.conditions()), 10)
    assert diagnostics.level_of(node.diagnostics.build()) == health.ERROR
