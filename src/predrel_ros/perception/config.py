"""Perception settings in one validated object, loadable from YAML.

A model is a directory (or a file inside one) holding `model.onnx` (and/or `model.pt2`,
`model.torchscript`, a TensorRT `.engine`), `labels.txt` with the class names, and optionally
`roles.yaml` mapping class names to entity roles. A user's own Ultralytics YOLO-seg export works
as is: `model: /path/to/best.onnx`, with `labels:` (or the names embedded in the export) and a
`role_map:` such as {cup: manipulated_object, bowl: container, table: surface}. Labels the role map
does not name get `default_role`; `left_hand` / `right_hand` are hand roles unless mapped otherwise;
generic hand labels (`hands.generic_labels`) get a side per track (`hand_sides.py`). With
`hand_landmarks.enabled`, MediaPipe's hand models add left_hand / right_hand detections (`hands.py`).
With `depth_objects.enabled`, the support plane and the objects on it come from the depth image
(`depth_objects.py`: labels surface / container / object); `model: none` then runs without a trained
model: hands from MediaPipe, objects and the table from depth.

Unknown keys and invalid values are refused with the dotted name of the field.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from predrel_ros.core.config_io import config_from_dict, config_to_dict, load_config, read_data
from predrel_ros.core.entities import CONTAINER, LEFT_HAND, MANIPULATED_OBJECT, RIGHT_HAND, ROLES, SURFACE
from predrel_ros.core.errors import UserError
from predrel_ros.perception.backends import BackendConfig
from predrel_ros.perception.depth import DepthConfig
from predrel_ros.perception.depth_objects import DEPTH_LABELS, DepthObjectConfig
from predrel_ros.perception.hand_sides import HandSideConfig
from predrel_ros.perception.hands import HandLandmarkConfig
from predrel_ros.perception.tracker import TrackerConfig
from predrel_ros.perception.visibility import VisibilityConfig
from predrel_ros.perception.yolo_seg import DecoderConfig

#: where the project's trained default model lives (model.onnx, labels.txt, roles.yaml, MODEL_CARD.md)
DEFAULT_MODEL_DIR = Path(__file__).resolve().parent / "models" / "default"
ROLE_MAP_FILE = "roles.yaml"
#: roles of the side-specific hand classes when the role map does not name them
HAND_LABEL_ROLES = {"left_hand": LEFT_HAND, "right_hand": RIGHT_HAND}
#: roles of the model-free depth labels when the role map does not name them
DEPTH_LABEL_ROLES = dict(zip(DEPTH_LABELS, (SURFACE, CONTAINER, MANIPULATED_OBJECT)))
#: the `model` value of a perception without a trained model (depth objects and/or MediaPipe hands)
NO_MODEL = "none"


@dataclass(frozen=True)
class PerceptionConfig:
    model: str = str(DEFAULT_MODEL_DIR)
    labels: str | None = None  # labels file; default: labels.txt beside the model, else ONNX metadata
    role_map: dict[str, str] = field(default_factory=dict)  # label -> role; default: roles.yaml beside the model
    default_role: str = MANIPULATED_OBJECT
    input_size: tuple[int, int] | None = None  # (height, width) for models with a dynamic input size
    masks: bool = True  # decode instance masks (False: boxes only, faster)
    report_lost_frames: int = 10  # report a lost track (visibility 0) this many frames after its last detection
    backend: BackendConfig = field(default_factory=BackendConfig)
    decoder: DecoderConfig = field(default_factory=DecoderConfig)
    tracker: TrackerConfig = field(default_factory=TrackerConfig)
    depth: DepthConfig = field(default_factory=DepthConfig)
    visibility: VisibilityConfig = field(default_factory=VisibilityConfig)
    hands: HandSideConfig = field(default_factory=HandSideConfig)
    hand_landmarks: HandLandmarkConfig = field(default_factory=HandLandmarkConfig)  # MediaPipe hand models
    depth_objects: DepthObjectConfig = field(default_factory=DepthObjectConfig)  # model-free RGB-D objects

    def __post_init__(self) -> None:
        for label, role in list(self.role_map.items()) + [("default_role", self.default_role)]:
            if role not in ROLES:
                raise ValueError(f"role_map: {label!r} maps to unknown role {role!r}; expected one of {ROLES}")
        if self.input_size is not None and (len(self.input_size) != 2 or min(self.input_size) < 32
                                            or any(side % 32 for side in self.input_size)):
            raise ValueError(f"input_size must be (height, width), multiples of 32, got {self.input_size}")
        if self.report_lost_frames < 0:
            raise ValueError(f"report_lost_frames must be >= 0, got {self.report_lost_frames}")
        if self.model == NO_MODEL and not (self.depth_objects.enabled or self.hand_landmarks.enabled):
            raise ValueError(f"model: {NO_MODEL} needs depth_objects.enabled or hand_landmarks.enabled")

    @classmethod
    def from_dict(cls, data: dict) -> "PerceptionConfig":
        return config_from_dict(cls, data, "perception")

    @classmethod
    def load(cls, path: str | Path, section: str | None = None) -> "PerceptionConfig":
        try:
            return load_config(cls, path, section)
        except ValueError as error:
            raise UserError(str(error)) from None

    def to_dict(self) -> dict:
        return config_to_dict(self)

    def role_mapping(self, model_file: Path | None) -> dict[str, str]:
        """The label -> role map in effect: `role_map`, else roles.yaml beside the model (if any);
        the side-specific hand labels and the depth labels map to their roles unless named."""
        mapping = dict(self.role_map)
        roles_file = None if model_file is None else model_file.parent / ROLE_MAP_FILE
        if not mapping and roles_file is not None and roles_file.is_file():
            try:
                data = read_data(roles_file) or {}
            except ValueError as error:
                raise UserError(str(error)) from None
            if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
                raise UserError(f"{roles_file}: expected a mapping of class names to roles")
            mapping = {str(k): v for k, v in data.items()}
            bad = {k: v for k, v in mapping.items() if v not in ROLES}
            if bad:
                raise UserError(f"{roles_file}: unknown roles {bad}; expected one of {ROLES}")
        for label, role in {**HAND_LABEL_ROLES, **(DEPTH_LABEL_ROLES if self.depth_objects.enabled else {})}.items():
            mapping.setdefault(label, role)
        return mapping


def config_from_node_params(params: Mapping[str, object]) -> tuple[PerceptionConfig, Path]:
    """The PerceptionConfig a perception_node builds from its parameters (config/perception.yaml):
    the `config` file, then the overriding parameters; and the file's path."""
    from predrel_ros.core.package_files import config_file

    name = str(params["config"])
    path = Path(name).expanduser()
    if not path.is_file():
        if "/" in name:
            raise UserError(f"parameter config: {name} does not exist")
        path = config_file(name)
    config = PerceptionConfig.load(path, section="perception")
    backend = config.backend
    if params["backend"]:
        backend = dataclasses.replace(backend, name=params["backend"])
    if params["engine_cache_dir"]:
        backend = dataclasses.replace(backend, tensorrt=dataclasses.replace(
            backend.tensorrt, engine_cache_dir=params["engine_cache_dir"]))
    decoder = config.decoder
    for name in ("score_threshold", "iou_threshold", "mask_threshold"):
        if params[name] >= 0:
            decoder = dataclasses.replace(decoder, **{name: params[name]})
    changes = {"backend": backend, "decoder": decoder}
    if params["model_path"]:
        changes["model"] = str(Path(params["model_path"]).expanduser())
    if params["labels_path"]:
        changes["labels"] = str(Path(params["labels_path"]).expanduser())
    return dataclasses.replace(config, **changes), path
