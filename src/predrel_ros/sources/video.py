"""Real footage without ground truth: video files and folders of images, as `Frame`s.

Frames carry RGB and a timestamp only (stamps from the frame rate: the container's rate for a
video, `fps` for images); depth, camera and ground truth are None unless `camera` is given.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

import cv2
import numpy as np

from predrel_ros.core.errors import UserError
from predrel_ros.core.frame import CameraIntrinsics, Frame

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp")
VIDEO_SUFFIXES = (".mp4", ".avi", ".mov", ".mkv", ".webm", ".m4v", ".mpg", ".mpeg")


def _stamp(index: int, fps: float) -> int:
    return int(round(index * 1e9 / fps))


class VideoReader:
    """Frames of a video file decoded by OpenCV (BGR converted to RGB)."""

    def __init__(self, path: Path | str, fps: float | None = None, camera: CameraIntrinsics | None = None) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise UserError(f"{self.path}: no such video file")
        capture = cv2.VideoCapture(str(self.path))
        try:
            if not capture.isOpened():
                raise UserError(f"{self.path}: OpenCV cannot open this video (codec or container unsupported)")
            container_fps = capture.get(cv2.CAP_PROP_FPS)
            self.frame_count = int(capture.get(cv2.CAP_PROP_FRAME_COUNT))
        finally:
            capture.release()
        self.fps = float(fps or (container_fps if container_fps and container_fps > 0 else 30.0))
        if self.fps <= 0:
            raise UserError(f"fps must be positive, got {self.fps}")
        self.camera = camera

    def frames(self) -> Iterator[Frame]:
        capture = cv2.VideoCapture(str(self.path))
        try:
            index = 0
            while True:
                ok, bgr = capture.read()
                if not ok:
                    break
                yield Frame(index=index, stamp_ns=_stamp(index, self.fps), rgb=_to_rgb(bgr),
                            camera=self.camera, source="video")
                index += 1
        finally:
            capture.release()


class ImageFolderReader:
    """Frames from the image files of a folder, in file-name order."""

    def __init__(self, path: Path | str, fps: float = 30.0, camera: CameraIntrinsics | None = None) -> None:
        self.path = Path(path)
        if not self.path.is_dir():
            raise UserError(f"{self.path}: no such folder")
        self.files = sorted(p for p in self.path.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
        if not self.files:
            raise UserError(f"{self.path}: no images ({', '.join(IMAGE_SUFFIXES)})")
        if fps <= 0:
            raise UserError(f"fps must be positive, got {fps}")
        self.fps = float(fps)
        self.camera = camera

    def __len__(self) -> int:
        return len(self.files)

    def frames(self) -> Iterator[Frame]:
        for index, path in enumerate(self.files):
            image = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
            if image is None:
                raise UserError(f"{path}: unreadable image")
            yield Frame(index=index, stamp_ns=_stamp(index, self.fps), rgb=_to_rgb(image),
                        camera=self.camera, source="images")


def _to_rgb(image: np.ndarray) -> np.ndarray:
    """OpenCV image (gray, BGR or BGRA, 8 or 16 bit) -> H x W x 3 uint8 RGB."""
    if image.dtype == np.uint16:
        image = (image >> 8).astype(np.uint8)
    elif image.dtype != np.uint8:
        raise UserError(f"unsupported image type {image.dtype}; expected 8 or 16 bit")
    if image.ndim == 2:
        return cv2.cvtColor(image, cv2.COLOR_GRAY2RGB)
    if image.shape[2] == 4:
        return cv2.cvtColor(image, cv2.COLOR_BGRA2RGB)
    return cv2.cvtColor(image, cv2.COLOR_BGR2RGB)
