"""Run files: which nodes to start, with which parameters, for `predrel run` and the launch files.

A run file (YAML, `config/*.run.yaml`) is the one description of a node graph. `predrel run FILE`
starts it as processes (`nodes.runner`); `launch/*.launch.py` read the same file and turn each
entry into a launch_ros `Node`, so parameters live in one place.

    description: what the graph does
    arguments:                        # `predrel run FILE bag:=/x`, `ros2 launch ... bag:=/x`
      bag: {default: "", description: "rosbag2 folder to replay"}
      schedule: {default: "sweep:occlusion:30", description: "degradation schedule"}
    env: {OMP_NUM_THREADS: "1"}       # for every node (the DDS defaults of nodes.dds are added)
    shutdown_timeout_s: 10            # SIGINT, then SIGKILL after this long
    finish_grace_s: 3                 # after an exit_ok node finished, the others run this long
                                      #   (the last frames drain through the pipelines), default 0
    nodes:
      - name: replay                  # ROS node name (__node)
        executable: replay_node       # lib/<package>/<executable>; for predrel_ros the module
        package: predrel_ros          #   predrel_ros.ros.nodes.<executable> (default package)
        namespace: ""                 # "clean", "degraded", ...
        params_files: [replay.yaml]   # ROS params files, relative to the run file's folder; an entry
                                      #   that is empty after substitution is left out
        parameters:                   # inline values, applied after the params files
          source: $(var bag)
          schedule: $(var schedule)
        remappings: {pace: degraded/predicates}
        required: true                # the run fails when this node dies
        exit_ok: true                 # exiting with 0 is this node's normal end: the run then ends
        output: prefixed              # prefixed | screen | log  (see nodes.runner)
        env: {}

`$(var NAME)` is replaced by the argument's value in any string. A parameter value that is exactly
one `$(var NAME)` is read as YAML, so `rate:=0.5` is a float and `loop:=true` a bool, as in
`ros2 launch` (a value that reads as a mapping, such as "demo: occlusion", stays text). Errors name the
field (`nodes[2].parameters.rate`).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping

from predrel_ros.core.errors import UserError

PACKAGE = "predrel_ros"
RUN_FILE_SUFFIX = ".run.yaml"
OUTPUTS = ("prefixed", "screen", "log")
DEFAULT_SHUTDOWN_TIMEOUT_S = 10.0

_VAR = re.compile(r"\$\(var ([A-Za-z_][A-Za-z0-9_]*)\)")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TOP_KEYS = ("description", "arguments", "env", "shutdown_timeout_s", "finish_grace_s", "nodes")
_NODE_KEYS = ("name", "executable", "package", "namespace", "params_files", "parameters", "remappings",
              "required", "exit_ok", "output", "env")
_ARGUMENT_KEYS = ("default", "description")


@dataclass(frozen=True)
class Argument:
    """A value the user may set when starting the run (`NAME:=VALUE`); None default = must be set."""

    name: str
    default: str | None
    description: str = ""


@dataclass(frozen=True)
class NodeSpec:
    """One node process of a run, with every substitution resolved."""

    name: str
    executable: str
    package: str = PACKAGE
    namespace: str = ""
    params_files: tuple[Path, ...] = ()
    parameters: Mapping[str, Any] = field(default_factory=dict)  # flat: nested names joined with "."
    remappings: tuple[tuple[str, str], ...] = ()
    required: bool = True
    exit_ok: bool = False
    output: str = "prefixed"
    env: Mapping[str, str] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """The node's name with its namespace, as output prefixes and messages show it."""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    def ros_arguments(self) -> list[str]:
        """The arguments after `--ros-args` that give the process this node's name, namespace,
        parameters and remappings (params files first, then inline values, which win)."""
        arguments = ["-r", f"__node:={self.name}"]
        if self.namespace:
            arguments += ["-r", f"__ns:=/{self.namespace}"]
        for path in self.params_files:
            arguments += ["--params-file", str(path)]
        for name, value in self.parameters.items():
            # JSON is YAML: rcl reads `-p name:=value` values as YAML, so types survive
            arguments += ["-p", f"{name}:={json.dumps(value)}"]
        for source, target in self.remappings:
            arguments += ["-r", f"{source}:={target}"]
        return arguments


