"""The shipped params files list every parameter the nodes declare, with its default (what runs and
launch files change goes in run files), so a file and the code cannot disagree unnoticed."""
from pathlib import Path

import pytest
from ros_testing import require_ros

require_ros()

from predrel_ros.ros.kit.parameter_specs import read_params_file, resolve_values  # noqa: E402
from predrel_ros.ros.nodes import (  # noqa: E402
    action_node,
    dashboard_node,
    degrade_node,
    perception_node,
    predicate_node,
    reliability_node,
    replay_node,
)

CONFIG = Path(__file__).resolve().parents[3] / "config"


@pytest.mark.parametrize("module, file, namespaces", [
    (replay_node, "replay.yaml", [""]),
    (degrade_node, "degrade.yaml", ["", "camera"]),
    (perception_node, "perception.yaml", ["clean", "degraded"]),
    (predicate_node, predicate_node.PARAMS_FILE, ["clean", "degraded", ""]),
    (reliability_node, reliability_node.PARAMS_FILE, [""]),
    (action_node, action_node.PARAMS_FILE, ["", "degraded"]),
    (dashboard_node, "dashboard.yaml", [""]),
])
def test_params_file_matches_the_declared_parameters(module, file, namespaces):
    declared = {spec.name for spec in module.PARAMETERS}
    for namespace in namespaces:
        values = read_params_file(CONFIG / file, module.NODE_NAME, namespace)
        assert set(values) == declared, f"{file}: keys differ from {module.__name__}.PARAMETERS"
        resolved = resolve_values(module.PARAMETERS, values)  # raises on an invalid value
        assert resolved == {spec.name: spec.default for spec in module.PARAMETERS}
