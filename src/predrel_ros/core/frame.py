"""One `Frame` type for every source: dataset folders, rosbag2 bags, video files, image folders.

A frame always carries an RGB image and a timestamp. Depth, camera intrinsics, ground-truth
entities, ground-truth predicates and the primitive label are present when the source has them
(a recorded controlled episode has all of them; a phone video has none) and None otherwise.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from predrel_ros.core.entities import Entity
from predrel_ros.predicates.estimate import PredicateEstimate

#: manipulation primitives of the downstream recognizer (paper 4.6), in class-index order
PRIMITIVE_LABELS = ("approach", "grasp", "transport", "place", "insert", "remove", "release", "idle")

#: ROS optical frame of the colour camera (x right, y down, z forward)
CAMERA_FRAME_ID = "camera_color_optical_frame"


@dataclass(frozen=True)
class CameraIntrinsics:
    """Pinhole intrinsics in the OpenCV / ROS convention (pixel (0, 0) is the centre of the
    top-left pixel), no distortion unless `distortion` says otherwise."""

    width: int
    height: int
    fx: float
    fy: float
    cx: float
    cy: float
    distortion: tuple[float, ...] = (0.0, 0.0, 0.0, 0.0, 0.0)
    distortion_model: str = "plumb_bob"
    frame_id: str = CAMERA_FRAME_ID

    def __post_init__(self) -> None:
        if self.width <= 0 or self.height <= 0:
            raise ValueError(f"camera size must be positive, got {self.width}x{self.height}")
        if not (self.fx > 0 and self.fy > 0):
            raise ValueError(f"camera focal lengths must be positive, got fx={self.fx} fy={self.fy}")
        object.__setattr__(self, "distortion", tuple(float(v) for v in self.distortion))

    @property
    def K(self) -> np.ndarray:
        """3x3 camera matrix."""
        return np.array([[self.fx, 0.0, self.cx], [0.0, self.fy, self.cy], [0.0, 0.0, 1.0]])

    def project(self, points: np.ndarray) -> np.ndarray:
        """N x 3 points in the optical frame (z > 0) -> N x 2 pixel coordinates."""
        points = np.asarray(points, dtype=np.float64).reshape(-1, 3)
        z = points[:, 2]
        return np.stack([self.fx * points[:, 0] / z + self.cx, self.fy * points[:, 1] / z + self.cy], axis=1)

    def to_dict(self) -> dict:
        return {"width": self.width, "height": self.height, "fx": self.fx, "fy": self.fy,
                "cx": self.cx, "cy": self.cy, "distortion": list(self.distortion),
                "distortion_model": self.distortion_model, "frame_id": self.frame_id}

    @classmethod
    def from_dict(cls, data: dict) -> "CameraIntrinsics":
        return cls(width=int(data["width"]), height=int(data["height"]), fx=float(data["fx"]),
                   fy=float(data["fy"]), cx=float(data["cx"]), cy=float(data["cy"]),
                   distortion=tuple(data.get("distortion", (0.0,) * 5)),
                   distortion_model=data.get("distortion_model", "plumb_bob"),
                   frame_id=data.get("frame_id", CAMERA_FRAME_ID))


@dataclass
class Frame:
    """One camera frame, with whatever ground truth its source has.

    index: position in its stream (0-based).
    stamp_ns: capture time in nanoseconds.
    rgb: H x W x 3 uint8, RGB channel order.
    depth: H x W float32 metres aligned with rgb (NaN where unknown), or None.
    camera: intrinsics of rgb (and of the aligned depth), or None.
    entities: ground-truth entities (with masks), or None when the source has no ground truth.
    predicates: ground-truth predicates (confidence 1), or None.
    primitive: ground-truth manipulation primitive (one of PRIMITIVE_LABELS), or None.
    source: where the frame came from: "dataset", "bag", "video" or "images".
    attributes: extra per-frame data of the source (e.g. the script primitive of a controlled
        episode), JSON-serialisable.
    """

    index: int
    stamp_ns: int
    rgb: np.ndarray
    depth: np.ndarray | None = None
    camera: CameraIntrinsics | None = None
    entities: list[Entity] | None = None
    predicates: list[PredicateEstimate] | None = None
    primitive: str | None = None
    source: str = ""
    attributes: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.rgb = np.asarray(self.rgb)
        if self.rgb.ndim != 3 or self.rgb.shape[2] != 3 or self.rgb.dtype != np.uint8:
            raise ValueError(f"frame {self.index}: rgb must be H x W x 3 uint8, got shape "
                             f"{self.rgb.shape} dtype {self.rgb.dtype}")
        if self.depth is not None:
            self.depth = np.asarray(self.depth, dtype=np.float32)
            if self.depth.shape != self.rgb.shape[:2]:
                raise ValueError(f"frame {self.index}: depth shape {self.depth.shape} does not match "
                                 f"rgb {self.rgb.shape[:2]}")
        if self.primitive is not None and self.primitive not in PRIMITIVE_LABELS:
            raise ValueError(f"frame {self.index}: unknown primitive {self.primitive!r}; expected one "
                             f"of {PRIMITIVE_LABELS}")

    @property
    def height(self) -> int:
        return int(self.rgb.shape[0])

    @property
    def width(self) -> int:
        return int(self.rgb.shape[1])

    @property
    def has_ground_truth(self) -> bool:
        return self.entities is not None
