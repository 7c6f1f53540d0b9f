"""Dataset folders: episodes of frames with ground truth, split into train / val / test.

Reading (what perception training, evaluation and the replay node use):

    from predrel_ros.sources.dataset import open_dataset
    dataset = open_dataset("data/controlled")
    dataset.manifest                      # dict: seeds, templates, splits, predicate counts
    dataset.splits                        # {"train": [names], "val": [...], "test": [...]}
    for episode in dataset.episodes(split="train"):
        episode.meta                      # EpisodeMeta: template, scenario_group, seed, fps, size, camera
        for frame in episode.frames():    # predrel_ros.core.frame.Frame
            frame.rgb, frame.depth, frame.camera.K, frame.entities, frame.predicates, frame.primitive
    episode.predicate_codes()             # {(name, subject, object): int codes per frame, -1 = absent}

`open_episode(path)` opens one episode folder. Layout on disk (all files deterministic: the same
content gives the same bytes):

    DIR/manifest.json                     dataset description (see `write_manifest`)
    DIR/episodes/<name>/meta.json         EpisodeMeta (camera intrinsics and pose, entity table, ...)
    DIR/episodes/<name>/rgb/000000.png    8-bit RGB PNG per frame
    DIR/episodes/<name>/depth/000000.png  16-bit PNG per frame, depth in millimetres, 0 = unknown
    DIR/episodes/<name>/ground_truth.npz  per-frame ground truth as flat tables (below)

ground_truth.npz: `stamp_ns` (T); entity rows (one per entity per frame) `ent_frame`, `ent_id`,
`ent_label` (index into meta.labels), `ent_role` (index into entities.ROLES), `ent_box` (x1, y1,
x2, y2), `ent_visibility`, `ent_centroid` (u, v, depth z), `ent_point3d` (camera optical frame,
metres), `ent_mask_crop` (x, y, width, height) and the mask runs `mask_runs` sliced by
`mask_run_offset` (the Entity.msg run-length layout of `predrel_ros.core.masks`); predicate rows
`pred_frame`, `pred_name` (index into meta.predicate_names), `pred_subject`, `pred_object`,
`pred_code` (vocabulary code, -1 = UNK); `primitive` (T, index into PRIMITIVE_LABELS, 255 = none)
and one `attr_<name>` array per categorical frame attribute (index into
meta.frame_attributes[name]). Ground-truth predicates have confidence 1 and all evidence 1.

Depth precision on disk is 1 mm (the bags keep the exact float32 depth).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, Sequence

import cv2
import numpy as np

from predrel_ros.core import entities as entity_roles
from predrel_ros.core import masks
from predrel_ros.core.entities import Entity
from predrel_ros.core.errors import UserError
from predrel_ros.core.frame import PRIMITIVE_LABELS, CameraIntrinsics, Frame
from predrel_ros.core.npz import load_npz, save_npz
from predrel_ros.predicates import vocabulary
from predrel_ros.predicates.estimate import PredicateEstimate

FORMAT_NAME = "predrel_ros.dataset"
FORMAT_VERSION = 1
SPLITS = ("train", "val", "test")
MANIFEST_FILE = "manifest.json"
META_FILE = "meta.json"
GROUND_TRUTH_FILE = "ground_truth.npz"
EPISODES_DIR = "episodes"
NO_VALUE = 255


@dataclass
class EntityInfo:
    """An entity of an episode: persistent id, detector class and role."""

    id: int
    label: str
    role: str
    name: str = ""

    def to_dict(self) -> dict:
        return {"id": self.id, "label": self.label, "role": self.role, "name": self.name}


@dataclass
class EpisodeMeta:
    """What one episode is: where it came from and how to read its frames.

    camera_pose: 4x4 world-from-camera transform of the optical frame (x right, y down, z forward),
        or None when unknown.
    extra: source-specific details (generator settings, renderer backend, ...).
    """

    name: str
    num_frames: int
    fps: float
    width: int
    height: int
    camera: CameraIntrinsics | None = None
    camera_pose: list[list[float]] | None = None
    template: str = ""
    scenario_group: str = ""
    seed: int | None = None
    split: str = ""
    entities: list[EntityInfo] = field(default_factory=list)
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"name": self.name, "num_frames": self.num_frames, "fps": self.fps, "width": self.width,
                "height": self.height, "camera": self.camera.to_dict() if self.camera else None,
                "camera_pose": self.camera_pose, "template": self.template,
                "scenario_group": self.scenario_group, "seed": self.seed, "split": self.split,
                "entities": [info.to_dict() for info in self.entities], "extra": self.extra}

    @classmethod
    def from_dict(cls, data: dict) -> "EpisodeMeta":
        camera = data.get("camera")
        return cls(name=data["name"], num_frames=int(data["num_frames"]), fps=float(data["fps"]),
                   width=int(data["width"]), height=int(data["height"]),
                   camera=CameraIntrinsics.from_dict(camera) if camera else None,
                   camera_pose=data.get("camera_pose"), template=data.get("template", ""),
                   scenario_group=data.get("scenario_group", ""), seed=data.get("seed"),
                   split=data.get("split", ""),
                   entities=[EntityInfo(**info) for info in data.get("entities", [])],
                   extra=data.get("extra", {}))


def _dump_json(path: Path, data: dict) -> None:
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


def encode_depth_mm(depth: np.ndarray) -> np.ndarray:
    """float32 metres -> uint16 millimetres, rounded (0 = unknown: NaN, under 0.5 mm, beyond 65.535 m)."""
    millimetres = np.rint(np.asarray(depth, dtype=np.float64) * 1000.0)
    valid = np.isfinite(millimetres) & (millimetres > 0) & (millimetres <= 65535)
    out = np.zeros(millimetres.shape, dtype=np.uint16)
    out[valid] = millimetres[valid].astype(np.uint16)
    return out


def decode_depth_mm(depth_mm: np.ndarray) -> np.ndarray:
    """uint16 millimetres -> float32 metres, NaN where 0."""
    depth = depth_mm.astype(np.float32) / 1000.0
    depth[depth_mm == 0] = np.nan
    return depth


class EpisodeWriter:
    """Writes one episode folder frame by frame; `close()` writes ground truth and meta.

    Frames must come in order with the size of `meta`. Frames without ground truth (entities None)
    are allowed: the episode then simply has no entity rows for them.
    """

    def __init__(self, directory: Path | str, meta: EpisodeMeta) -> None:
        self.directory = Path(directory)
        if (self.directory / META_FILE).exists():
            raise UserError(f"{self.directory} already holds an episode; choose an empty folder")
        (self.directory / "rgb").mkdir(parents=True, exist_ok=True)
        (self.directory / "depth").mkdir(exist_ok=True)
        self.meta = meta
        self._labels: list[str] = [info.label for info in meta.entities]
        self._attribute_values: dict[str, list[str]] = {}
        self._stamps: list[int] = []
        self._primitives: list[int] = []
        self._attributes: dict[str, list[int]] = {}
        self._rows: dict[str, list] = {key: [] for key in (
            "ent_frame", "ent_id", "ent_label", "ent_role", "ent_box", "ent_visibility",
            "ent_centroid", "ent_point3d", "ent_mask_crop")}
        self._runs: list[np.ndarray] = []
        self._preds: dict[str, list] = {key: [] for key in (
            "pred_frame", "pred_name", "pred_subject", "pred_object", "pred_code")}
        self._predicate_names = list(vocabulary.PREDICATES)

    def _label_index(self, label: str) -> int:
        if label not in self._labels:
            self._labels.append(label)
        return self._labels.index(label)

    def write(self, frame: Frame) -> None:
        index = len(self._stamps)
        if frame.index != index:
            raise ValueError(f"episode {self.meta.name}: expected frame {index}, got {frame.index}")
        if (frame.width, frame.height) != (self.meta.width, self.meta.height):
            raise ValueError(f"episode {self.meta.name}: frame {index} is {frame.width}x{frame.height}, "
                             f"the episode is {self.meta.width}x{self.meta.height}")
        name = f"{index:06d}.png"
        cv2.imwrite(str(self.directory / "rgb" / name), cv2.cvtColor(frame.rgb, cv2.COLOR_RGB2BGR))
        if frame.depth is not None:
            cv2.imwrite(str(self.directory / "depth" / name), encode_depth_mm(frame.depth))
        self._stamps.append(int(frame.stamp_ns))
        self._primitives.append(NO_VALUE if frame.primitive is None
                                else PRIMITIVE_LABELS.index(frame.primitive))
        for key, value in frame.attributes.items():
            values = self._attribute_values.setdefault(key, [])
            column = self._attributes.setdefault(key, [NO_VALUE] * index)
            if value not in values:
                values.append(str(value))
            column.append(values.index(str(value)))
        for column in self._attributes.values():
            column.extend([NO_VALUE] * (index + 1 - len(column)))
        for entity in frame.entities or ():
            self._add_entity(index, entity, frame)
        for estimate in frame.predicates or ():
            self._preds["pred_frame"].append(index)
            self._preds["pred_name"].append(self._predicate_names.index(estimate.name))
            self._preds["pred_subject"].append(estimate.subject)
            self._preds["pred_object"].append(estimate.object)
            self._preds["pred_code"].append(estimate.code)

    def _add_entity(self, index: int, entity: Entity, frame: Frame) -> None:
        rows = self._rows
        rows["ent_frame"].append(index)
        rows["ent_id"].append(entity.id)
        rows["ent_label"].append(self._label_index(entity.label))
        rows["ent_role"].append(entity_roles.ROLES.index(entity.role))
        rows["ent_box"].append(entity.box)
        rows["ent_visibility"].append(entity.visibility)
        centroid = np.full(3, np.nan)
        centroid[:entity.centroid.size] = entity.centroid
        rows["ent_centroid"].append(centroid)
        rows["ent_point3d"].append(entity.point3d if entity.point3d is not None else np.full(3, np.nan))
        if entity.mask is None:
            rle = masks.MaskRLE(0, 0, 0, 0, np.zeros(0, np.uint32))
        else:
            if entity.mask.shape != (frame.height, frame.width):
                raise ValueError(f"frame {index}: entity {entity.id} mask shape {entity.mask.shape} "
                                 f"differs from the image {frame.height}x{frame.width}")
            rle = masks.encode(entity.mask)
        rows["ent_mask_crop"].append((rle.x, rle.y, rle.width, rle.height))
        self._runs.append(rle.runs)

    def close(self) -> Path:
        if len(self._stamps) != self.meta.num_frames:
            raise ValueError(f"episode {self.meta.name}: meta says {self.meta.num_frames} frames, "
                             f"{len(self._stamps)} were written")
        rows = self._rows
        run_lengths = np.array([runs.size for runs in self._runs], dtype=np.int64)
        arrays = {
            "stamp_ns": np.array(self._stamps, dtype=np.int64),
            "primitive": np.array(self._primitives, dtype=np.uint8),
            "ent_frame": np.array(rows["ent_frame"], dtype=np.int32),
            "ent_id": np.array(rows["ent_id"], dtype=np.int32),
            "ent_label": np.array(rows["ent_label"], dtype=np.uint16),
            "ent_role": np.array(rows["ent_role"], dtype=np.uint8),
            "ent_box": np.array(rows["ent_box"], dtype=np.float32).reshape(-1, 4),
            "ent_visibility": np.array(rows["ent_visibility"], dtype=np.float32),
            "ent_centroid": np.array(rows["ent_centroid"], dtype=np.float32).reshape(-1, 3),
            "ent_point3d": np.array(rows["ent_point3d"], dtype=np.float32).reshape(-1, 3),
            "ent_mask_crop": np.array(rows["ent_mask_crop"], dtype=np.uint16).reshape(-1, 4),
            "mask_run_offset": np.concatenate(([0], np.cumsum(run_lengths))).astype(np.int64),
            "mask_runs": (np.concatenate(self._runs) if self._runs else np.zeros(0)).astype(np.uint32),
            "pred_frame": np.array(self._preds["pred_frame"], dtype=np.int32),
            "pred_name": np.array(self._preds["pred_name"], dtype=np.uint8),
            "pred_subject": np.array(self._preds["pred_subject"], dtype=np.int32),
            "pred_object": np.array(self._preds["pred_object"], dtype=np.int32),
            "pred_code": np.array(self._preds["pred_code"], dtype=np.int8),
        }
        for key, column in self._attributes.items():
            arrays[f"attr_{key}"] = np.array(column, dtype=np.uint8)
        save_npz(self.directory / GROUND_TRUTH_FILE, arrays)
        meta = self.meta.to_dict()
        meta.update(labels=self._labels, predicate_names=self._predicate_names,
                    frame_attributes=self._attribute_values, format=FORMAT_NAME,
                    format_version=FORMAT_VERSION)
        _dump_json(self.directory / META_FILE, meta)
        return self.directory

    def __enter__(self) -> "EpisodeWriter":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()


def write_episode(directory: Path | str, meta: EpisodeMeta, frames: Iterable[Frame]) -> Path:
    """Write a whole episode folder from `frames`."""
    writer = EpisodeWriter(directory, meta)
    for frame in frames:
        writer.write(frame)
    return writer.close()


class EpisodeReader:
    """One episode folder. Ground truth loads once, on first use; images load per frame."""

    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory)
        meta_path = self.directory / META_FILE
        if not meta_path.is_file():
            raise UserError(f"{self.directory} is not an episode folder (no {META_FILE})")
        try:
            self._raw_meta = json.loads(meta_path.read_text())
            self.meta = EpisodeMeta.from_dict(self._raw_meta)
        except (ValueError, KeyError, TypeError) as error:
            raise UserError(f"{meta_path}: unreadable episode meta ({error})") from None
        self._gt: dict[str, np.ndarray] | None = None

    def __len__(self) -> int:
        return self.meta.num_frames

    def __repr__(self) -> str:
        return f"EpisodeReader({str(self.directory)!r}, {self.meta.template or 'episode'}, {len(self)} frames)"

    @property
    def ground_truth(self) -> dict[str, np.ndarray]:
        """The raw arrays of ground_truth.npz (layout in the module docstring)."""
        if self._gt is None:
            path = self.directory / GROUND_TRUTH_FILE
            if not path.is_file():
                raise UserError(f"{self.directory}: missing {GROUND_TRUTH_FILE}")
            self._gt = load_npz(path)
        return self._gt

    @property
    def labels(self) -> list[str]:
        return list(self._raw_meta.get("labels", []))

    @property
    def predicate_names(self) -> list[str]:
        return list(self._raw_meta.get("predicate_names", vocabulary.PREDICATES))

    def primitives(self) -> list[str | None]:
        """Ground-truth primitive label of every frame (None where the source had none)."""
        return [None if code == NO_VALUE else PRIMITIVE_LABELS[code]
                for code in self.ground_truth["primitive"].tolist()]

    def frame_attribute(self, name: str) -> list[str | None]:
        """A categorical per-frame attribute (e.g. "script_primitive") for every frame."""
        values = self._raw_meta.get("frame_attributes", {}).get(name)
        if values is None:
            raise KeyError(f"episode {self.meta.name} has no frame attribute {name!r}")
        return [None if code == NO_VALUE else values[code]
                for code in self.ground_truth[f"attr_{name}"].tolist()]

    def predicate_codes(self) -> dict[tuple[str, int, int], np.ndarray]:
        """Every ground-truth predicate stream: key (name, subject, object) -> int8 codes over all
        frames, -1 (UNK) where the stream has no value."""
        gt = self.ground_truth
        names = self.predicate_names
        streams: dict[tuple[str, int, int], np.ndarray] = {}
        keys = np.stack([gt["pred_name"].astype(np.int64), gt["pred_subject"], gt["pred_object"]], axis=1)
        unique, inverse = np.unique(keys, axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        for row, (name, subject, obj) in enumerate(unique.tolist()):
            codes = np.full(len(self), vocabulary.UNK, dtype=np.int8)
            selected = inverse == row
            codes[gt["pred_frame"][selected]] = gt["pred_code"][selected]
            streams[(names[name], int(subject), int(obj))] = codes
        return streams

    def frames(self, start: int = 0, stop: int | None = None, images: bool = True) -> Iterator[Frame]:
        """Frames start..stop-1 in order. images=False skips the PNG reads (rgb is then a black
        image of the right size and depth None): ground truth only, much faster."""
        stop = len(self) if stop is None else min(stop, len(self))
        gt = self.ground_truth
        labels = self.labels
        names = self.predicate_names
        attribute_values = self._raw_meta.get("frame_attributes", {})
        ent_bounds = np.searchsorted(gt["ent_frame"], np.arange(len(self) + 1))
        pred_bounds = np.searchsorted(gt["pred_frame"], np.arange(len(self) + 1))
        height, width = self.meta.height, self.meta.width
        has_gt = gt["ent_frame"].size > 0 or gt["pred_frame"].size > 0
        for index in range(start, stop):
            if images:
                rgb, depth = self._read_images(index)
            else:
                rgb, depth = np.zeros((height, width, 3), np.uint8), None
            entities = [self._entity(row, index, labels) for row in range(ent_bounds[index], ent_bounds[index + 1])]
            predicates = [PredicateEstimate(name=names[gt["pred_name"][row]], subject=int(gt["pred_subject"][row]),
                                            object=int(gt["pred_object"][row]),
                                            value=vocabulary.decode(names[gt["pred_name"][row]],
                                                                    int(gt["pred_code"][row])),
                                            frame_index=index)
                          for row in range(pred_bounds[index], pred_bounds[index + 1])]
            primitive_code = int(gt["primitive"][index])
            attributes = {key: values[int(gt[f"attr_{key}"][index])]
                          for key, values in attribute_values.items()
                          if int(gt[f"attr_{key}"][index]) != NO_VALUE}
            yield Frame(index=index, stamp_ns=int(gt["stamp_ns"][index]), rgb=rgb, depth=depth,
                        camera=self.meta.camera, entities=entities if has_gt else None,
                        predicates=predicates if has_gt else None,
                        primitive=None if primitive_code == NO_VALUE else PRIMITIVE_LABELS[primitive_code],
                        source="dataset", attributes=attributes)

    def frame(self, index: int, images: bool = True) -> Frame:
        if not 0 <= index < len(self):
            raise IndexError(f"episode {self.meta.name} has frames 0..{len(self) - 1}, not {index}")
        return next(self.frames(index, index + 1, images=images))

    def _read_images(self, index: int) -> tuple[np.ndarray, np.ndarray | None]:
        name = f"{index:06d}.png"
        bgr = cv2.imread(str(self.directory / "rgb" / name), cv2.IMREAD_COLOR)
        if bgr is None:
            raise UserError(f"{self.directory / 'rgb' / name}: missing or unreadable image")
        depth_path = self.directory / "depth" / name
        depth = None
        if depth_path.is_file():
            depth_mm = cv2.imread(str(depth_path), cv2.IMREAD_UNCHANGED)
            if depth_mm is None or depth_mm.dtype != np.uint16:
                raise UserError(f"{depth_path}: not a 16-bit depth PNG")
            depth = decode_depth_mm(depth_mm)
        return cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB), depth

    def _entity(self, row: int, index: int, labels: Sequence[str]) -> Entity:
        gt = self.ground_truth
        x, y, w, h = (int(v) for v in gt["ent_mask_crop"][row])
        runs = gt["mask_runs"][gt["mask_run_offset"][row]:gt["mask_run_offset"][row + 1]]
        mask = masks.decode(masks.MaskRLE(x, y, w, h, runs), self.meta.height, self.meta.width)
        point3d = gt["ent_point3d"][row].astype(np.float64)
        centroid = gt["ent_centroid"][row].astype(np.float64)
        if not np.isfinite(centroid[:2]).all():
            centroid = None
        elif not np.isfinite(centroid[2]):
            centroid = centroid[:2]
        return Entity(id=int(gt["ent_id"][row]), label=labels[int(gt["ent_label"][row])],
                      role=entity_roles.ROLES[int(gt["ent_role"][row])], box=gt["ent_box"][row],
                      mask=mask, crop=(x, y, w, h), visibility=float(gt["ent_visibility"][row]),
                      centroid=centroid,
                      point3d=point3d if np.isfinite(point3d).all() else None, frame_index=index)


def write_manifest(root: Path | str, manifest: dict) -> Path:
    """Write DIR/manifest.json. Required keys: "episodes" (list of dicts with at least "name" and
    "split") ; "splits" is derived from them; format name and version are added."""
    root = Path(root)
    data = dict(manifest)
    episodes = data.get("episodes")
    if not isinstance(episodes, list) or not all("name" in e and "split" in e for e in episodes):
        raise ValueError("manifest needs 'episodes': a list of dicts with 'name' and 'split'")
    data["splits"] = {split: [e["name"] for e in episodes if e["split"] == split] for split in SPLITS}
    data.update(format=FORMAT_NAME, format_version=FORMAT_VERSION)
    root.mkdir(parents=True, exist_ok=True)
    path = root / MANIFEST_FILE
    _dump_json(path, data)
    return path


class Dataset:
    """A dataset folder: manifest, splits and episodes."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        path = self.root / MANIFEST_FILE
        if not path.is_file():
            raise UserError(f"{self.root} is not a dataset folder (no {MANIFEST_FILE}); "
                            f"create one with `predrel dataset generate --out {self.root}`")
        try:
            self.manifest = json.loads(path.read_text())
        except ValueError as error:
            raise UserError(f"{path}: not valid JSON ({error})") from None
        if self.manifest.get("format") != FORMAT_NAME:
            raise UserError(f"{path}: not a {FORMAT_NAME} manifest")
        if int(self.manifest.get("format_version", 0)) > FORMAT_VERSION:
            raise UserError(f"{path}: format version {self.manifest['format_version']} is newer than "
                            f"this predrel_ros reads ({FORMAT_VERSION}); update predrel_ros")

    @property
    def splits(self) -> dict[str, list[str]]:
        return {split: list(names) for split, names in self.manifest.get("splits", {}).items()}

    def names(self, split: str | None = None) -> list[str]:
        if split is None:
            return [e["name"] for e in self.manifest["episodes"]]
        if split not in SPLITS:
            raise UserError(f"unknown split {split!r}; expected one of {SPLITS}")
        return self.splits.get(split, [])

    def episode(self, name: str) -> EpisodeReader:
        if name not in self.names():
            raise UserError(f"dataset {self.root} has no episode {name!r}")
        directory = self.root / EPISODES_DIR / name
        if not directory.is_dir():
            entry = next(e for e in self.manifest["episodes"] if e["name"] == name)
            others = ", ".join(str(self.root / path) for path in entry.get("paths", {}).values())
            raise UserError(f"episode {name!r} was not written as a dataset folder"
                            + (f"; it is in {others} (read bags with predrel_ros.sources.bag.BagReader)"
                               if others else ""))
        return EpisodeReader(directory)

    def episodes(self, split: str | None = None) -> list[EpisodeReader]:
        """Episode readers of one split (or of all episodes), in manifest order."""
        return [self.episode(name) for name in self.names(split)]

    def __len__(self) -> int:
        return len(self.manifest["episodes"])


def open_dataset(path: Path | str) -> Dataset:
    return Dataset(path)


def open_episode(path: Path | str) -> EpisodeReader:
    return EpisodeReader(path)
