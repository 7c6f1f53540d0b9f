"""perception_node as a managed (lifecycle) node over DDS: it answers parameter requests and publishes
/diagnostics while a slow model loads, stays unconfigured with autostart false until the lifecycle
services configure and activate it, frees the model on cleanup and configures again, reports a model
that fails to load as a failed transition (never a crash), and takes new thresholds at runtime."""
import time

import numpy as np
import pytest
from ros_testing import require_ros

require_ros()

from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from lifecycle_msgs.srv import ChangeState, GetState  # noqa: E402
from node_graph import Probe, activated, call, run_until, scene_model  # noqa: E402
from rcl_interfaces.srv import GetParameters, SetParameters  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import Image  # noqa: E402

from predrel_ros.msg import EntityArray  # noqa: E402
from predrel_ros.perception import perceiver as perceiver_module  # noqa: E402
from predrel_ros.ros.kit.diagnostics import level_of, values_of  # noqa: E402
from predrel_ros.ros.kit.health import ERROR, WARN  # noqa: E402
from predrel_ros.ros.messages.fields import header_at  # noqa: E402
from predrel_ros.ros.messages.images import numpy_to_image  # noqa: E402
from predrel_ros.ros.nodes.perception_node import PerceptionNode  # noqa: E402

pytestmark = pytest.mark.ros

LOAD_S = 3.0
NAME = "/degraded/perception"


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return scene_model(tmp_path_factory.mktemp("scene_model"))


@pytest.fixture
def slow_model(monkeypatch):
    """The Perceiver takes LOAD_S seconds to load (a TensorRT engine build, shortened); counts its closes."""
    original = perceiver_module.Perceiver
    closed = []

    class SlowPerceiver(original):
        def __init__(self, *args, **kwargs):
            time.sleep(LOAD_S)
            super().__init__(*args, **kwargs)

        def close(self):
            closed.append(self)
            super().close()
    monkeypatch.setattr(perceiver_module, "Perceiver", SlowPerceiver)
    return closed


def perception(ros_context, model_dir, **params):
    return PerceptionNode(context=ros_context, namespace="degraded", parameter_overrides=[
        Parameter(k, value=v) for k, v in {"model_path": str(model_dir), "image_qos": "reliable", **params}.items()])


def unconfigured(ros_context, ros_executor, model_dir):
    """(a perception node with autostart false, a probe, the entities it received, its camera)."""
    node = perception(ros_context, model_dir, autostart=False)
    probe = Probe(ros_context)
    entities = probe.watch(EntityArray, "degraded/entities")
    camera = probe.node.create_publisher(Image, "degraded/image_raw", 10)
    for n in (node, probe.node):
        ros_executor.add_node(n)
    return node, probe, entities, camera


def change_state(executor, probe, label, timeout_s=10.0):
    client = probe.node.create_client(ChangeState, f"{NAME}/change_state")
    request = ChangeState.Request()
    request.transition.label = label
    response, _ = call(executor, client, request, timeout_s)
    return response.success


def get_parameter(executor, probe, name):
    response, seconds = call(executor, probe.node.create_client(GetParameters, f"{NAME}/get_parameters"),
                             GetParameters.Request(names=[name]))
    return response.values[0], seconds


def own_statuses(messages):
    return [(t, s) for t, msg in messages for s in msg.status if s.name == NAME]


def watch_diagnostics(probe):
    received = []
    probe.watch(DiagnosticArray, "/diagnostics", lambda msg: received.append((time.monotonic(), msg)))
    return received


def send_frames(executor, camera, entities, count, first=0):
    rgb = np.zeros((96, 128, 3), np.uint8)
    for k in range(first, first + count):
        before = len(entities)
        camera.publish(numpy_to_image(rgb, "rgb8", header_at(10**9 * (k + 1), "cam")))
        run_until(executor, lambda: len(entities) == before + 1, 10, f"the entities of image {k}")