@dataclass(frozen=True)
class RunFile:
    path: Path
    description: str
    arguments: tuple[Argument, ...]
    env: Mapping[str, str]
    nodes: tuple[NodeSpec, ...]
    shutdown_timeout_s: float = DEFAULT_SHUTDOWN_TIMEOUT_S
    finish_grace_s: float = 0.0

    def node(self, label: str) -> NodeSpec:
        for spec in self.nodes:
            if spec.label == label:
                return spec
        raise KeyError(label)


def resolve_run_file(text: str | Path) -> Path:
    """A run file path, or the name of one shipped in config/ ("demo" -> config/demo.run.yaml)."""
    path = Path(text)
    if path.is_file():
        return path
    name = str(text)
    if "/" not in name and not path.suffix:
        from predrel_ros.core.package_files import config_file
        return config_file(name + RUN_FILE_SUFFIX)
    raise UserError(f"run file {text} does not exist")


def _read_yaml(path: Path) -> dict:
    import yaml

    try:
        data = yaml.safe_load(path.read_text())
    except OSError as error:
        raise UserError(f"cannot read the run file {path}: {error.strerror}") from None
    except yaml.YAMLError as error:
        raise UserError(f"{path}: not valid YAML: {error}") from None
    if not isinstance(data, dict):
        raise UserError(f"{path}: a run file is a mapping with a 'nodes' list")
    return data


class _Fields:
    """Reads and checks the fields of one run file, naming each bad one."""

    def __init__(self, path: Path, values: Mapping[str, str]) -> None:
        self.path = path
        self.values = values

    def fail(self, where: str, message: str) -> UserError:
        return UserError(f"{self.path}: {where}: {message}")

    def keys(self, data: Any, allowed: tuple[str, ...], where: str) -> dict:
        if not isinstance(data, dict):
            raise self.fail(where, f"expected a mapping, got {type(data).__name__}")
        unknown = [str(k) for k in data if k not in allowed]
        if unknown:
            raise self.fail(where, f"unknown keys {unknown}; expected some of {list(allowed)}")
        return data

    def text(self, value: Any, where: str, allow_empty: bool = True) -> str:
        if isinstance(value, (bool, int, float)) and not isinstance(value, str):
            value = json.dumps(value)
        if not isinstance(value, str):
            raise self.fail(where, f"expected a string, got {type(value).__name__}")
        value = self.substitute(value, where)
        if not allow_empty and not value:
            raise self.fail(where, "must not be empty")
        return value

    def substitute(self, text: str, where: str) -> str:
        def replace(match: re.Match) -> str:
            name = match.group(1)
            if name not in self.values:
                raise self.fail(where, f"unknown argument {name!r} in $(var {name}); the file declares "
                                       f"{sorted(self.values) or 'none'}")
            return self.values[name]
        return _VAR.sub(replace, text)

    def flag(self, value: Any, where: str) -> bool:
        if not isinstance(value, bool):
            raise self.fail(where, f"expected true or false, got {value!r}")
        return value

    def parameter(self, value: Any, where: str) -> Any:
        if isinstance(value, str):
            whole = _VAR.fullmatch(value.strip())
            text = self.substitute(value, where)
            if whole:
                import yaml
                try:
                    value = yaml.safe_load(text) if text.strip() else ""
                except yaml.YAMLError:
                    value = text
                if value is None or isinstance(value, dict):  # "a: b" is text, not a mapping
                    value = text
            else:
                value = text
        if isinstance(value, (list, tuple)):
            items = [self.parameter(item, f"{where}[{i}]") for i, item in enumerate(value)]
            kinds = {type(item) for item in items}
            if kinds - {bool, int, float, str} or ({bool, str} & kinds and len(kinds) > 1):
                raise self.fail(where, f"a list parameter holds values of one type (bools, numbers or "
                                       f"strings), got {value!r}")
            if kinds == {int, float}:
                items = [float(item) for item in items]
            return items
        if not isinstance(value, (bool, int, float, str)):
            raise self.fail(where, f"expected a bool, number, string or list of them, got {value!r}")
        return value

    def parameters(self, data: Any, where: str, prefix: str = "") -> dict[str, Any]:
        if not isinstance(data, dict):
            raise self.fail(where, f"expected a mapping of parameter names to values, got {data!r}")
        flat: dict[str, Any] = {}
        for key, value in data.items():
            name = f"{prefix}{key}"
            if not all(_NAME.fullmatch(part) for part in str(key).split(".")):
                raise self.fail(f"{where}.{key}", "not a valid parameter name")
            if isinstance(value, dict):
                flat.update(self.parameters(value, f"{where}.{key}", name + "."))
            else:
                flat[name] = self.parameter(value, f"{where}.{key}")
        return flat

    def string_map(self, data: Any, where: str) -> dict[str, str]:
        if data is None:
            return {}
        if not isinstance(data, dict):
            raise self.fail(where, f"expected a mapping, got {type(data).__name__}")
        return {str(key): self.text(value, f"{where}.{key}") for key, value in data.items()}


