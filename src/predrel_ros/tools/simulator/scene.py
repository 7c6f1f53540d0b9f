"""Scene specifications: what is on the table, where, in which size and colour.

A `SceneSpec` is plain data sampled from a seed (`SceneBuilder`); `mjcf.py` turns it into a MuJoCo
model. World frame: z up, table top at z = 0, the front camera looks along +y.

Body frames: objects (cube, cylinder, bar) have their origin at their centre; containers (box,
bowl) at the centre of their bottom face; hands at the centre of the palm, palm facing -z, fingers
closing along the hand's y axis.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from predrel_ros.core import entities as roles
from predrel_ros.core.errors import UserError
from predrel_ros.tools.simulator.config import SceneConfig

# detector classes (the perception model's labels); the hand's side is in its role
HAND, CUBE, CYLINDER, BAR, BOX, BOWL, TABLE = "hand", "cube", "cylinder", "bar", "box", "bowl", "table"
CLASS_LABELS = (HAND, CUBE, CYLINDER, BAR, BOX, BOWL, TABLE)
OBJECT_LABELS = (CUBE, CYLINDER, BAR)
CONTAINER_LABELS = (BOX, BOWL)

# kinds group entities by how the simulator treats them
KIND_HAND, KIND_OBJECT, KIND_CONTAINER, KIND_SURFACE = "hand", "object", "container", "surface"

#: palm and fingers of every hand (metres); finger length is randomised per hand
PALM_HALF = (0.034, 0.04, 0.011)
FINGER_RADIUS = 0.0085
THUMB_RADIUS = 0.0095
FINGER_XS = (-0.022, 0.0, 0.022)
FOREARM_RADIUS = 0.022
FOREARM_LENGTH = 0.14
#: container walls and floors
WALL_THICKNESS = 0.008
FLOOR_THICKNESS = 0.008
BOWL_STAVES = 14
TABLE_HALF = (0.45, 0.32)
TABLE_THICKNESS = 0.04
TABLE_HEIGHT = 0.75

OBJECT_PALETTE = ((0.85, 0.15, 0.12), (0.15, 0.6, 0.2), (0.15, 0.3, 0.85), (0.95, 0.8, 0.1),
                  (0.95, 0.5, 0.1), (0.55, 0.2, 0.7), (0.1, 0.7, 0.75), (0.9, 0.35, 0.6))
CONTAINER_PALETTE = ((0.55, 0.38, 0.22), (0.6, 0.6, 0.62), (0.92, 0.92, 0.9), (0.2, 0.25, 0.45))
TABLE_PALETTE = ((0.62, 0.47, 0.32), (0.45, 0.45, 0.47), (0.75, 0.7, 0.62), (0.35, 0.27, 0.2))
HAND_PALETTE = ((0.93, 0.76, 0.64), (0.78, 0.57, 0.44), (0.55, 0.38, 0.28), (0.3, 0.45, 0.8))


@dataclass(frozen=True)
class EntitySpec:
    """One entity of a scene.

    size: label-specific shape parameters (metres):
        cube (half size,); cylinder (radius, half height); bar (half length, half width) with a
        square section; box (inner half x, inner half y, wall height); bowl (bottom inner radius,
        top inner radius, height); table (half x, half y); hand (finger length,).
    position: initial body origin (world); yaw: initial rotation about z (radians).
    """

    id: int
    label: str
    role: str
    kind: str
    size: tuple[float, ...]
    rgba: tuple[float, float, float, float]
    position: tuple[float, float, float]
    yaw: float = 0.0

    @property
    def name(self) -> str:
        return f"e{self.id}_{self.label}"

    @property
    def is_hand(self) -> bool:
        return self.kind == KIND_HAND

    @property
    def side(self) -> str:
        """'left' or 'right' for hands."""
        return "left" if self.role == roles.LEFT_HAND else "right"

    def half_extents(self) -> np.ndarray:
        """Half extents of the shape in its body frame (for objects: about the origin)."""
        if self.label == CUBE:
            return np.array([self.size[0]] * 3)
        if self.label == CYLINDER:
            return np.array([self.size[0], self.size[0], self.size[1]])
        if self.label == BAR:
            return np.array([self.size[0], self.size[1], self.size[1]])
        if self.label == BOX:
            return np.array([self.size[0] + WALL_THICKNESS, self.size[1] + WALL_THICKNESS, self.size[2] / 2])
        if self.label == BOWL:
            radius = self.size[1] + WALL_THICKNESS
            return np.array([radius, radius, self.size[2] / 2])
        raise ValueError(f"no half extents for {self.label}")

    @property
    def footprint_radius(self) -> float:
        """Radius of a circle (about the origin) that holds the entity's footprint on the table."""
        half = self.half_extents()
        if self.label in (CYLINDER, BOWL):
            return float(half[0])
        return float(math.hypot(half[0], half[1]))

    @property
    def height(self) -> float:
        return float(2 * self.half_extents()[2])

    def interior(self) -> tuple[float, float, float]:
        """Containers: (inner half x or bottom radius, inner half y or top radius, rim height)
        in the body frame; the interior floor is at z = FLOOR_THICKNESS."""
        if self.kind != KIND_CONTAINER:
            raise ValueError(f"{self.name} is not a container")
        return self.size[0], self.size[1], self.size[2]


