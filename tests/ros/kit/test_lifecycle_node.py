"""PredrelLifecycleNode over DDS: a slow configure runs off the executor thread (the change_state
response waits for it, other requests are answered meanwhile), a second transition during it is
refused, and a callback that raises ends in unconfigured with the error logged and on /diagnostics."""
import threading
import time

import pytest
from ros_testing import require_ros

require_ros()

from lifecycle_msgs.srv import ChangeState  # noqa: E402
from node_graph import Probe, run_until  # noqa: E402
from rcl_interfaces.srv import ListParameters  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402

from predrel_ros.ros.kit.health import ERROR  # noqa: E402
from predrel_ros.ros.kit.lifecycle_node import SUCCESS, PredrelLifecycleNode  # noqa: E402
from predrel_ros.ros.kit.parameter_specs import ParameterSpec  # noqa: E402

pytestmark = pytest.mark.ros


class Managed(PredrelLifecycleNode):
    def __init__(self, configure_s=0.0, fail_in=(), **kwargs):
        super().__init__("managed", (ParameterSpec("rate", 1.0, "a rate", runtime=True),), **kwargs)
        self.configure_s, self.fail_in = configure_s, fail_in
        self.calls = []

    def _call(self, name):
        self.calls.append((name, threading.current_thread() is threading.main_thread()))
        if name in self.fail_in:
            raise RuntimeError(f"{name} broke")
        return SUCCESS

    def on_configure(self, state):
        self.configure_progress("waiting")
        time.sleep(self.configure_s)
        return self._call("configure")

    def on_activate(self, state):
        return self._call("activate")

    def on_error(self, state):
        return self._call("error")


def make(ros_context, **kwargs):
    return Managed(context=ros_context, parameter_overrides=[Parameter("autostart", value=False)], **kwargs)


def request(probe, label):
    client = probe.node.create_client(ChangeState, "/managed/change_state")
    req = ChangeState.Request()
    req.transition.label = label
    return client, req


def test_a_slow_configure_leaves_the_executor_free_and_a_second_request_is_refused(ros_context, ros_executor):
    node = make(ros_context, configure_s=2.0)
    probe = Probe(ros_context)
    for n in (node, probe.node):
        ros_executor.add_node(n)
    client, configure = request(probe, "configure")
    run_until(ros_executor, client.service_is_ready, 10, "change_state")
    start = time.monotonic()
    first = client.call_async(configure)
    run_until(ros_executor, lambda: node.lifecycle_state == "configuring", 5, "configuring")
    assert node.diagnostics.build().message.startswith("configuring: waiting")
    lister = probe.node.create_client(ListParameters, "/managed/list_parameters")
    answered = lister.call_async(ListParameters.Request())
    run_until(ros_executor, answered.done, 1.0, "list_parameters while configuring")
    second = client.call_async(request(probe, "activate")[1])
    run_until(ros_executor, second.done, 1.0, "the refusal of a second transition")
    assert not second.result().success and not first.done()
    run_until(ros_executor, first.done, 10, "the configure response")
    assert first.result().success and time.monotonic() - start > 1.5
    assert node.lifecycle_state == "inactive"
    assert node.calls == [("configure", False)]   # in the transition thread
    done = client.call_async(request(probe, "activate")[1])
    run_until(ros_executor, done.done, 5, "activate")
    assert done.result().success and node.calls[-1] == ("activate", True)   # on the executor thread


def test_a_callback_that_raises_ends_unconfigured_and_says_why(ros_context, ros_executor, capfd):
    node = Managed(context=ros_context, fail_in=("activate",))  # autostart: configure, then activate
    ros_executor.add_node(node)
    run_until(ros_executor, lambda: node.last_transition_error and not node._busy, 10, "the failed activate")
    assert node.lifecycle_state == "unconfigured"
    assert [name for name, _ in node.calls] == ["configure", "activate", "error"]
    status = node.diagnostics.build()
    assert status.level == bytes([ERROR]) and "activating failed: activate broke" in status.message
    err = capfd.readouterr().err
    assert "activating failed" in err and "RuntimeError: activate broke" in err   # with its traceback


def test_impossible_transition_requests_are_refused_and_logged_rate_limited(ros_context, ros_executor, capfd):
    """A client retrying a transition that cannot happen in a loop: every request answered (success
    false), one log line for the lot."""
    from node_graph import call

    node = make(ros_context)
    probe = Probe(ros_context)
    for n in (node, probe.node):
        ros_executor.add_node(n)
    client, req = request(probe, "activate")             # unconfigured: activate does not exist here
    answers = [call(ros_executor, client, req)[0].success for _ in range(20)]
    assert answers == [False] * 20 and node.lifecycle_state == "unconfigured"
    assert capfd.readouterr().err.count("no transition 'activate'") == 1