def test_parameters_and_diagnostics_answer_within_1_s_while_the_model_loads(
        ros_context, ros_executor, model_dir, slow_model):
    node = perception(ros_context, model_dir, score_threshold=0.3)
    probe = Probe(ros_context)
    diagnostics = watch_diagnostics(probe)
    ros_executor.add_node(probe.node)
    ros_executor.add_node(node)
    run_until(ros_executor, lambda: node.lifecycle_state == "configuring", 5, "configuring to start")
    started = time.monotonic()
    value, seconds = get_parameter(ros_executor, probe, "score_threshold")
    assert value.double_value == 0.3 and seconds < 1.0 and node.lifecycle_state == "configuring", seconds
    run_until(ros_executor, lambda: node.lifecycle_state == "active", LOAD_S + 10, "the node to become active")
    loaded = time.monotonic()
    assert loaded - started > LOAD_S - 0.5   # the load really was slow
    during = [(t, s) for t, s in own_statuses(diagnostics) if started <= t < loaded]
    assert len(during) >= 2
    assert all(level_of(s) == WARN and "configuring: loading model" in s.message for _, s in during)
    assert values_of(during[0][1])["lifecycle"] == "configuring"
    arrivals = [started] + [t for t, _ in during]
    assert max(b - a for a, b in zip(arrivals, arrivals[1:])) < 1.5   # about once a second throughout
    # and it works: frames are processed
    entities = probe.watch(EntityArray, "degraded/entities")
    camera = probe.node.create_publisher(Image, "degraded/image_raw", 10)
    run_until(ros_executor, lambda: camera.get_subscription_count() > 0, 10, "the image subscription")
    send_frames(ros_executor, camera, entities, 1)


def test_without_autostart_the_lifecycle_services_configure_and_activate_it(
        ros_context, ros_executor, model_dir, slow_model):
    node, probe, entities, camera = unconfigured(ros_context, ros_executor, model_dir)
    state, _ = call(ros_executor, probe.node.create_client(GetState, f"{NAME}/get_state"), GetState.Request())
    assert state.current_state.label == "unconfigured"
    assert node.perceiver is None and camera.get_subscription_count() == 0
    status = node.diagnostics.build()
    assert level_of(status) == 0 and status.message.startswith("unconfigured, not processing")
    # configure through the service: the request is answered when the (slow) load ended, and the
    # parameter services answer meanwhile
    client = probe.node.create_client(ChangeState, f"{NAME}/change_state")
    run_until(ros_executor, client.service_is_ready, 10, "change_state")
    request = ChangeState.Request()
    request.transition.label = "configure"
    start = time.monotonic()
    future = client.call_async(request)
    run_until(ros_executor, lambda: node.lifecycle_state == "configuring", 5, "configuring")
    _, seconds = get_parameter(ros_executor, probe, "model_path")
    assert seconds < 1.0 and not future.done()
    run_until(ros_executor, future.done, LOAD_S + 10, "the configure response")
    assert future.result().success and time.monotonic() - start > LOAD_S - 0.5
    assert node.lifecycle_state == "inactive" and camera.get_subscription_count() == 0
    assert change_state(ros_executor, probe, "activate")
    assert node.lifecycle_state == "active" and "not processing" not in node.diagnostics.build().message
    run_until(ros_executor, lambda: camera.get_subscription_count() > 0, 10, "the image subscription")
    send_frames(ros_executor, camera, entities, 2)
    assert [m.frame_index for m in entities] == [0, 1]


