"""Config files: dataclass <-> plain dict (YAML/JSON) with errors that name the dotted field.

Every validated settings object of the package (predicates, trust, perception, action, evaluation,
the simulator) is a dataclass; `ConfigFile` gives it to_dict / from_dict / save / load, and
`read_data` / `write_data` read and write plain YAML or JSON by suffix.
"""
from __future__ import annotations

import dataclasses
import json
import types
import typing
from pathlib import Path
from typing import Any, Mapping


def config_to_dict(obj: Any) -> Any:
    """Plain (YAML/JSON-safe) representation of a config dataclass: tuples become lists."""
    if dataclasses.is_dataclass(obj):
        return {f.name: config_to_dict(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, Mapping):
        return {str(key): config_to_dict(value) for key, value in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [config_to_dict(value) for value in obj]
    return obj


def config_from_dict(cls: type, data: Any, path: str = "") -> Any:
    """Build dataclass `cls` from a plain dict; missing fields keep their defaults.

    Raises ValueError naming the dotted field path for unknown keys and wrongly typed values.
    """
    return _convert(cls, data, path or cls.__name__)


def _convert(tp: Any, value: Any, path: str) -> Any:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        options = [arg for arg in typing.get_args(tp) if arg is not type(None)]
        if value is None:
            if len(options) < len(typing.get_args(tp)):
                return None
            raise ValueError(f"{path}: a value is required")
        return _convert(options[0], value, path)
    if dataclasses.is_dataclass(tp):
        if dataclasses.is_dataclass(value) and isinstance(value, tp):
            return value
        if not isinstance(value, Mapping):
            raise ValueError(f"{path}: expected a mapping, got {type(value).__name__}")
        hints = typing.get_type_hints(tp)
        names = {f.name for f in dataclasses.fields(tp) if f.init}
        unknown = sorted(set(value) - names)
        if unknown:
            raise ValueError(f"{path}: unknown key(s) {unknown}; expected some of {sorted(names)}")
        kwargs = {name: _convert(hints[name], item, f"{path}.{name}") for name, item in value.items()}
        try:
            return tp(**kwargs)
        except ValueError as error:
            raise ValueError(f"{path}: {error}") from None
    if origin is tuple or origin is list:
        if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
            raise ValueError(f"{path}: expected a list, got {value!r}")
        args = typing.get_args(tp)
        item_type = args[0] if args else Any
        items = [_convert(item_type, item, f"{path}[{index}]") for index, item in enumerate(value)]
        return tuple(items) if origin is tuple else items
    if origin is dict:
        if not isinstance(value, Mapping):
            raise ValueError(f"{path}: expected a mapping, got {value!r}")
        key_type, value_type = typing.get_args(tp) or (Any, Any)
        return {_convert(key_type, key, path): _convert(value_type, item, f"{path}.{key}")
                for key, item in value.items()}
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{path}: expected a number, got {value!r}")
        return float(value)
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{path}: expected an integer, got {value!r}")
        return value
    if tp is bool:
        if not isinstance(value, bool):
            raise ValueError(f"{path}: expected true or false, got {value!r}")
        return value
    if tp is str:
        if not isinstance(value, str):
            raise ValueError(f"{path}: expected a string, got {value!r}")
        return value
    return value


def write_data(path: str | Path, data: Any) -> Path:
    """Write plain data as YAML (.yaml / .yml) or JSON (any other suffix)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix in (".yaml", ".yml"):
        import yaml
        path.write_text(yaml.safe_dump(data, sort_keys=False))
    else:
        path.write_text(json.dumps(data, indent=2) + "\n")
    return path


def read_data(path: str | Path) -> Any:
    """Read YAML (.yaml / .yml) or JSON; unreadable or malformed files raise ValueError naming the file."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as error:
        raise ValueError(f"cannot read {path}: {error.strerror}") from None
    if path.suffix in (".yaml", ".yml"):
        import yaml
        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as error:
            raise ValueError(f"{path}: not valid YAML: {error}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}: not valid JSON: {error}") from None


def save_config(obj: Any, path: str | Path) -> Path:
    """Write a config dataclass as YAML or JSON (by suffix)."""
    return write_data(path, config_to_dict(obj))


def load_config(cls: type, path: str | Path, section: str | None = None) -> Any:
    """Read a config dataclass from YAML or JSON; `section` selects a top-level key of the file."""
    path = Path(path)
    data = read_data(path)
    data = {} if data is None else data
    if section is not None:
        if not isinstance(data, Mapping) or section not in data:
            raise ValueError(f"{path}: no top-level section {section!r}")
        data = data[section]
    return config_from_dict(cls, data, f"{path.name}:{section or cls.__name__}")


class ConfigFile:
    """Mixin of a config dataclass: to_dict / from_dict / save / load (YAML or JSON by suffix).

    `NAME` prefixes the dotted field names in error messages (e.g. "predicates.contact.distance")."""

    NAME = "config"

    def to_dict(self) -> dict:
        return config_to_dict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]):
        return config_from_dict(cls, data, cls.NAME)

    def save(self, path: str | Path) -> Path:
        return save_config(self, path)

    @classmethod
    def load(cls, path: str | Path, section: str | None = None):
        """Read from a file; `section` selects a top-level key (config/predicates.yaml holds
        "predicates" and "trust")."""
        return load_config(cls, path, section)
