"""What a node's parameters are: name, type, default, description, valid values (no rclpy here).

Each node module lists its parameters as `ParameterSpec`s; `ros.kit.parameters.NodeParameters`
declares them on the rclpy node (descriptions, ranges, read-only unless `runtime`), and the tables of
docs/nodes.md are generated from the same specs (`ros.kit.node_docs`), so the documentation cannot drift.

Validation refuses a bad value with a message that names the parameter, the value and what is
allowed; at start that becomes a `UserError` (exit 1), at runtime the reason of a refused
`set_parameters` call. Integers are accepted for float parameters (`rate: 1` in YAML).

`read_params_file(path, node_name, namespace)` reads the values a ROS params file
(`<node>: ros__parameters: {...}`, `/**` wildcards) gives one node, for tools and tests that need
them without starting ROS.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from predrel_ros.core.errors import UserError

#: parameter types: the name used in specs -> (python type of a value, item type for arrays)
TYPES = ("bool", "int", "float", "str", "bool[]", "int[]", "float[]", "str[]")
_SCALAR = {"bool": bool, "int": int, "float": float, "str": str}


def _type_of(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    if isinstance(value, (list, tuple)) and value:
        return _type_of(value[0]) + "[]"
    raise ValueError(f"cannot infer a parameter type from {value!r}; give type= explicitly")


@dataclass(frozen=True)
class ParameterSpec:
    """One parameter of a node.

    type: one of TYPES; inferred from `default` when empty.
    minimum / maximum: inclusive bounds of numeric parameters (and of every item of numeric arrays).
    choices: the allowed values of a string parameter.
    runtime: may change while the node runs (`ros2 param set`); all others are read-only.
    fixed_because: why a read-only parameter cannot change at runtime (said in its descriptor and docs).
    check: extra validation of a value (already of the right type); raises ValueError saying why.
    """

    name: str
    default: Any
    description: str
    type: str = ""
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    runtime: bool = False
    fixed_because: str = ""
    check: Callable[[Any], None] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not self.name or not self.description:
            raise ValueError(f"parameter {self.name!r}: a name and a description are required")
        kind = self.type or _type_of(self.default)
        if kind not in TYPES:
            raise ValueError(f"parameter {self.name}: type {kind!r} is not one of {TYPES}")
        object.__setattr__(self, "type", kind)
        object.__setattr__(self, "choices", tuple(self.choices))
        if self.runtime and self.fixed_because:
            raise ValueError(f"parameter {self.name}: a runtime parameter is not fixed (fixed_because)")
        if self.choices and kind != "str":
            raise ValueError(f"parameter {self.name}: choices apply to str parameters only")
        if (self.minimum is not None or self.maximum is not None) and self.item_type not in ("int", "float"):
            raise ValueError(f"parameter {self.name}: minimum/maximum apply to numeric parameters only")
        object.__setattr__(self, "default", self.validate(self.default))

    @property
    def text(self) -> str:
        """The description, with why it is read-only where the spec says so."""
        if self.runtime or not self.fixed_because:
            return self.description
        return f"{self.description}. Read-only: {self.fixed_because}"

    @property
    def is_array(self) -> bool:
        return self.type.endswith("[]")

    @property
    def item_type(self) -> str:
        return self.type[:-2] if self.is_array else self.type

    def validate(self, value: Any) -> Any:
        """`value` as this parameter's Python type (int -> float for floats, tuple -> list for
        arrays), or ValueError naming the parameter and what is allowed."""
        if self.is_array:
            if not isinstance(value, (list, tuple)):
                raise ValueError(f"parameter {self.name}: expected a list of {self.item_type}, got {value!r}")
            value = [self._scalar(item, f"{self.name}[{i}]") for i, item in enumerate(value)]
        else:
            value = self._scalar(value, self.name)
        if self.check is not None:
            try:
                self.check(value)
            except ValueError as error:
                raise ValueError(f"parameter {self.name}: {error}") from None
        return value

    def _scalar(self, value: Any, where: str) -> Any:
        kind = self.item_type
        if kind == "float" and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        expected = _SCALAR[kind]
        if not isinstance(value, expected) or (kind == "int" and isinstance(value, bool)):
            raise ValueError(f"parameter {where}: expected {kind}, got {type(value).__name__} {value!r}")
        if kind == "float" and not math.isfinite(value):
            raise ValueError(f"parameter {where}: must be a finite number, got {value!r}")
        if self.minimum is not None and value < self.minimum:
            raise ValueError(f"parameter {where}: {value!r} is below the minimum {self.minimum:g}")
        if self.maximum is not None and value > self.maximum:
            raise ValueError(f"parameter {where}: {value!r} is above the maximum {self.maximum:g}")
        if self.choices and value not in self.choices:
            raise ValueError(f"parameter {where}: {value!r} is not one of {', '.join(self.choices)}")
        return value

    def allowed(self) -> str:
        """The allowed values in words (the docs/nodes.md tables)."""
        if self.choices:
            return ", ".join(self.choices)
        low, high = _number(self.minimum), _number(self.maximum)
        if low is not None and high is not None:
            return f"{low} .. {high}"
        if low is not None:
            return f">= {low}"
        if high is not None:
            return f"<= {high}"
        return ""


def _number(value: float | None) -> str | None:
    """A bound as written: 4294967295, 0.5, 1000."""
    if value is None:
        return None
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def resolve_values(specs: Sequence[ParameterSpec], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """Each parameter's value: the override when given, else its default; every invalid override
    is reported at once in one UserError."""
    values, errors = {}, []
    for spec in specs:
        try:
            values[spec.name] = spec.validate(overrides[spec.name]) if spec.name in overrides else spec.default
        except ValueError as error:
            errors.append(str(error))
    if errors:
        raise UserError("invalid parameters:\n  " + "\n  ".join(errors))
    return values


def check_unique(specs: Iterable[ParameterSpec]) -> tuple[ParameterSpec, ...]:
    """The specs as a tuple; ValueError when a name repeats (two modules declaring the same one)."""
    specs = tuple(specs)
    names = [spec.name for spec in specs]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"parameters declared twice: {repeated}")
    return specs


# ------------------------------------------------------------------------- ROS params files

def node_matches(key: str, node_name: str, namespace: str = "") -> bool:
    """Whether a params-file key names node `namespace/node_name`, as rcl matches them: keys are
    fully qualified (`replay` is `/replay`, the root namespace only), `*` matches one name, `**`
    any number of namespace levels (`/**` every node, `/**/replay` every node named replay)."""
    import re

    regex = ""
    for token in key.strip("/").split("/"):
        if token == "**":
            regex += "(?:/[^/]+)*"
        else:
            regex += "/" + re.escape(token).replace(r"\*", "[^/]*")
    levels = [part for part in namespace.strip("/").split("/") if part]
    return re.fullmatch(regex, "/" + "/".join(levels + [node_name])) is not None


def read_params_file(path: str | Path, node_name: str, namespace: str = "") -> dict[str, Any]:
    """The ros__parameters a ROS 2 params file gives node `namespace/node_name` (later matching
    sections override earlier ones, as in rcl). Nested mappings become dotted names."""
    from predrel_ros.core.config_io import read_data

    path = Path(path)
    try:
        data = read_data(path)
    except ValueError as error:
        raise UserError(f"params file: {error}") from None
    if not isinstance(data, dict):
        raise UserError(f"{path}: a params file maps node names to {{ros__parameters: ...}}")
    values: dict[str, Any] = {}
    for key, section in data.items():
        if not node_matches(str(key), node_name, namespace):
            continue
        if not isinstance(section, dict) or "ros__parameters" not in section:
            raise UserError(f"{path}: section {key!r} has no ros__parameters mapping")
        values.update(_flatten(section["ros__parameters"] or {}))
    return values


def _flatten(mapping: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in mapping.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(_flatten(value, name + "."))
        else:
            flat[name] = value
    return flat
