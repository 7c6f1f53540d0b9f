"""Class names of a detector: from a labels file, or from the names an Ultralytics export embeds.

Accepted files: a text file with one class name per line (line i = class i; blank lines and lines
starting with '#' are skipped), or a YAML file holding a list of names, a {index: name} mapping, or
either under a `names:` key (the Ultralytics dataset YAML).
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from predrel_ros.core.errors import UserError


def read_labels(path: str | Path) -> list[str]:
    path = Path(path)
    if not path.is_file():
        raise UserError(f"labels file {path} does not exist")
    if path.suffix.lower() in (".yaml", ".yml"):
        import yaml

        try:
            data = yaml.safe_load(path.read_text())
        except yaml.YAMLError as error:
            raise UserError(f"labels file {path} is not valid YAML: {error}") from error
        if isinstance(data, dict) and "names" in data:
            data = data["names"]
        return _names_from(data, f"labels file {path}")
    names = [line.strip() for line in path.read_text().splitlines()]
    names = [name for name in names if name and not name.startswith("#")]
    if not names:
        raise UserError(f"labels file {path} holds no class names")
    return names


def labels_from_onnx_metadata(metadata: dict[str, str]) -> list[str] | None:
    """Class names from an ONNX model's metadata `names` entry (Ultralytics writes a Python dict
    literal such as "{0: 'cube', 1: 'bowl'}"), or None when the model has none."""
    text = metadata.get("names")
    if not text:
        return None
    try:
        data = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return None
    try:
        return _names_from(data, "the model's 'names' metadata")
    except UserError:
        return None


def _names_from(data: Any, source: str) -> list[str]:
    if isinstance(data, (list, tuple)):
        names = [str(name) for name in data]
    elif isinstance(data, dict):
        try:
            indices = sorted(int(key) for key in data)
        except (TypeError, ValueError) as error:
            raise UserError(f"{source}: class indices must be integers, got {list(data)[:5]}") from error
        if indices != list(range(len(indices))):
            raise UserError(f"{source}: class indices must be 0..{len(indices) - 1} without gaps, "
                            f"got {indices}")
        names = [str(data[key]) for key in sorted(data, key=int)]
    else:
        raise UserError(f"{source}: expected a list of class names or an {{index: name}} mapping")
    if not names:
        raise UserError(f"{source} holds no class names")
    return names


#: files beside a model that hold its class names, in order of preference
LABEL_FILE_NAMES = ("labels.txt", "labels.yaml", "labels.yml")


def labels_for_model(model_file: str | Path, labels: str | Path | None = None) -> list[str]:
    """Class names of a model: the given labels file, else a labels file beside the model, else the
    names an Ultralytics ONNX export carries in its metadata."""
    if labels is not None:
        return read_labels(labels)
    model_file = Path(model_file)
    for name in LABEL_FILE_NAMES:
        if (model_file.parent / name).is_file():
            return read_labels(model_file.parent / name)
    if model_file.suffix == ".onnx":
        names = labels_from_onnx_metadata(_onnx_metadata(model_file))
        if names:
            return names
    raise UserError(f"no class names for {model_file}: give a labels file (one name per line) or put "
                    f"labels.txt beside the model")


def _onnx_metadata(path: Path) -> dict[str, str]:
    try:
        import onnx
    except ImportError:
        return {}
    try:
        model = onnx.load(str(path), load_external_data=False)
    except Exception:  # noqa: BLE001 - an unreadable model has no names; the backend reports why
        return {}
    return {prop.key: prop.value for prop in model.metadata_props}
