"""Which way is up, from depth: the support plane, and entities' extents in a gravity-aligned frame.

The static relations in 3D (`rules.static_rules_3d`) judge "above", "below", "rests on" and "near"
along gravity. Where the robot knows which way is up (its tf: the z axis of a REP-103 frame such as
base_link, in the camera's optical frame; the predicate node's `gravity_frame`), that is gravity,
and heights are above the median height of the surface entity's samples. Otherwise gravity is the
normal of the support plane fitted to the surface entity's masked depth points (least squares,
refitted on the points within `PLANE_INLIER_M` of it, so objects standing on the surface mask's
edge do not tilt it); without a surface, image up (the camera's -y axis; heights are then
relative, which is all the pairwise tests need). Coordinates in the frame: (lateral, depth, height)
in metres; lateral is the camera's x axis projected onto the plane, depth the horizontal axis away
from the camera, height above the plane.

An entity's extent is the axis-aligned box of its back-projected samples between the
`EXTENT_QUANTILE` and 1 - `EXTENT_QUANTILE` quantiles per axis: a few stray samples at mask edges
do not stretch it. It is the box of the visible surface: what lies behind the entity, under it or
behind a hand is missing (docs/predicates.md, static relations in 3D).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.spatial.transform import Rotation

from predrel_ros.core.entities import SURFACE
from predrel_ros.core.planes import fit_plane
from predrel_ros.predicates.geometry import EntityGeometry
from predrel_ros.predicates.point_sets import FramePoints, sample_stride

#: points within this distance (m) of the first fit are the plane's in the refit
PLANE_INLIER_M = 0.01
#: refits on the inliers after the first fit
PLANE_REFITS = 2
#: the surface's samples of every PLANE_STRIDE-th row and column, or more sparsely where that
#: leaves more than about `point_sets.SAMPLE_PIXELS` of them, are fitted (a table covers most of
#: the image; a sixteenth of it at 320x240 is thousands of samples, at 640x480 ten thousand)
PLANE_STRIDE = 4
#: fewest samples for a plane
PLANE_MIN_POINTS = 50
#: quantile of the samples that bounds an extent on each side
EXTENT_QUANTILE = 0.02
#: half-size (m) of the plane's footprint: the surface extends under everything in view
_PLANE_REACH_M = 1000.0


@dataclass(frozen=True)
class Extent:
    """Axis-aligned box (lateral, depth, height) of an entity in a `GravityFrame`, metres."""

    low: np.ndarray
    high: np.ndarray


class GravityFrame:
    """Camera points -> (lateral, depth, height) with height along `up` (unit, camera frame)."""

    def __init__(self, up: np.ndarray, offset: float, plane: bool) -> None:
        up = np.asarray(up, dtype=np.float64)
        self.up = up / np.linalg.norm(up)
        self.offset = float(offset)
        self.plane = plane                # True: heights are above the fitted support plane
        lateral = np.array([1.0, 0.0, 0.0]) - self.up[0] * self.up
        if np.linalg.norm(lateral) < 1e-6:    # up along the camera's x axis: any horizontal axis
            lateral = np.array([0.0, 0.0, 1.0]) - self.up[2] * self.up
        self.lateral = lateral / np.linalg.norm(lateral)
        self.depth = np.cross(self.up, self.lateral)
        self._axes = np.stack([self.lateral, self.depth, self.up], axis=1)

    @classmethod
    def image_up(cls) -> "GravityFrame":
        return cls(np.array([0.0, -1.0, 0.0]), 0.0, plane=False)

    @classmethod
    def from_up(cls, up: np.ndarray, points: np.ndarray | None = None) -> "GravityFrame":
        """The frame of a known up direction (camera frame); with a surface's samples (N x 3), heights
        above their median height, else relative heights."""
        frame = cls(up, 0.0, plane=False)
        if points is not None and len(points):
            frame.offset = -float(np.median(np.asarray(points, dtype=np.float64) @ frame.up))
            frame.plane = True
        return frame

    @classmethod
    def from_support(cls, points: np.ndarray) -> "GravityFrame | None":
        """The frame of the plane fitted to a surface's samples (N x 3, camera frame), None when
        too few samples or they do not span a plane."""
        points = np.asarray(points, dtype=np.float64)
        if len(points) < PLANE_MIN_POINTS:
            return None
        normal, offset = fit_plane(points)
        for _ in range(PLANE_REFITS):
            inliers = points[np.abs(points @ normal + offset) <= PLANE_INLIER_M]
            if len(inliers) < PLANE_MIN_POINTS:
                return None
            normal, offset = fit_plane(inliers)
        if not np.all(np.isfinite(normal)):
            return None
        return cls(normal, offset, plane=True)

    def coordinates(self, points: np.ndarray) -> np.ndarray:
        """(lateral, depth, height) of camera-frame points (N x 3)."""
        coordinates = np.asarray(points, dtype=np.float64) @ self._axes
        coordinates[:, 2] += self.offset
        return coordinates

    def extent(self, points: np.ndarray) -> Extent:
        """The quantile box of camera-frame points (N x 3, N >= 1): np.quantile's (linear) values, from
        one partition of each axis at the four order statistics they interpolate (for the thousands
        of points of an entity, several times faster than a sort or np.quantile)."""
        coordinates = self.coordinates(points).T                         # axis x point
        count = coordinates.shape[1]
        positions = (EXTENT_QUANTILE * (count - 1), (1.0 - EXTENT_QUANTILE) * (count - 1))
        ranks = [(math.floor(position), min(math.floor(position) + 1, count - 1)) for position in positions]
        ordered = np.partition(coordinates, sorted({rank for pair in ranks for rank in pair}), axis=1)
        return Extent(*(ordered[:, below] + (position - below) * (ordered[:, above] - ordered[:, below])
                        for position, (below, above) in zip(positions, ranks)))

    def plane_extent(self) -> Extent:
        """The support plane as an extent: height 0 under everything in view."""
        reach = _PLANE_REACH_M
        return Extent(np.array([-reach, -reach, 0.0]), np.array([reach, reach, 0.0]))


class Support:
    """The frame's gravity and the surface entity that gave its plane (None: image up)."""

    def __init__(self, geometries: dict[int, EntityGeometry], points: FramePoints, up: np.ndarray | None = None
                 ) -> None:
        """From the known `up` (camera frame) with heights above the largest surface among `geometries`
        with masked depth samples (of the frame's `points`); without `up`, from that surface's samples
        spanning a plane."""
        self.points = points
        surfaces = [g for g in geometries.values() if g.entity.role == SURFACE]
        self.frame, self.surface = GravityFrame.image_up() if up is None else GravityFrame.from_up(up), None
        if surfaces:
            surface = max(surfaces, key=lambda g: g.area)
            points = self.points.points_m(surface, sample_stride(surface, PLANE_STRIDE))
            frame = None
            if points is not None:
                frame = GravityFrame.from_support(points) if up is None else GravityFrame.from_up(up, points)
            if frame is not None:
                self.frame, self.surface = frame, surface

    def extents(self, geometries: dict[int, EntityGeometry], ids: set[int]) -> dict[int, Extent]:
        """Extents of the entities `ids` that have masked depth samples; the supporting surface's is
        its plane."""
        extents = {}
        for entity_id in ids:
            geometry = geometries[entity_id]
            if geometry is self.surface:
                extents[entity_id] = self.frame.plane_extent()
                continue
            points = self.points.points_m(geometry, sample_stride(geometry))
            if points is not None:
                extents[entity_id] = self.frame.extent(points)
        return extents


def up_from_rotation(quaternion_xyzw) -> np.ndarray:
    """The z axis of a frame in the camera's frame, from the unit quaternion (x, y, z, w) of the
    rotation that takes that frame's vectors into the camera's (tf's lookup_transform(camera, frame)):
    the third column of its rotation matrix. For a REP-103 frame (base_link, odom, map) that is up."""
    quaternion = np.asarray(quaternion_xyzw, dtype=np.float64)
    if quaternion.shape != (4,) or not np.all(np.isfinite(quaternion)) or np.linalg.norm(quaternion) < 1e-9:
        raise ValueError(f"not a rotation quaternion (x, y, z, w): {tuple(quaternion_xyzw)}")
    return Rotation.from_quat(quaternion).as_matrix()[:, 2]