@dataclass(frozen=True)
class LightSpec:
    position: tuple[float, float, float]
    direction: tuple[float, float, float]
    diffuse: float
    shadows: bool


@dataclass(frozen=True)
class CameraSpec:
    """A fixed camera: position, the point it looks at, vertical field of view (degrees)."""

    name: str
    position: tuple[float, float, float]
    target: tuple[float, float, float]
    fovy: float

    def axes(self) -> tuple[np.ndarray, np.ndarray]:
        """MuJoCo camera x (right) and y (up) axes in the world; the camera looks along -z."""
        forward = np.subtract(self.target, self.position)
        forward = forward / np.linalg.norm(forward)
        right = np.cross(forward, (0.0, 0.0, 1.0))
        right /= np.linalg.norm(right)
        up = np.cross(right, forward)
        return right, up


@dataclass(frozen=True)
class SceneSpec:
    entities: tuple[EntitySpec, ...]
    cameras: tuple[CameraSpec, ...]
    lights: tuple[LightSpec, ...]
    floor_rgba: tuple[float, float, float, float]

    def entity(self, entity_id: int) -> EntitySpec:
        for spec in self.entities:
            if spec.id == entity_id:
                return spec
        raise KeyError(f"scene has no entity {entity_id}")

    def hand(self, side: str) -> EntitySpec:
        for spec in self.entities:
            if spec.is_hand and spec.side == side:
                return spec
        raise KeyError(f"scene has no {side} hand")

    @property
    def table(self) -> EntitySpec:
        return next(spec for spec in self.entities if spec.kind == KIND_SURFACE)


def hand_rest_position(side: str) -> tuple[float, float, float]:
    """Where a hand waits when it is not acting: above the table, to its side, near the camera."""
    return (0.24 if side == "right" else -0.24, -0.02, 0.19)


def _segment_distance(point: np.ndarray, start: np.ndarray, end: np.ndarray) -> float:
    """Distance from a 2D point to the segment start-end."""
    direction = end - start
    length_sq = float(direction @ direction)
    along = 0.0 if length_sq == 0 else float(np.clip((point - start) @ direction / length_sq, 0.0, 1.0))
    return float(np.linalg.norm(start + along * direction - point))


def _jitter_colour(rng: np.random.Generator, palette, spread: float = 0.06) -> tuple[float, float, float, float]:
    base = np.asarray(palette[int(rng.integers(len(palette)))])
    rgb = np.clip(base + rng.uniform(-spread, spread, 3), 0.0, 1.0)
    return (float(rgb[0]), float(rgb[1]), float(rgb[2]), 1.0)


