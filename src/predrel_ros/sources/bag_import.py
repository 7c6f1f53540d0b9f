"""Bags from a robot -> a dataset folder (`predrel dataset import`): one episode folder per bag, in
the layout of `predrel_ros.sources.dataset`, so that `predrel detect`, `predrel eval` and training
read a robot's recording like a generated episode (and read it fast: PNGs, not a bag to scan).

The camera topics are found as `BagReader` finds them (by message type, or named with
`CameraTopics`: raw or compressed colour, raw or compressedDepth depth, CameraInfo optional).
What the bag holds is kept: colour exactly (PNG), depth to 1 mm, the stamps, the intrinsics, the
episode metadata of a predrel bag, and ground truth (entities, predicates, primitives) when the
bag has it. What the episode format cannot hold is refused, never dropped: a camera whose size or
intrinsics change within the bag is an error naming the frame. A bag that fails leaves nothing
behind in the output folder.
"""
from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path
from typing import Sequence

import numpy as np

from predrel_ros.core.errors import UserError
from predrel_ros.sources.bag import BagReader, CameraTopics
from predrel_ros.sources.dataset import EPISODES_DIR, SPLITS, EpisodeMeta, EpisodeWriter, write_manifest
from predrel_ros.sources.open_source import BAG_SUFFIXES

#: the manifest's `generator` of imported datasets
GENERATOR = "predrel_ros.sources.bag_import"


def episode_name(bag: Path) -> str:
    """An episode's name from its bag: its file or folder name without a bag suffix (.mcap, .db3)."""
    return bag.stem if bag.suffix in BAG_SUFFIXES else bag.name


def frame_rate(stamps_ns: Sequence[int]) -> float:
    """Frames per second of the median stamp step (0 with fewer than two frames)."""
    steps = np.diff(np.asarray(stamps_ns, np.int64))
    steps = steps[steps > 0]
    return round(1e9 / float(np.median(steps)), 3) if len(steps) else 0.0


def import_bag(bag: Path | str, directory: Path | str, camera: CameraTopics = CameraTopics(), name: str = "",
               split: str = "test", max_frames: int | None = None) -> dict:
    """Write the frames of `bag` as an episode folder `directory`; returns its manifest entry."""
    bag = Path(bag)
    reader = BagReader(bag, camera=camera)
    name = name or episode_name(bag)
    writer: EpisodeWriter | None = None
    stamps: list[int] = []
    has_depth = has_ground_truth = False
    for frame in reader.frames():
        if max_frames is not None and frame.index >= max_frames:
            break
        if writer is None:
            writer = EpisodeWriter(directory, _first_meta(reader.meta, name, split, frame))
        _check_camera(bag, writer.meta, frame)
        if writer.meta.camera is None and frame.camera is not None:
            writer.meta = dataclasses.replace(writer.meta, camera=frame.camera)
        try:
            writer.write(frame)
        except ValueError as error:
            raise UserError(f"{bag}: {error}") from None
        stamps.append(frame.stamp_ns)
        has_depth |= frame.depth is not None
        has_ground_truth |= frame.entities is not None
    if writer is None:
        raise UserError(f"{bag}: no frame on the colour image topic {reader.topics.color}")
    writer.meta = dataclasses.replace(writer.meta, num_frames=len(stamps), fps=frame_rate(stamps) or writer.meta.fps)
    writer.close()
    topics = {role: topic for role, topic in vars(reader.topics).items() if topic in reader.topic_types}
    return {"name": name, "split": split, "num_frames": len(stamps), "fps": writer.meta.fps,
            "source": str(bag), "topics": topics, "depth": has_depth, "camera_info": writer.meta.camera is not None,
            "ground_truth": has_ground_truth, "template": writer.meta.template,
            "scenario_group": writer.meta.scenario_group}


def _first_meta(bag_meta: EpisodeMeta | None, name: str, split: str, frame) -> EpisodeMeta:
    """The episode's metadata: a predrel bag's own (renamed, in `split`), else what the first frame says."""
    if bag_meta is not None:
        return dataclasses.replace(bag_meta, name=name, split=split, num_frames=0)
    return EpisodeMeta(name=name, num_frames=0, fps=0.0, width=frame.width, height=frame.height,
                       camera=frame.camera, split=split, extra={"imported": True})


def _check_camera(bag: Path, meta: EpisodeMeta, frame) -> None:
    if (frame.width, frame.height) != (meta.width, meta.height):
        raise UserError(f"{bag}: frame {frame.index} is {frame.width}x{frame.height}, the frames before it "
                        f"{meta.width}x{meta.height}; an episode has one image size (split the bag)")
    if frame.camera is not None and meta.camera is not None and frame.camera != meta.camera:
        raise UserError(f"{bag}: the camera intrinsics change at frame {frame.index}; an episode has one camera "
                        f"(split the bag where the camera changes)")


def import_bags(bags: Sequence[Path | str], out: Path | str, camera: CameraTopics = CameraTopics(),
                split: str = "test", max_frames: int | None = None) -> Path:
    """A new dataset folder `out` of one episode per bag, all in `split`; returns its manifest path."""
    out = Path(out)
    if split not in SPLITS:
        raise UserError(f"unknown split {split!r}; expected one of {SPLITS}")
    if not bags:
        raise UserError("no bag to import")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UserError(f"{out} exists and is not an empty folder; choose a new --out")
    names = [episode_name(Path(bag)) for bag in bags]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise UserError(f"several bags would be the episode {', '.join(repeated)}; rename one of them")
    created = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    try:
        entries = [import_bag(bag, out / EPISODES_DIR / name, camera, name, split, max_frames)
                   for bag, name in zip(bags, names)]
    except BaseException:
        shutil.rmtree(out if created else out / EPISODES_DIR, ignore_errors=True)
        raise
    return write_manifest(out, {"generator": GENERATOR, "episodes": entries})
