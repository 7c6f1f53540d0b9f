"""What `predrel eval --data` reads: a dataset folder (with splits), one episode folder, one rosbag2
bag, or a folder of bags; and one episode held in memory for a sweep.

A dataset folder gives the train / val / test splits of its manifest ("all": every episode, for
data nothing was selected or trained on, e.g. a second viewpoint). A single episode or bag, or
a folder of bags, has no split: all of it is the evaluated ("test") set, and thresholds and action
models then come from files (`--predicate-config`, `--action-model`) or the defaults.

`EpisodeSource` is a small picklable description that a worker process opens itself; `load_episode`
reads all frames once (images too unless the oracle front-end needs none) with their ground truth:
entities, predicate streams (canonical keys, integer codes, UNK = -1 where a stream has no value)
and primitives, each None when the source has none (a robot's own bag).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from predrel_ros.core.entities import Entity
from predrel_ros.core.errors import UserError
from predrel_ros.core.frame import Frame
from predrel_ros.predicates import vocabulary
from predrel_ros.predicates.estimate import stream_key
from predrel_ros.sources.bag import CameraTopics
from predrel_ros.sources.dataset import EPISODES_DIR, MANIFEST_FILE, META_FILE, SPLITS, EpisodeReader, open_dataset

StreamKey = tuple[str, int, int]

EPISODE = "episode"
BAG = "bag"
#: the split name that evaluates every episode of a dataset (thresholds and models then come from files)
ALL = "all"
BAG_SUFFIXES = (".mcap", ".db3")


@dataclass(frozen=True)
class EpisodeSource:
    """One episode to open: a dataset episode folder or a bag; `index` orders it within its split
    (its degradation seed is the sweep seed + index)."""

    name: str
    kind: str
    path: str
    index: int
    split: str
    scenario_group: str = ""
    template: str = ""
    camera: CameraTopics = CameraTopics()  # a bag's camera topics


@dataclass
class EvaluationData:
    """The episodes of each split that the sweep can use."""

    root: str
    splits: dict[str, list[EpisodeSource]]
    description: str
    seed: int | None = None

    def split(self, name: str) -> list[EpisodeSource]:
        return self.splits.get(name, [])


def _is_bag(path: Path) -> bool:
    if path.is_file():
        return path.suffix in BAG_SUFFIXES
    return path.is_dir() and ((path / "metadata.yaml").is_file()
                              or any(p.suffix in BAG_SUFFIXES for p in path.iterdir()))


def _bag_source(path: Path, index: int, split: str, camera: CameraTopics) -> EpisodeSource:
    from predrel_ros.sources.bag import BagReader

    BagReader(path, camera=camera)  # a missing or ambiguous camera topic fails now, not in a worker
    return EpisodeSource(path.stem, BAG, str(path), index, split, camera=camera)


def resolve_data(path: str | Path, test_split: str = "test", camera: CameraTopics = CameraTopics()) -> EvaluationData:
    """Find the episodes under `path` (see the module docstring); UserError when there are none.
    Bags outside a dataset are read with the camera topics `camera` (checked here, before a sweep)."""
    root = Path(path)
    if not root.exists():
        raise UserError(f"{root}: no such file or folder")
    if (root / MANIFEST_FILE).is_file():
        dataset = open_dataset(root)
        splits: dict[str, list[EpisodeSource]] = {}
        for split in SPLITS:
            sources = []
            for index, name in enumerate(dataset.names(split)):
                entry = next(e for e in dataset.manifest["episodes"] if e["name"] == name)
                folder = root / EPISODES_DIR / name
                if folder.is_dir():
                    kind, where = EPISODE, folder
                else:
                    bag = next((root / p for p in entry.get("paths", {}).values() if _is_bag(root / p)), None)
                    if bag is None:
                        raise UserError(f"{root}: episode {name} has neither a folder nor a bag")
                    kind, where = BAG, bag
                sources.append(EpisodeSource(name, kind, str(where), index, split, entry.get("scenario_group", ""),
                                             entry.get("template", "")))
            splits[split] = sources
        if test_split == ALL:
            everything = [source for split in SPLITS for source in splits[split]]
            splits[ALL] = [EpisodeSource(s.name, s.kind, s.path, index, ALL, s.scenario_group, s.template)
                           for index, s in enumerate(everything)]
        if not splits.get(test_split):
            raise UserError(f"dataset {root} has no episodes in split {test_split!r}")
        return EvaluationData(str(root), splits, f"dataset {root.name}", dataset.manifest.get("seed"))
    if root.is_dir() and (root / META_FILE).is_file():
        meta = EpisodeReader(root).meta
        single = EpisodeSource(meta.name or root.name, EPISODE, str(root), 0, test_split, meta.scenario_group,
                               meta.template)
        return EvaluationData(str(root), {test_split: [single]}, f"episode {single.name}")
    if _is_bag(root):
        return EvaluationData(str(root), {test_split: [_bag_source(root, 0, test_split, camera)]}, f"bag {root.name}")
    if root.is_dir():
        bags = sorted(p for p in root.iterdir() if _is_bag(p))
        if bags:
            sources = [_bag_source(p, i, test_split, camera) for i, p in enumerate(bags)]
            return EvaluationData(str(root), {test_split: sources}, f"{len(bags)} bags in {root.name}")
    raise UserError(f"{root}: not a dataset folder, episode folder, rosbag2 bag or folder of bags")


@dataclass
class LoadedEpisode:
    """One episode in memory."""

    source: EpisodeSource
    frames: list[Frame]
    gt_entities: list[list[Entity]] | None
    gt_codes: dict[StreamKey, np.ndarray] | None
    primitives: list[str | None] | None
    content_hash: str
    scenario_group: str

    @property
    def name(self) -> str:
        return self.source.name

    @property
    def num_frames(self) -> int:
        return len(self.frames)

    @property
    def shape(self) -> tuple[int, int, int]:
        return tuple(self.frames[0].rgb.shape)


def load_episode(source: EpisodeSource, images: bool = True) -> LoadedEpisode:
    """All frames of `source`; images=False (dataset folders only) skips the PNG reads."""
    if source.kind == EPISODE:
        reader = EpisodeReader(source.path)
        frames = list(reader.frames(images=images))
        group = reader.meta.scenario_group or source.scenario_group
    else:
        from predrel_ros.sources.bag import BagReader
        bag = BagReader(source.path, camera=source.camera)
        frames = list(bag.frames())
        group = (bag.meta.scenario_group if bag.meta is not None else "") or source.scenario_group
    if not frames:
        raise UserError(f"{source.path}: no frames")
    sizes = {frame.rgb.shape for frame in frames}
    if len(sizes) > 1:
        raise UserError(f"{source.path}: frames change size ({sorted(sizes)}); a sweep needs one image size")
    for position, frame in enumerate(frames):
        if frame.index != position:
            raise UserError(f"{source.path}: frame {position} has index {frame.index}; frames must be 0..T-1 in order")
    has_gt = all(frame.entities is not None for frame in frames)
    gt_entities = [list(frame.entities) for frame in frames] if has_gt else None
    has_predicates = all(frame.predicates is not None for frame in frames)
    gt_codes = _predicate_codes(frames) if has_predicates else None
    primitives = [frame.primitive for frame in frames]
    if all(p is None for p in primitives):
        primitives = None
    digest = hashlib.sha256(f"{source.name}:{len(frames)}:{frames[0].rgb.shape}".encode())
    if images or source.kind == BAG:
        for frame in frames:
            digest.update(frame.rgb.tobytes())
    return LoadedEpisode(source, frames, gt_entities, gt_codes, primitives, digest.hexdigest(), group)


def _predicate_codes(frames: list[Frame]) -> dict[StreamKey, np.ndarray]:
    """Canonical stream key -> codes over all frames (UNK where the stream has no value)."""
    codes: dict[StreamKey, np.ndarray] = {}
    count = len(frames)
    for position, frame in enumerate(frames):
        for reference in frame.predicates:
            key = stream_key(reference.name, reference.subject, reference.object)
            array = codes.get(key)
            if array is None:
                array = codes[key] = np.full(count, vocabulary.UNK, dtype=np.int8)
            array[position] = vocabulary.encode(reference.name, reference.value)
    return codes
