"""The run files in config/ (what `predrel run`, `make demo` and the launch files start) name node
modules that exist and only parameters those nodes declare, with values they accept."""
import importlib
from pathlib import Path

import pytest
from ros_testing import require_ros

require_ros()

from predrel_ros.ros.kit.parameter_specs import resolve_values  # noqa: E402
from predrel_ros.ros.run.run_file import load_run_file, read_arguments  # noqa: E402

pytestmark = pytest.mark.ros

CONFIG = Path(__file__).resolve().parents[3] / "config"
RUN_FILES = sorted(CONFIG.glob("*.run.yaml"))


def test_the_three_run_files_are_shipped():
    assert [path.name for path in RUN_FILES] == ["demo.run.yaml", "perception.run.yaml", "replay_eval.run.yaml"]


@pytest.mark.parametrize("path", RUN_FILES, ids=lambda path: path.name)
def test_nodes_exist_and_declare_every_parameter_given(path, tmp_path):
    values = {argument.name: str(tmp_path) for argument in read_arguments(path) if argument.default is None}
    run = load_run_file(path, values)
    for spec in run.nodes:
        module = importlib.import_module(f"predrel_ros.ros.nodes.{spec.executable}")
        assert callable(module.main), spec.label
        declared = {parameter.name for parameter in module.PARAMETERS}
        unknown = sorted(set(spec.parameters) - declared)
        assert not unknown, f"{path.name}: {spec.label} does not declare {unknown}"
        resolve_values(module.PARAMETERS, spec.parameters)  # values of the right type and range


@pytest.mark.parametrize("path", RUN_FILES, ids=lambda path: path.name)
def test_perception_nodes_autostart_unless_the_argument_says_false(path, tmp_path):
    """Every perception node takes `autostart` from the run file's argument (default true); false leaves
    them unconfigured for a lifecycle manager."""
    required = {argument.name: str(tmp_path) for argument in read_arguments(path) if argument.default is None}
    for value, expected in ((None, True), ("false", False)):
        values = {**required, **({"autostart": value} if value else {})}
        nodes = [spec for spec in load_run_file(path, values).nodes if spec.executable == "perception_node"]
        assert nodes and all(spec.parameters["autostart"] is expected for spec in nodes), (path.name, value)
        assert all(f"autostart:={str(expected).lower()}" in spec.ros_arguments() for spec in nodes)


@pytest.mark.parametrize("path", [CONFIG / "demo.run.yaml", CONFIG / "replay_eval.run.yaml"], ids=lambda p: p.name)
def test_predicate_nodes_use_the_recordings_depth(path, tmp_path):
    """The replayed recording's depth and camera_info reach the predicate nodes (the 3D relations, as
    `predrel eval` measures them); replay_eval turns it off with predicate_depth:=false (a recording
    without depth), the demo's controlled-set bags always have it."""
    required = {argument.name: str(tmp_path) for argument in read_arguments(path) if argument.default is None}
    choices = [(None, True)] + ([("false", False)] if path.name == "replay_eval.run.yaml" else [])
    for value, expected in choices:
        values = {**required, **({"predicate_depth": value} if value else {})}
        nodes = [spec for spec in load_run_file(path, values).nodes if spec.executable == "predicate_node"]
        assert len(nodes) == 2 and all(spec.parameters["use_depth"] is expected for spec in nodes), (path.name, value)
        assert all(spec.parameters["lazy"] is False for spec in nodes)


def test_the_live_graphs_predicates_take_the_cameras_depth_with_predicate_depth():
    """perception.run.yaml: predicate_depth:=true gives the predicate node the same aligned depth and
    camera_info as perception (the 3D relations); without it the 2D rules."""
    for value, expected in ((None, False), ("true", True)):
        values = {"depth": "/cam/depth", "camera_info": "/cam/info", **({"predicate_depth": value} if value else {})}
        (node,) = [spec for spec in load_run_file(CONFIG / "perception.run.yaml", values).nodes
                   if spec.executable == "predicate_node"]
        assert node.parameters["use_depth"] is expected
        assert dict(node.remappings) == {"camera_info": "/cam/info", "depth/image_raw": "/cam/depth"}