@dataclass
class SceneBuilder:
    """Samples a scene entity by entity; templates call it, then `finish()` adds distractors,
    lights and cameras. All randomness comes from `rng`."""

    rng: np.random.Generator
    config: SceneConfig = field(default_factory=SceneConfig)
    _entities: list[EntitySpec] = field(default_factory=list)
    _last_id: int = 0
    #: table regions kept free for the script: (start xy, end xy, radius) segments (a spot when
    #: start == end), e.g. a place destination or the corridor of a slide
    _reserved: list[tuple[np.ndarray, np.ndarray, float]] = field(default_factory=list)

    def _next_id(self) -> int:
        self._last_id += 1
        return self._last_id

    def _uniform(self, bounds: tuple[float, float]) -> float:
        return float(self.rng.uniform(*bounds))

    def add_hand(self, side: str) -> EntitySpec:
        role = roles.RIGHT_HAND if side == "right" else roles.LEFT_HAND
        spec = EntitySpec(id=self._next_id(), label=HAND, role=role, kind=KIND_HAND,
                          size=(self._uniform((0.05, 0.06)),), rgba=_jitter_colour(self.rng, HAND_PALETTE, 0.03),
                          position=hand_rest_position(side), yaw=0.0)
        self._entities.append(spec)
        return spec

    def add_table(self) -> EntitySpec:
        spec = EntitySpec(id=self._next_id(), label=TABLE, role=roles.SURFACE, kind=KIND_SURFACE,
                          size=TABLE_HALF, rgba=_jitter_colour(self.rng, TABLE_PALETTE, 0.04),
                          position=(0.0, 0.0, 0.0))
        self._entities.append(spec)
        return spec

    def object_spec(self, role: str, labels=OBJECT_LABELS) -> EntitySpec:
        """An unplaced object (position set by `place*`)."""
        label = str(labels[int(self.rng.integers(len(labels)))])
        c = self.config
        if label == CUBE:
            size = (self._uniform(c.cube_half_size),)
        elif label == CYLINDER:
            size = (self._uniform(c.cylinder_radius), self._uniform(c.cylinder_half_height))
        elif label == BAR:
            size = (self._uniform(c.bar_half_length), self._uniform(c.bar_half_width))
        else:
            raise ValueError(f"{label} is not an object label; expected one of {OBJECT_LABELS}")
        if label == BAR and role == roles.MANIPULATED_OBJECT:
            role = roles.TOOL
        return EntitySpec(id=self._next_id(), label=label, role=role, kind=KIND_OBJECT, size=size,
                          rgba=_jitter_colour(self.rng, OBJECT_PALETTE), position=(0.0, 0.0, 0.0))

    def container_spec(self, labels=CONTAINER_LABELS) -> EntitySpec:
        label = str(labels[int(self.rng.integers(len(labels)))])
        c = self.config
        if label == BOX:
            half = self._uniform(c.box_inner_half_size)
            size = (half, half * self._uniform((0.85, 1.0)), self._uniform(c.box_wall_height))
        else:
            size = (self._uniform(c.bowl_bottom_radius), self._uniform(c.bowl_top_radius),
                    self._uniform(c.bowl_height))
        return EntitySpec(id=self._next_id(), label=label, role=roles.CONTAINER, kind=KIND_CONTAINER,
                          size=size, rgba=_jitter_colour(self.rng, CONTAINER_PALETTE), position=(0.0, 0.0, 0.0))

    def _resting_z(self, spec: EntitySpec, support_top: float) -> float:
        return support_top if spec.kind == KIND_CONTAINER else support_top + float(spec.half_extents()[2])

    def place_on_table(self, spec: EntitySpec, region_x: tuple[float, float] | None = None,
                       yaw_range: float = math.pi, away_from: tuple[float, float] | None = None,
                       min_distance: float = 0.0) -> EntitySpec:
        """Put `spec` on the table at a free spot (rejection sampling), optionally inside an x
        range and at least `min_distance` from the point `away_from`."""
        c = self.config
        low_x, high_x = region_x or c.workspace_x
        for _ in range(400):
            x = self._uniform((low_x + spec.footprint_radius, high_x - spec.footprint_radius))
            y = self._uniform((c.workspace_y[0] + spec.footprint_radius, c.workspace_y[1] - spec.footprint_radius))
            if away_from is not None and math.hypot(x - away_from[0], y - away_from[1]) < min_distance:
                continue
            if self.is_free(x, y, spec.footprint_radius):
                placed = replace(spec, position=(x, y, self._resting_z(spec, 0.0)),
                                 yaw=self._uniform((-yaw_range, yaw_range)))
                self._entities.append(placed)
                return placed
        raise UserError(f"scene sampling: no free spot on the table for {spec.label}; the workspace is "
                        f"too small for the scene (SceneConfig.workspace_x / workspace_y)")

    def is_free(self, x: float, y: float, radius: float, ignore: tuple[int, ...] = ()) -> bool:
        """No table entity's footprint and no reserved region comes within the clearance of a
        circle at (x, y)."""
        clearance = self.config.placement_clearance_m
        for other in self._entities:
            if other.kind in (KIND_HAND, KIND_SURFACE) or other.id in ignore:
                continue
            if math.hypot(x - other.position[0], y - other.position[1]) < radius + other.footprint_radius + clearance:
                return False
        point = np.array([x, y])
        return all(_segment_distance(point, start, end) >= radius + reserved + clearance
                   for start, end, reserved in self._reserved)

    def free_spot(self, radius: float, away_from: tuple[float, float], min_distance: float,
                  max_distance: float = 0.35, ignore: tuple[int, ...] = (),
                  clear_path: bool = False) -> tuple[float, float]:
        """A free (x, y) on the table between min_distance and max_distance from `away_from`;
        with clear_path, nothing stands in the corridor from `away_from` to it either (an object
        slid along the table)."""
        c = self.config
        for _ in range(400):
            x = self._uniform((c.workspace_x[0] + radius, c.workspace_x[1] - radius))
            y = self._uniform((c.workspace_y[0] + radius, c.workspace_y[1] - radius))
            distance = math.hypot(x - away_from[0], y - away_from[1])
            if not (min_distance <= distance <= max_distance and self.is_free(x, y, radius, ignore)):
                continue
            if clear_path and not self._corridor_free(away_from, (x, y), radius, ignore):
                continue
            start = np.asarray(away_from, float) if clear_path else np.array([x, y])
            self._reserved.append((start, np.array([x, y]), radius))
            return (x, y)
        raise UserError("scene sampling: no free destination on the table; widen SceneConfig.workspace_*")

    def _corridor_free(self, start, end, radius: float, ignore: tuple[int, ...]) -> bool:
        start, end = np.asarray(start, float), np.asarray(end, float)
        for other in self._entities:
            if other.kind in (KIND_HAND, KIND_SURFACE) or other.id in ignore:
                continue
            gap = _segment_distance(np.asarray(other.position[:2]), start, end)
            if gap < radius + other.footprint_radius + self.config.placement_clearance_m:
                return False
        return True

    def place_inside(self, spec: EntitySpec, container: EntitySpec) -> EntitySpec:
        """Put `spec` on the floor of `container`, near its centre."""
        x, y, z = container.position
        offset = self.rng.uniform(-0.008, 0.008, 2)
        placed = replace(spec, position=(x + float(offset[0]), y + float(offset[1]),
                                          z + FLOOR_THICKNESS + float(spec.half_extents()[2])),
                         yaw=self._uniform((-math.pi, math.pi)))
        self._entities.append(placed)
        return placed

    def place_on(self, spec: EntitySpec, base: EntitySpec) -> EntitySpec:
        """Stack `spec` on top of the object `base`."""
        x, y, z = base.position
        offset = self.rng.uniform(-0.004, 0.004, 2)
        placed = replace(spec, position=(x + float(offset[0]), y + float(offset[1]),
                                          z + float(base.half_extents()[2] + spec.half_extents()[2]) + 0.0005),
                         yaw=base.yaw + self._uniform((-0.3, 0.3)))
        self._entities.append(placed)
        return placed

    def finish(self) -> SceneSpec:
        """Add distractors, lights and cameras; return the scene."""
        c = self.config
        for _ in range(int(self.rng.integers(c.distractors[0], c.distractors[1] + 1))):
            spec = self.object_spec(roles.DISTRACTOR, (CUBE, CYLINDER))
            try:
                self.place_on_table(spec)
            except UserError:
                break  # a crowded table simply gets fewer distractors
        lights = []
        for index in range(int(self.rng.integers(c.lights[0], c.lights[1] + 1))):
            position = (self._uniform((-0.8, 0.8)), self._uniform((-0.9, 0.3)), self._uniform((1.2, 1.8)))
            direction = -np.asarray(position) / np.linalg.norm(position)
            lights.append(LightSpec(position=position, direction=tuple(float(v) for v in direction),
                                    diffuse=self._uniform((0.45, 0.75)), shadows=index == 0))
        def jittered(point, scale: float = 1.0) -> tuple[float, float, float]:
            offset = self.rng.uniform(-c.camera_jitter_m, c.camera_jitter_m, 3) * scale
            return tuple(float(v) for v in np.asarray(point) + offset)

        cameras = (CameraSpec("front", jittered((0.0, -0.56, 0.34)), jittered((0.0, 0.05, 0.0), 0.5), 55.0),
                   CameraSpec("side", jittered((0.55, -0.4, 0.36)), (0.0, 0.04, 0.0), 55.0))
        floor = _jitter_colour(self.rng, ((0.32, 0.33, 0.36), (0.42, 0.36, 0.3)), 0.05)
        entities = tuple(sorted(self._entities, key=lambda spec: spec.id))
        return SceneSpec(entities=entities, cameras=cameras, lights=tuple(lights), floor_rgba=floor)
