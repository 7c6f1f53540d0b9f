from pathlib import Path

import pytest

from predrel_ros.core.errors import UserError
from predrel_ros.ros.run.run_file import Argument, load_run_file, parse_assignments, read_arguments, resolve_run_file

EXAMPLE = """
description: replay and perceive
arguments:
  bag: {description: "bag to play"}
  rate: {default: 0.5, description: "rate factor"}
  schedule: {default: "sweep:occlusion:30"}
env: {OMP_NUM_THREADS: 1}
shutdown_timeout_s: 4
finish_grace_s: 2.5
nodes:
  - name: replay
    executable: replay_node
    params_files: [replay.yaml]
    parameters:
      source: $(var bag)
      rate: $(var rate)
      schedule: $(var schedule)
      label: run_$(var rate)
      sync: {slop_s: 0.02, queue: 5}
      kinds: [blur, occlusion]
      weights: [1, 2.5]
    required: true
    exit_ok: true
    output: log
  - name: perception
    executable: perception_node
    namespace: degraded
    remappings: {image_raw: /camera/$(var schedule)}
    required: false
    env: {ORT_THREADS: 2}
"""


@pytest.fixture
def run_path(tmp_path: Path) -> Path:
    (tmp_path / "replay.yaml").write_text("/**:\n  ros__parameters: {loop: false}\n")
    path = tmp_path / "example.run.yaml"
    path.write_text(EXAMPLE)
    return path


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "bad.run.yaml"
    path.write_text(text)
    return path


def test_a_run_file_resolves_arguments_types_paths_and_flags(run_path):
    run = load_run_file(run_path, {"bag": "/data/ep0"})
    assert run.description == "replay and perceive"
    assert run.arguments == (Argument("bag", None, "bag to play"), Argument("rate", "0.5", "rate factor"),
                             Argument("schedule", "sweep:occlusion:30", ""))
    assert run.env == {"OMP_NUM_THREADS": "1"} and run.shutdown_timeout_s == 4.0 and run.finish_grace_s == 2.5
    replay, perception = run.nodes
    assert replay.params_files == (run_path.parent / "replay.yaml",)
    assert replay.parameters == {"source": "/data/ep0", "rate": 0.5, "schedule": "sweep:occlusion:30",
                                 "label": "run_0.5", "sync.slop_s": 0.02, "sync.queue": 5,
                                 "kinds": ["blur", "occlusion"], "weights": [1.0, 2.5]}
    assert (replay.required, replay.exit_ok, replay.output, replay.label) == (True, True, "log", "replay")
    assert (perception.required, perception.exit_ok, perception.output) == (False, False, "prefixed")
    assert perception.label == "degraded/perception" and perception.package == "predrel_ros"
    assert perception.remappings == (("image_raw", "/camera/sweep:occlusion:30"),)
    assert perception.env == {"ORT_THREADS": "2"}
    assert run.node("degraded/perception") is perception


def test_ros_arguments_give_name_namespace_files_values_and_remappings(run_path):
    replay, perception = load_run_file(run_path, {"bag": "/data/ep0", "rate": "2"}).nodes
    assert replay.ros_arguments() == [
        "-r", "__node:=replay", "--params-file", str(run_path.parent / "replay.yaml"),
        "-p", 'source:="/data/ep0"', "-p", "rate:=2", "-p", 'schedule:="sweep:occlusion:30"',
        "-p", 'label:="run_2"', "-p", "sync.slop_s:=0.02", "-p", "sync.queue:=5",
        "-p", 'kinds:=["blur", "occlusion"]', "-p", "weights:=[1.0, 2.5]"]
    assert perception.ros_arguments() == ["-r", "__node:=perception", "-r", "__ns:=/degraded",
                                          "-r", "image_raw:=/camera/sweep:occlusion:30"]


def test_a_whole_value_substitution_is_read_as_yaml(run_path):
    replay = load_run_file(run_path, {"bag": "true", "rate": "'0.5'", "schedule": ""}).nodes[0]
    assert replay.parameters["source"] is True
    assert replay.parameters["rate"] == "0.5"
    assert replay.parameters["schedule"] == ""
    replay = load_run_file(run_path, {"bag": "demo: occlusion 0-5", "rate": "[1, 2]", "schedule": "null"}).nodes[0]
    assert replay.parameters["source"] == "demo: occlusion 0-5"
    assert replay.parameters["rate"] == [1, 2] and replay.parameters["schedule"] == "null"


def test_read_arguments_needs_no_values(run_path):
    assert [a.name for a in read_arguments(run_path)] == ["bag", "rate", "schedule"]


@pytest.mark.parametrize("values, message", [
    ({}, r"argument 'bag' has no default: give bag:=VALUE \(bag to play\)"),
    ({"bag": "x", "bagg": "y"}, r"unknown arguments \['bagg'\]; it declares \['bag', 'rate', 'schedule'\]"),
])
def test_argument_values_are_checked(run_path, values, message):
    with pytest.raises(UserError, match=message):
        load_run_file(run_path, values)