def read_arguments(path: Path | str) -> tuple[Argument, ...]:
    """The arguments a run file declares (launch files declare them as launch arguments)."""
    path = Path(path)
    data = _read_yaml(path)
    fields = _Fields(path, {})
    raw = data.get("arguments") or {}
    if not isinstance(raw, dict):
        raise fields.fail("arguments", "expected a mapping of argument names to {default, description}")
    arguments = []
    for name, spec in raw.items():
        where = f"arguments.{name}"
        if not _NAME.fullmatch(str(name)):
            raise fields.fail(where, "an argument name is letters, digits and underscores")
        spec = fields.keys(spec if spec is not None else {}, _ARGUMENT_KEYS, where)
        default = spec.get("default")
        if default is not None:
            if isinstance(default, (dict, list)):
                raise fields.fail(f"{where}.default", "expected a string, number or bool")
            default = default if isinstance(default, str) else json.dumps(default)
        arguments.append(Argument(str(name), default, str(spec.get("description", ""))))
    return tuple(arguments)


def parse_assignments(items: list[str] | tuple[str, ...]) -> dict[str, str]:
    """`NAME:=VALUE` command-line assignments (as ros2 launch takes them)."""
    values = {}
    for item in items:
        name, sep, value = item.partition(":=")
        if not sep or not _NAME.fullmatch(name):
            raise UserError(f"expected NAME:=VALUE, got {item!r}")
        values[name] = value
    return values


def load_run_file(path: Path | str, values: Mapping[str, str] | None = None, namespace: str = "") -> RunFile:
    """Read, check and resolve a run file with the argument `values` (defaults for the others).

    `namespace` is put in front of every node's namespace (one robot's graph under `/robot1`); the
    run files use relative topic names, so their connections stay inside that namespace.
    """
    path = Path(path)
    namespace = namespace.strip("/")
    if namespace and not all(_NAME.fullmatch(part) for part in namespace.split("/")):
        raise UserError(f"namespace: names separated by '/', got {namespace!r}")
    declared = read_arguments(path)
    values = dict(values or {})
    names = {argument.name for argument in declared}
    unknown = sorted(set(values) - names)
    if unknown:
        raise UserError(f"{path}: unknown arguments {unknown}; it declares {sorted(names) or 'none'}")
    for argument in declared:
        if argument.name not in values:
            if argument.default is None:
                raise UserError(f"{path}: argument {argument.name!r} has no default: give "
                                f"{argument.name}:=VALUE ({argument.description or 'no description'})")
            values[argument.name] = argument.default
    data = _read_yaml(path)
    fields = _Fields(path, values)
    fields.keys(data, _TOP_KEYS, "top level")
    timeout = data.get("shutdown_timeout_s", DEFAULT_SHUTDOWN_TIMEOUT_S)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= 600:
        raise fields.fail("shutdown_timeout_s", f"expected seconds in (0, 600], got {timeout!r}")
    grace = data.get("finish_grace_s", 0.0)
    if isinstance(grace, bool) or not isinstance(grace, (int, float)) or not 0 <= grace <= 600:
        raise fields.fail("finish_grace_s", f"expected seconds in [0, 600], got {grace!r}")
    raw_nodes = data.get("nodes")
    if not isinstance(raw_nodes, list) or not raw_nodes:
        raise fields.fail("nodes", "expected a non-empty list of nodes")
    nodes = tuple(_node(fields, raw, f"nodes[{i}]") for i, raw in enumerate(raw_nodes))
    if namespace:
        nodes = tuple(replace(node, namespace="/".join(filter(None, (namespace, node.namespace)))) for node in nodes)
    labels = [node.label for node in nodes]
    repeated = sorted({label for label in labels if labels.count(label) > 1})
    if repeated:
        raise fields.fail("nodes", f"node names must be unique within a namespace; repeated: {repeated}")
    return RunFile(path=path, description=str(data.get("description", "")).strip(), arguments=declared,
                   env=fields.string_map(data.get("env"), "env"), nodes=nodes,
                   shutdown_timeout_s=float(timeout), finish_grace_s=float(grace))


