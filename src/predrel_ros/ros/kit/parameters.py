"""Declaring a node's `ParameterSpec`s on an rclpy node, validating them at start and at runtime.

    self.params = NodeParameters(self, PARAMETERS, on_change=self._on_parameters)
    rate = self.params["rate"]

At start every value (from `--ros-args -p`, a params file, or the default) is validated; all invalid
values are reported in one `UserError` (`run_node`: printed, exit 1). Parameters whose spec says
`runtime` may change later (`ros2 param set`, rqt_reconfigure): the new values are validated first
by their specs, then by the node's `check_change({name: value})` when it has one (what only the node
can judge, e.g. whether a config file loads; its ValueError or UserError refuses the change), and a
refused change gets `successful=False` and the reason; then `on_change({name: value})` runs.
The others are declared read-only. Integers are accepted for float parameters. Parameters set for
the node but not declared by it (a typo in a params file) are logged as a warning.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor, ParameterType, SetParametersResult
from rclpy.parameter import Parameter

from predrel_ros.core.errors import UserError
from predrel_ros.ros.kit.parameter_specs import ParameterSpec, check_unique, resolve_values

_PARAMETER_TYPES = {
    "bool": ParameterType.PARAMETER_BOOL, "int": ParameterType.PARAMETER_INTEGER,
    "float": ParameterType.PARAMETER_DOUBLE, "str": ParameterType.PARAMETER_STRING,
    "bool[]": ParameterType.PARAMETER_BOOL_ARRAY, "int[]": ParameterType.PARAMETER_INTEGER_ARRAY,
    "float[]": ParameterType.PARAMETER_DOUBLE_ARRAY, "str[]": ParameterType.PARAMETER_STRING_ARRAY,
}
#: parameters rclpy declares on every node
_BUILTIN = {"use_sim_time", "start_type_description_service"}


def descriptor(spec: ParameterSpec) -> ParameterDescriptor:
    """The ParameterDescriptor of a spec: type, description, allowed values, range, read-only."""
    text = spec.text + (f" (one of: {', '.join(spec.choices)})" if spec.choices else "")
    result = ParameterDescriptor(name=spec.name, type=_PARAMETER_TYPES[spec.type], description=text,
                                 read_only=not spec.runtime)
    if spec.choices:
        result.additional_constraints = f"one of: {', '.join(spec.choices)}"
    # A descriptor range needs both ends; one-sided bounds are checked by the spec alone (and read
    # better in its message than rclpy's with a made-up other end).
    if spec.minimum is not None and spec.maximum is not None and not spec.is_array:
        if spec.item_type == "int":
            result.integer_range = [IntegerRange(from_value=int(spec.minimum), to_value=int(spec.maximum), step=0)]
        else:
            result.floating_point_range = [FloatingPointRange(from_value=float(spec.minimum),
                                                              to_value=float(spec.maximum), step=0.0)]
    return result


class NodeParameters:
    """The validated values of a node's parameters, kept current when runtime parameters change."""

    def __init__(self, node, specs: Sequence[ParameterSpec],
                 on_change: Callable[[dict[str, Any]], None] | None = None,
                 check_change: Callable[[dict[str, Any]], None] | None = None) -> None:
        self._node = node
        self.specs = {spec.name: spec for spec in check_unique(specs)}
        self._on_change = on_change
        self._check_change = None               # set once declared: declaring is no change
        overrides = self._overrides()
        self.values: dict[str, Any] = resolve_values(list(self.specs.values()), overrides)
        unknown = sorted(set(overrides) - set(self.specs) - _BUILTIN)
        if unknown:
            node.get_logger().warning(
                f"ignoring parameters this node does not declare: {', '.join(unknown)} (a typo, or a "
                f"params file section meant for another node?); it declares {', '.join(sorted(self.specs))}")
        node.add_pre_set_parameters_callback(self._coerce)
        node.add_on_set_parameters_callback(self._validate)
        for spec in self.specs.values():
            node.declare_parameter(spec.name, self.values[spec.name], descriptor(spec), ignore_override=True)
        node.add_post_set_parameters_callback(self._applied)  # after declaring: that is no change
        self._check_change = check_change

    def _overrides(self) -> dict[str, Any]:
        """The values given for this node on the command line or in params files.

        rclpy keeps them in Node._parameter_overrides and applies them as they are, so an integer
        given for a float parameter would fail; they are read here to validate (and convert) them
        with the specs first, then declared with ignore_override.
        """
        overrides: Mapping[str, Parameter] = getattr(self._node, "_parameter_overrides", {})
        return {name: parameter.value for name, parameter in overrides.items()}

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    def _coerce(self, parameters: list[Parameter]) -> list[Parameter]:
        """`ros2 param set node rate 2` sends an integer: make it the float the parameter is."""
        coerced = []
        for parameter in parameters:
            spec = self.specs.get(parameter.name)
            if spec is not None and spec.item_type == "float":
                if parameter.type_ == Parameter.Type.INTEGER:
                    parameter = Parameter(parameter.name, Parameter.Type.DOUBLE, float(parameter.value))
                elif parameter.type_ == Parameter.Type.INTEGER_ARRAY:
                    parameter = Parameter(parameter.name, Parameter.Type.DOUBLE_ARRAY,
                                          [float(v) for v in parameter.value])
            coerced.append(parameter)
        return coerced

    def _validate(self, parameters: list[Parameter]) -> SetParametersResult:
        reasons, values = [], {}
        for parameter in parameters:
            spec = self.specs.get(parameter.name)
            if spec is None:
                continue
            try:
                values[parameter.name] = spec.validate(_plain(parameter.value))
            except ValueError as error:
                reasons.append(str(error))
        if not reasons and values and self._check_change is not None:
            try:
                self._check_change(values)
            except (ValueError, UserError) as error:
                reasons.append(str(error))
            except Exception as error:  # a change the node cannot take is refused, never an error in the service
                reasons.append(f"the node could not take it: {error!r}")
        return SetParametersResult(successful=not reasons, reason="; ".join(reasons))

    def _applied(self, parameters: list[Parameter]) -> None:
        changed = {}
        for parameter in parameters:
            spec = self.specs.get(parameter.name)
            if spec is not None:
                changed[parameter.name] = spec.validate(_plain(parameter.value))
        if not changed:
            return
        self.values.update(changed)
        self._node.get_logger().info("parameters changed: " + ", ".join(f"{k}={v!r}" for k, v in changed.items()))
        if self._on_change is not None:
            self._on_change(changed)


def _plain(value: Any) -> Any:
    """rclpy gives arrays as array.array or numpy arrays: make them lists."""
    if isinstance(value, (str, bytes, bool, int, float)) or value is None:
        return value
    try:
        return [item.item() if hasattr(item, "item") else item for item in value]
    except TypeError:
        return value