@pytest.mark.parametrize("text, message", [
    ("nodes: []", r"nodes: expected a non-empty list of nodes"),
    ("nodez: []", r"top level: unknown keys \['nodez'\]"),
    ("- a", r"a run file is a mapping"),
    ("nodes: [{name: a}]", r"nodes\[0\]: missing 'executable'"),
    ("nodes: [{name: a, executable: x, required: yes please}]", r"nodes\[0\] \(a\)\.required: expected true or false"),
    ("nodes: [{name: a-b, executable: x}]", r"nodes\[0\]\.name: a ROS node name is letters"),
    ("nodes: [{name: a, executable: lib/x}]", r"nodes\[0\] \(a\)\.executable: an executable name, not a path"),
    ("nodes: [{name: a, executable: x, output: tty}]", r"nodes\[0\] \(a\)\.output: expected one of"),
    ("nodes: [{name: a, executable: x, params_files: [nope.yaml]}]",
     r"nodes\[0\] \(a\)\.params_files\[0\]: no params file .*nope.yaml"),
    ("nodes: [{name: a, executable: x, parameters: {rate: $(var speed)}}]",
     r"nodes\[0\] \(a\)\.parameters\.rate: unknown argument 'speed' in \$\(var speed\)"),
    ("nodes: [{name: a, executable: x, parameters: {k: [1, x]}}]",
     r"nodes\[0\] \(a\)\.parameters\.k: a list parameter holds values of one type"),
    ("nodes: [{name: a, executable: x, parameters: {k: null}}]", r"nodes\[0\] \(a\)\.parameters\.k: expected a bool"),
    ("nodes: [{name: a, executable: x, namespace: 'a b'}]", r"nodes\[0\] \(a\)\.namespace: names separated"),
    ("nodes: [{name: a, executable: x}, {name: a, executable: y}]", r"repeated: \['a'\]"),
    ("shutdown_timeout_s: 0\nnodes: [{name: a, executable: x}]", r"shutdown_timeout_s: expected seconds"),
    ("finish_grace_s: -1\nnodes: [{name: a, executable: x}]", r"finish_grace_s: expected seconds in \[0, 600\]"),
    ("arguments: {x: {default: 1, help: y}}\nnodes: [{name: a, executable: x}]",
     r"arguments\.x: unknown keys \['help'\]"),
    ("nodes: [{name: a, executable: x, foo: 1}]", r"nodes\[0\]: unknown keys \['foo'\]"),
    ("nodes: [: x", r"not valid YAML"),
])
def test_a_bad_run_file_names_the_field(tmp_path, text, message):
    with pytest.raises(UserError, match=message):
        load_run_file(write(tmp_path, text))


def test_a_node_in_two_namespaces_is_two_nodes(tmp_path):
    run = load_run_file(write(tmp_path, "nodes: [{name: p, executable: x, namespace: clean},"
                                        " {name: p, executable: x, namespace: /degraded/}]"))
    assert [node.label for node in run.nodes] == ["clean/p", "degraded/p"]


def test_an_empty_params_file_entry_is_left_out(tmp_path):
    path = write(tmp_path, "arguments: {extra: {default: ''}}\n"
                           "nodes: [{name: p, executable: x, params_files: ['$(var extra)']}]")
    assert load_run_file(path).nodes[0].params_files == ()
    (tmp_path / "mine.yaml").write_text("/**:\n  ros__parameters: {a: 1}\n")
    assert load_run_file(path, {"extra": "mine.yaml"}).nodes[0].params_files == (tmp_path / "mine.yaml",)


def test_a_namespace_goes_in_front_of_every_node(tmp_path):
    path = write(tmp_path, "nodes: [{name: p, executable: x, namespace: clean}, {name: r, executable: y}]")
    run = load_run_file(path, namespace="/robot1/")
    assert [node.label for node in run.nodes] == ["robot1/clean/p", "robot1/r"]
    assert run.nodes[1].ros_arguments() == ["-r", "__node:=r", "-r", "__ns:=/robot1"]
    with pytest.raises(UserError, match=r"namespace: names separated by '/', got 'a b'"):
        load_run_file(path, namespace="a b")


def test_assignments_are_name_colon_equals_value():
    assert parse_assignments(["bag:=/a:=b", "rate:="]) == {"bag": "/a:=b", "rate": ""}
    with pytest.raises(UserError, match=r"expected NAME:=VALUE, got 'bag=/x'"):
        parse_assignments(["bag=/x"])


def test_run_files_are_found_by_path_or_shipped_name(run_path):
    assert resolve_run_file(run_path) == run_path
    with pytest.raises(UserError, match=r"config/no_such\.run\.yaml was not found"):
        resolve_run_file("no_such")
    with pytest.raises(UserError, match=r"run file /nonexistent/x\.run\.yaml does not exist"):
        resolve_run_file("/nonexistent/x.run.yaml")
