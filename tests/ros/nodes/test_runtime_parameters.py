"""Every runtime parameter of the nodes changes over DDS (SetParameters, what `ros2 param set` sends)
and takes effect; a read-only one is refused and its descriptor says why (issue 15). The perception
node's thresholds are tested with its lifecycle (test_perception_lifecycle.py)."""
import pytest
from ros_testing import require_ros

require_ros()

from node_graph import Probe, run_until, set_parameters  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402

from predrel_ros.action.model import DEFAULT_MODEL  # noqa: E402
from predrel_ros.core.package_files import config_path  # noqa: E402
from predrel_ros.ros.nodes import (  # noqa: E402
    action_node,
    dashboard_node,
    degrade_node,
    predicate_node,
    reliability_node,
    replay_node,
)

pytestmark = pytest.mark.ros

#: per node module: the node class, its start parameters, and one read-only parameter to try (None:
#: every parameter of the node changes at runtime)
NODES = {
    "replay": (replay_node, replay_node.ReplayNode, {"max_frames": 1}, "seed"),
    "degrade": (degrade_node, degrade_node.DegradeNode, {}, "seed"),
    "predicate": (predicate_node, predicate_node.PredicateNode, {}, None),
    # no trust model: the shipped one was fitted over 30-frame windows and refuses another window (tested below)
    "reliability": (reliability_node, reliability_node.ReliabilityNode, {"trust_model": ""}, "reference_mode"),
    "action": (action_node, action_node.ActionNode, {}, "use_reliability"),
    "dashboard": (dashboard_node, dashboard_node.DashboardNode, {"display": "lines"}, "reliability_topics"),
}
#: valid values of string parameters other than their defaults
STRINGS = {"schedule": "blur:2", "source_name": "renamed", "title": "a title",
           # the same files, named another way
           "predicate.config": str(config_path("predicates.yaml")), "action.config": str(config_path("action.yaml")),
           "action.model": str(DEFAULT_MODEL), "reliability.config": str(config_path("predicates.yaml")),
           "reliability.clean_profile": "",                # set in the test: a profile of the changed window
           "reliability.pds_mode": "mean_step"}


def other_value(spec, which):
    """A valid value of `spec` (a parameter of node `which`) other than its default."""
    if spec.type == "bool":
        return not spec.default
    if spec.type == "str":
        return STRINGS.get(f"{which}.{spec.name}", STRINGS.get(spec.name))
    if spec.type == "int":
        return spec.default + 1 if spec.maximum is None or spec.default < spec.maximum else spec.default - 1
    high = spec.maximum if spec.maximum is not None else 2 * spec.default + 1
    return (spec.default + high) / 2


def applied(node, name):
    """Where the node keeps what a runtime parameter changes, beyond `node.params`."""
    effects = {
        "restart_after": lambda: [order.restart_after for order in (
            [node.monitor.order] if hasattr(node, "monitor") else
            [node.order, node.report_order] if hasattr(node, "report_order") else [node.order])],
        "match_iou": lambda: node.monitor.config.match_iou,
        "min_rule_checks": lambda: node.monitor.config.min_rule_checks,
        "refresh_hz": lambda: 1e9 / node.refresh.timer_period_ns,
        "line_period_s": lambda: node.display.line_period_s,
        "schedule": lambda: node.twin.degrader.schedule,
        # loaded anew: the predicate node's extractor, the action node's recognizer
        **{name: lambda: getattr(node, "extractor", None) or getattr(node, "recognizer", None) or node.monitor
           for name in ("config", "model", "use_confidence")},
        **{name: lambda: node.monitor for name in ("window", "clean_profile", "match_buffer", "tpc_tolerance",
                                                   "pds_mode")},
    }
    return effects[name]() if name in effects else None


@pytest.mark.parametrize("which", list(NODES))
def test_runtime_parameters_change_over_dds_and_the_others_say_why_not(
        ros_context, ros_executor, tiny_bag, monkeypatch, tmp_path, which):
    import io

    monkeypatch.setattr("sys.stdout", io.StringIO())        # the dashboard's lines
    module, node_class, start, read_only = NODES[which]
    if which == "replay":
        start = {**start, "source": str(tiny_bag)}
    node = node_class(context=ros_context, parameter_overrides=[Parameter(k, value=v) for k, v in start.items()])
    probe = Probe(ros_context)
    for n in (node, probe.node):
        ros_executor.add_node(n)
    name = node.get_fully_qualified_name()
    runtime = [spec for spec in module.PARAMETERS if spec.runtime]
    assert runtime, f"{which} has no runtime parameter"
    before = {spec.name: applied(node, spec.name) for spec in runtime}
    values = {spec.name: other_value(spec, which) for spec in runtime}
    if which == "reliability":                              # a clean profile measured over the new window
        from predrel_ros.reliability.trust import CleanProfile

        CleanProfile({}, window=values["window"]).save(tmp_path / "profile.json")
        values["clean_profile"] = str(tmp_path / "profile.json")
    results = set_parameters(ros_executor, probe, name, values)
    assert [(n, r.successful, r.reason) for n, r in zip(values, results)] == [(n, True, "") for n in values]
    for spec in runtime:
        assert node.params[spec.name] == pytest.approx(values[spec.name]) if spec.type == "float" else \
            node.params[spec.name] == values[spec.name], spec.name
        if before[spec.name] is not None:
            assert applied(node, spec.name) != before[spec.name], f"{spec.name} changed nothing"
    if read_only is not None:
        spec = next(s for s in module.PARAMETERS if s.name == read_only)
        refused, = set_parameters(ros_executor, probe, name, {read_only: other_value_or_same(spec)})
        assert not refused.successful and "read-only" in refused.reason
        assert spec.fixed_because in node.describe_parameter(read_only).description
    if which == "replay":
        run_until(ros_executor, node.finished.is_set, 10, "the replay to finish")


def other_value_or_same(spec):
    """A value to try on a read-only parameter (refused whatever it is)."""
    return spec.default + 1 if spec.type == "int" else spec.default


def test_a_window_the_trust_model_was_not_fitted_with_is_refused_with_the_reason(ros_context):
    node = reliability_node.ReliabilityNode(context=ros_context)
    try:
        result = node.set_parameters([Parameter("window", value=45)])[0]
        assert not result.successful and "window" in result.reason and node.params["window"] == 30
    finally:
        node.destroy_node()
