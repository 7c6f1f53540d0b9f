"""Open any frame source by its path: a dataset episode, a rosbag2 bag, a video or an image folder.

    from predrel_ros.sources.open_source import open_frames
    for frame in open_frames("run.mcap"):   # or an episode folder, bag folder, .mp4, image folder
        ...

A dataset root (with manifest.json) holds many episodes: open one with `open_dataset` instead.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from predrel_ros.core.errors import UserError
from predrel_ros.core.frame import CameraIntrinsics, Frame
from predrel_ros.sources.dataset import MANIFEST_FILE, META_FILE, EpisodeReader
from predrel_ros.sources.video import IMAGE_SUFFIXES, VIDEO_SUFFIXES, ImageFolderReader, VideoReader

if TYPE_CHECKING:
    from predrel_ros.sources.bag import CameraTopics

BAG_SUFFIXES = (".mcap", ".db3")


def source_kind(path: Path | str) -> str:
    """"episode", "bag", "video" or "images" for `path`; UserError when it is none of them."""
    path = Path(path)
    if path.is_dir():
        if (path / META_FILE).is_file():
            return "episode"
        if (path / "metadata.yaml").is_file() or any(p.suffix in BAG_SUFFIXES for p in path.iterdir()):
            return "bag"
        if (path / MANIFEST_FILE).is_file():
            raise UserError(f"{path} is a dataset with many episodes; pass one of its episode folders "
                            f"({path}/episodes/<name>)")
        if any(p.suffix.lower() in IMAGE_SUFFIXES for p in path.iterdir()):
            return "images"
    elif path.is_file():
        if path.suffix in BAG_SUFFIXES:
            return "bag"
        if path.suffix.lower() in VIDEO_SUFFIXES:
            return "video"
    else:
        raise UserError(f"{path}: no such file or folder")
    raise UserError(f"{path}: not an episode folder, rosbag2 bag, video ({', '.join(VIDEO_SUFFIXES)}) "
                    f"or image folder")


def open_frames(path: Path | str, fps: float | None = None, camera: CameraIntrinsics | None = None,
                topics: "CameraTopics | None" = None) -> Iterator[Frame]:
    """Frames of `path`. fps and camera apply to videos and image folders only (bags and episodes
    carry their own stamps and intrinsics); topics (`predrel_ros.sources.bag.CameraTopics`, default:
    all found by message type) to bags only."""
    kind = source_kind(path)
    if kind == "episode":
        return EpisodeReader(path).frames()
    if kind == "bag":
        from predrel_ros.sources.bag import BagReader, CameraTopics

        return BagReader(path, camera=topics or CameraTopics()).frames()
    if kind == "video":
        return VideoReader(path, fps=fps, camera=camera).frames()
    return ImageFolderReader(path, fps=fps or 30.0, camera=camera).frames()