def _node(fields: _Fields, raw: Any, where: str) -> NodeSpec:
    raw = fields.keys(raw, _NODE_KEYS, where)
    for key in ("name", "executable"):
        if key not in raw:
            raise fields.fail(where, f"missing {key!r}")
    name = fields.text(raw["name"], f"{where}.name", allow_empty=False)
    if not _NAME.fullmatch(name):
        raise fields.fail(f"{where}.name", f"a ROS node name is letters, digits and underscores, got {name!r}")
    where = f"{where} ({name})"
    executable = fields.text(raw["executable"], f"{where}.executable", allow_empty=False)
    if "/" in executable:
        raise fields.fail(f"{where}.executable", f"an executable name, not a path: {executable!r}")
    package = fields.text(raw.get("package", PACKAGE), f"{where}.package", allow_empty=False)
    namespace = fields.text(raw.get("namespace", ""), f"{where}.namespace").strip("/")
    if namespace and not all(_NAME.fullmatch(part) for part in namespace.split("/")):
        raise fields.fail(f"{where}.namespace", f"names separated by '/', got {namespace!r}")
    files = raw.get("params_files") or []
    if not isinstance(files, list):
        raise fields.fail(f"{where}.params_files", "expected a list of params file paths")
    params_files = []
    for i, item in enumerate(files):
        file_where = f"{where}.params_files[{i}]"
        text = fields.text(item, file_where)
        if not text:
            continue  # an optional file left empty, e.g. `$(var params_file)` with default ""
        file_path = Path(text).expanduser()
        if not file_path.is_absolute():
            file_path = fields.path.parent / file_path
        if not file_path.is_file():
            raise fields.fail(file_where, f"no params file {file_path}")
        params_files.append(file_path)
    remappings = fields.string_map(raw.get("remappings"), f"{where}.remappings")
    for source, target in remappings.items():
        if not source or not target:
            raise fields.fail(f"{where}.remappings", f"empty topic name in {source!r}: {target!r}")
    output = fields.text(raw.get("output", "prefixed"), f"{where}.output")
    if output not in OUTPUTS:
        raise fields.fail(f"{where}.output", f"expected one of {list(OUTPUTS)}, got {output!r}")
    return NodeSpec(
        name=name, executable=executable, package=package, namespace=namespace,
        params_files=tuple(params_files),
        parameters=fields.parameters(raw.get("parameters") or {}, f"{where}.parameters"),
        remappings=tuple(remappings.items()),
        required=fields.flag(raw.get("required", True), f"{where}.required"),
        exit_ok=fields.flag(raw.get("exit_ok", False), f"{where}.exit_ok"),
        output=output, env=fields.string_map(raw.get("env"), f"{where}.env"))