def test_cleanup_frees_the_model_and_a_reconfigure_works(ros_context, ros_executor, model_dir, slow_model):
    node, probe, entities, camera = unconfigured(ros_context, ros_executor, model_dir)
    for label in ("configure", "activate"):
        assert change_state(ros_executor, probe, label, LOAD_S + 10)
    run_until(ros_executor, lambda: camera.get_subscription_count() > 0, 10, "the image subscription")
    send_frames(ros_executor, camera, entities, 1)
    first = node.perceiver
    assert change_state(ros_executor, probe, "deactivate")
    run_until(ros_executor, lambda: camera.get_subscription_count() == 0, 10, "the inputs to be unsubscribed")
    assert change_state(ros_executor, probe, "cleanup")
    assert slow_model == [first] and node.perceiver is None and node.lifecycle_state == "unconfigured"
    assert probe.node.count_publishers("/degraded/entities") == 0
    assert values_of(node.diagnostics.build())["backend"] == "not loaded"
    for label in ("configure", "activate"):
        assert change_state(ros_executor, probe, label, LOAD_S + 10)
    assert node.perceiver is not None and node.perceiver is not first
    run_until(ros_executor, lambda: camera.get_subscription_count() > 0, 10, "the image subscription again")
    send_frames(ros_executor, camera, entities, 2, first=1)
    assert [m.frame_index for m in entities] == [0, 0, 1]   # a new activation numbers frames anew
    assert change_state(ros_executor, probe, "deactivate") and change_state(ros_executor, probe, "shutdown")
    assert node.lifecycle_state == "finalized" and node.perceiver is None and len(slow_model) == 2


def test_a_model_that_fails_to_load_fails_the_transition_and_says_why(ros_context, ros_executor, tmp_path, capfd):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "model.onnx").write_bytes(b"this is not an onnx model")
    node = perception(ros_context, broken)
    probe = Probe(ros_context)
    diagnostics = watch_diagnostics(probe)
    for n in (node, probe.node):
        ros_executor.add_node(n)
    run_until(ros_executor, lambda: node.last_transition_error and not node._busy, 20, "the configure to fail")
    assert node.lifecycle_state == "unconfigured" and node.perceiver is None
    run_until(ros_executor, lambda: any(level_of(s) == ERROR for _, s in own_statuses(diagnostics)), 5,
              "an ERROR status")
    status = next(s for _, s in own_statuses(diagnostics) if level_of(s) == ERROR)
    assert "configuring failed" in status.message and "state unconfigured" in status.message
    assert "configuring failed" in values_of(status)["lifecycle.error"]
    assert "configuring failed" in capfd.readouterr().err
    # still alive and managed: a second configure is answered (and fails the same way)
    value, seconds = get_parameter(ros_executor, probe, "model_path")
    assert value.string_value == str(broken) and seconds < 1.0
    assert not change_state(ros_executor, probe, "configure")
    assert node.lifecycle_state == "unconfigured"


def test_thresholds_change_at_runtime_and_the_model_parameters_are_read_only(ros_context, ros_executor, model_dir):
    node = activated(perception(ros_context, model_dir), ros_executor)
    probe = Probe(ros_context)
    entities = probe.watch(EntityArray, "degraded/entities")
    camera = probe.node.create_publisher(Image, "degraded/image_raw", 10)
    ros_executor.add_node(probe.node)
    run_until(ros_executor, lambda: camera.get_subscription_count() > 0, 10, "the image subscription")
    setter = probe.node.create_client(SetParameters, f"{NAME}/set_parameters")

    def set_parameter(name, value):
        response, _ = call(ros_executor, setter, SetParameters.Request(
            parameters=[Parameter(name, value=value).to_parameter_msg()]))
        return response.results[0]
    send_frames(ros_executor, camera, entities, 1)
    assert len(entities[-1].entities) == 3
    assert set_parameter("score_threshold", 1.0).successful     # no score is above 1
    assert node.perceiver.decoder.config.score_threshold == 1.0
    send_frames(ros_executor, camera, entities, 1, first=1)
    assert len(entities[-1].entities) < 3   # nothing detected (the tracker may still coast a track)
    assert set_parameter("score_threshold", -1.0).successful    # the config's again
    assert node.perceiver.decoder.config.score_threshold == 0.25
    send_frames(ros_executor, camera, entities, 1, first=2)
    assert len(entities[-1].entities) == 3
    refused = set_parameter("model_path", "/another/model")
    assert not refused.successful and "read-only" in refused.reason
    assert not set_parameter("iou_threshold", 2.0).successful
    described = node.describe_parameter("model_path").description
    assert "Read-only: the model loads in on_configure" in described
