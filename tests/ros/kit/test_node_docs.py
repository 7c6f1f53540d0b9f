"""The node tables of docs/nodes.md are generated from the code, and the code's TopicSpecs are the
nodes' real endpoints."""
from pathlib import Path

import pytest
from ros_testing import require_ros

require_ros()

from node_graph import activated, scene_model  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402

from predrel_ros.ros.kit import node_docs  # noqa: E402
from predrel_ros.ros.kit.topic_specs import PUBLISHES  # noqa: E402
from predrel_ros.ros.nodes.degrade_node import DegradeNode  # noqa: E402
from predrel_ros.ros.nodes.perception_node import PerceptionNode  # noqa: E402
from predrel_ros.ros.nodes.replay_node import ReplayNode  # noqa: E402

pytestmark = pytest.mark.ros

ROOT = Path(__file__).resolve().parents[3]
NODES_DOC = ROOT / node_docs.DOC
#: endpoints rclpy gives every node
BUILTIN = {"/rosout", "/parameter_events"}


def test_node_doc_tables_are_up_to_date():
    text = NODES_DOC.read_text()
    assert node_docs.update(text) == text, \
        "docs/nodes.md node tables are out of date: python -m predrel_ros.ros.kit.node_docs docs/nodes.md"


def test_every_parameter_changes_at_runtime_or_says_why_it_cannot():
    """Issue 15: what can change at runtime does, the rest are read-only and say why (in the descriptor
    `ros2 param describe` shows and in docs/nodes.md)."""
    import importlib

    silent = [f"{node}.{spec.name}" for node in node_docs.DOCUMENTED_NODES
              for spec in importlib.import_module(f"predrel_ros.ros.nodes.{node}").PARAMETERS
              if not spec.runtime and not spec.fixed_because]
    assert silent == []


def test_the_readme_holds_no_generated_tables():
    assert "<!-- BEGIN generated:" not in (ROOT / "README.md").read_text()


def stale(text: str) -> str:
    """`text` with the first generated table row changed, as after a node's spec changed."""
    start = text.index("<!-- BEGIN generated:")
    row = text.index("\n| `", start) + 1
    return text[:row] + "| `renamed" + text[row + len("| `"):]


def test_update_rewrites_a_stale_table(tmp_path):
    text = NODES_DOC.read_text()
    assert node_docs.update(stale(text)) == text
    doc = tmp_path / "nodes.md"
    doc.write_text(stale(text))
    assert node_docs.main(["--check", str(doc)]) == 1
    assert node_docs.main([str(doc)]) == 0
    assert doc.read_text() == text
    assert node_docs.main(["--check", str(doc)]) == 0


def test_update_refuses_a_doc_without_the_markers():
    with pytest.raises(ValueError, match="no generated block"):
        node_docs.update("# nothing here\n", ["replay_node"])


def endpoints(node):
    publishes = {p.topic_name for p in node.publishers} - BUILTIN
    subscribes = {s.topic_name for s in node.subscriptions} - BUILTIN
    return publishes, subscribes


def transport_chosen(node, topic) -> bool:
    """False for a topic of an image transport the node's parameters did not choose."""
    for part in topic.condition.split(","):
        name, _, value = part.strip().partition(" ")
        if name in ("image_transport", "depth_transport") and node.params[name] != value:
            return False
    return True


def specified(node, module_topics):
    topics = [t for t in module_topics if transport_chosen(node, t)]
    return ({node.resolve_topic_name(t.name) for t in topics if t.direction == PUBLISHES},
            {node.resolve_topic_name(t.name) for t in topics if t.direction != PUBLISHES})


@pytest.mark.parametrize("make", ["replay", "degrade", "degrade_compressed", "perception", "predicates",
                                  "reliability", "action", "dashboard"])
def test_topic_specs_are_the_real_endpoints(ros_context, ros_executor, tiny_bag, tmp_path, make):
    from predrel_ros.ros.nodes import (
        action_node,
        dashboard_node,
        degrade_node,
        perception_node,
        predicate_node,
        reliability_node,
        replay_node,
    )

    if make == "replay":
        module, node = replay_node, ReplayNode(context=ros_context, parameter_overrides=[
            Parameter("source", value=str(tiny_bag)), Parameter("max_frames", value=1)])
    elif make == "degrade":
        module, node = degrade_node, DegradeNode(context=ros_context, namespace="cam", parameter_overrides=[
            Parameter("use_depth", value=True)])
    elif make == "degrade_compressed":
        module, node = degrade_node, DegradeNode(context=ros_context, namespace="cam", parameter_overrides=[
            Parameter("use_depth", value=True), Parameter("image_transport", value="compressed"),
            Parameter("depth_transport", value="compressedDepth")])
    elif make == "predicates":
        module, node = predicate_node, predicate_node.PredicateNode(
            context=ros_context, namespace="degraded", parameter_overrides=[Parameter("use_depth", value=True)])
    elif make == "action":
        module, node = action_node, action_node.ActionNode(context=ros_context)
    elif make == "dashboard":
        module, node = dashboard_node, dashboard_node.DashboardNode(context=ros_context, parameter_overrides=[
            Parameter("summary_dir", value=str(tmp_path / "summary")), Parameter("display", value="lines")])
    elif make == "reliability":   # the reference topics are clean_twin's, the image self mode's (with a trust model)
        twin, own = (reliability_node.ReliabilityNode(context=ros_context, parameter_overrides=[
            Parameter("reference_mode", value=mode)]) for mode in ("clean_twin", "self"))
        try:
            (twin_out, twin_in), (own_out, own_in) = endpoints(twin), endpoints(own)
            assert (twin_out | own_out, twin_in | own_in) == specified(twin, reliability_node.TOPICS)
            assert "/image" in own_in and "/image" not in twin_in and "/reference" not in own_in
        finally:
            twin.destroy_node()
            own.destroy_node()
        return
    else:
        module, node = perception_node, PerceptionNode(context=ros_context, namespace="degraded", parameter_overrides=[
            Parameter("model_path", value=str(scene_model(tmp_path))), Parameter("use_depth", value=True)])
        activated(node, ros_executor)   # a managed node: its inputs are subscribed once active
    try:
        assert endpoints(node) == specified(node, module.TOPICS)
    finally:
        node.destroy_node()
