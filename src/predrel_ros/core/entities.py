"""Visual entities: the paper's e_i = (label, box, mask, track id, quality, visibility, geometry).

An `Entity` is what perception (or the simulator's ground truth) hands to predicate extraction for
one frame. It is plain data: numpy arrays and floats, no ROS types.

Roles say what part an entity can play in a relation; only semantically meaningful role pairs are
evaluated (paper 4.2). Labels (detector classes such as "cube" or "bowl") map to roles through a
configurable `RoleMap`.
"""
from __future__ import annotations

from dataclasses import InitVar, dataclass, field
from typing import Mapping

import numpy as np

from predrel_ros.core.masks import mask_centroid

LEFT_HAND = "left_hand"
RIGHT_HAND = "right_hand"
MANIPULATED_OBJECT = "manipulated_object"
TOOL = "tool"
CONTAINER = "container"
SURFACE = "surface"
TARGET = "target"
DISTRACTOR = "distractor"

ROLES = (LEFT_HAND, RIGHT_HAND, MANIPULATED_OBJECT, TOOL, CONTAINER, SURFACE, TARGET, DISTRACTOR)
HAND_ROLES = (LEFT_HAND, RIGHT_HAND)


@dataclass
class Entity:
    """One tracked entity in one frame.

    box: (x1, y1, x2, y2) in pixels, x2 > x1 and y2 > y1.
    mask: boolean H x W array at frame resolution, or None when only a box is known.
    score: detection quality q_i in [0, 1].
    visibility: visible fraction in [0, 1] (1 = fully visible, 0 = not seen this frame).
    track_quality: identity stability of the track in [0, 1] (continuity, switches, smoothness).
    mask_quality: trust in the mask boundary in [0, 1] (1 for ground truth masks).
    centroid: (x, y) in pixels, or (x, y, z) where z is the camera depth in metres at the entity;
        computed from the mask (else the box) when not given.
    point3d: optional (X, Y, Z) in the camera frame, metres.
    crop: optional (x, y, width, height) of a pixel rectangle of the mask that holds every true pixel
        (a decoded Entity.msg RLE's crop), kept as `mask_crop` so the predicate geometry reads only that
        rectangle of a full-frame mask. A promise of the producer (checked to lie in the mask, not
        scanned); not carried by `dataclasses.replace`, since a new mask need not fit it.
    """

    id: int
    label: str
    role: str
    box: np.ndarray
    mask: np.ndarray | None = None
    score: float = 1.0
    visibility: float = 1.0
    track_quality: float = 1.0
    mask_quality: float = 1.0
    centroid: np.ndarray | None = None
    point3d: np.ndarray | None = None
    frame_index: int = 0
    attributes: dict = field(default_factory=dict)
    crop: InitVar[tuple[int, int, int, int] | None] = None
    mask_crop: tuple[int, int, int, int] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self, crop: tuple[int, int, int, int] | None) -> None:
        if self.role not in ROLES:
            raise ValueError(f"Entity {self.id}: unknown role {self.role!r}; expected one of {ROLES}")
        self.box = np.asarray(self.box, dtype=np.float64).reshape(4)
        if not np.all(np.isfinite(self.box)):
            raise ValueError(f"Entity {self.id}: box has non-finite values {self.box.tolist()}")
        if self.box[2] < self.box[0] or self.box[3] < self.box[1]:
            raise ValueError(f"Entity {self.id}: box must be (x1, y1, x2, y2) with x2>=x1, y2>=y1, "
                             f"got {self.box.tolist()}")
        if self.mask is not None:
            self.mask = np.asarray(self.mask, dtype=bool)
            if self.mask.ndim != 2:
                raise ValueError(f"Entity {self.id}: mask must be 2-D (H x W), got shape {self.mask.shape}")
            if crop is not None:
                self.mask_crop = _checked_crop(self.id, crop, self.mask.shape)
        elif crop is not None:
            raise ValueError(f"Entity {self.id}: a mask crop needs a mask")
        for name in ("score", "visibility", "track_quality", "mask_quality"):
            value = float(getattr(self, name))
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"Entity {self.id}: {name} must lie in [0, 1], got {value}")
            setattr(self, name, value)
        if self.centroid is None:
            self.centroid = self._centroid_from_geometry()
        else:
            self.centroid = np.asarray(self.centroid, dtype=np.float64).reshape(-1)
            if self.centroid.size not in (2, 3):
                raise ValueError(f"Entity {self.id}: centroid must be (x, y) or (x, y, z), "
                                 f"got {self.centroid.size} values")
            if not np.all(np.isfinite(self.centroid)):
                raise ValueError(f"Entity {self.id}: centroid has non-finite values {self.centroid.tolist()}")
        if self.point3d is not None:
            self.point3d = np.asarray(self.point3d, dtype=np.float64).reshape(3)
            if not np.all(np.isfinite(self.point3d)):
                raise ValueError(f"Entity {self.id}: point3d has non-finite values {self.point3d.tolist()}")

    def _centroid_from_geometry(self) -> np.ndarray:
        centroid = None if self.mask is None else mask_centroid(self.mask, self.mask_crop)
        if centroid is not None:
            return centroid
        x1, y1, x2, y2 = self.box
        return np.array([(x1 + x2) / 2.0, (y1 + y2) / 2.0])

    @property
    def is_hand(self) -> bool:
        return self.role in HAND_ROLES

    @property
    def depth(self) -> float | None:
        """Camera depth in metres, from point3d or a 3-element centroid, else None."""
        if self.point3d is not None:
            return float(self.point3d[2])
        if self.centroid is not None and self.centroid.size == 3:
            return float(self.centroid[2])
        return None


def _checked_crop(entity_id: int, crop, shape: tuple[int, int]) -> tuple[int, int, int, int]:
    x, y, width, height = (int(value) for value in crop)
    if min(x, y, width, height) < 0 or x + width > shape[1] or y + height > shape[0]:
        raise ValueError(f"Entity {entity_id}: mask crop x={x} y={y} {width}x{height} does not lie in the "
                         f"{shape[1]}x{shape[0]} mask")
    return x, y, width, height


class RoleMap:
    """Maps detector labels to roles, e.g. {"bowl": "container", "table": "surface"}.

    Unknown labels get `default_role` (a manipulable object unless configured otherwise), so a user's
    own model with new class names still yields entities.
    """

    def __init__(self, mapping: Mapping[str, str], default_role: str = MANIPULATED_OBJECT) -> None:
        for label, role in list(mapping.items()) + [("<default>", default_role)]:
            if role not in ROLES:
                raise ValueError(f"role map: label {label!r} maps to unknown role {role!r}; "
                                 f"expected one of {ROLES}")
        self.mapping = dict(mapping)
        self.default_role = default_role

    def role_of(self, label: str) -> str:
        return self.mapping.get(label, self.default_role)
