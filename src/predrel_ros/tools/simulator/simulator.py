"""MuJoCo physics of one scene: hands driven kinematically, grasps as welds, per-frame state.

`Simulation` owns the MjModel / MjData of a `SceneSpec`. Hands are mocap bodies: the script sets
their pose and finger opening every physics step; a grasp switches on the weld between hand and
object with their relative pose of that instant, a release switches it off. After each frame's
physics steps `record()` returns a `PhysicsState`: what the ground truth is computed from (MuJoCo
contacts, 3D boxes and poses, attachments), never the rendered images.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import mujoco
import numpy as np

from predrel_ros.tools.simulator.config import GenerationConfig
from predrel_ros.tools.simulator.mjcf import (
    DEFAULT_OPEN_HALF_GAP,
    build_mjcf,
    finger_geom_names,
    finger_side,
    graspable,
    weld_name,
)
from predrel_ros.tools.simulator.scene import KIND_CONTAINER, KIND_HAND, SceneSpec


@dataclass
class HandPose:
    """Kinematic state of a hand: palm centre (world), rotation about z, finger half gap (palm
    centre to each finger axis, along the hand's y)."""

    position: np.ndarray
    yaw: float
    finger_gap: float = DEFAULT_OPEN_HALF_GAP

    def copy(self) -> "HandPose":
        return HandPose(np.array(self.position, dtype=np.float64), float(self.yaw), float(self.finger_gap))


@dataclass
class PhysicsState:
    """Simulator state of one frame (world frame, metres).

    ids: entity ids in scene order; arrays below are indexed like ids.
    box_min, box_max: world-aligned 3D bounding box of each entity's colliding geoms (a hand's
        forearm and the table's legs are left out).
    centre: centre of that box. body_pos, body_rot: body origin and 3x3 rotation.
    contact_distance: {(a, b) with a < b: smallest signed distance between their colliding geoms,
        for pairs within the contact distance}.
    support_contacts: {(a, b)} where a rests on b: a contact (or near-contact) between them whose
        normal is within the support cone and lies below a's centre.
    attachments: {(hand, entity)} welded this frame.
    """

    time: float
    ids: tuple[int, ...]
    box_min: np.ndarray
    box_max: np.ndarray
    centre: np.ndarray
    body_pos: np.ndarray
    body_rot: np.ndarray
    contact_distance: dict[tuple[int, int], float]
    support_contacts: set[tuple[int, int]]
    attachments: frozenset[tuple[int, int]]
    hand_poses: dict[int, HandPose] = field(default_factory=dict)


def _yaw_quat(yaw: float) -> np.ndarray:
    return np.array([np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)])


class Simulation:
    """Physics of one scene."""

    def __init__(self, scene: SceneSpec, config: GenerationConfig) -> None:
        self.scene = scene
        self.config = config
        self.model = mujoco.MjModel.from_xml_string(build_mjcf(scene, config))
        self.data = mujoco.MjData(self.model)
        model = self.model
        self.ids = tuple(spec.id for spec in scene.entities)
        self._index = {entity_id: i for i, entity_id in enumerate(self.ids)}
        self.body = {spec.id: model.body(spec.name).id for spec in scene.entities}
        body_entity = np.zeros(model.nbody, dtype=np.int64)
        for entity_id, body in self.body.items():
            body_entity[body] = entity_id
        #: entity id of every geom, 0 for geoms of no entity (the floor)
        self.geom_entity = body_entity[model.geom_bodyid]
        self.mocap = {spec.id: int(model.body_mocapid[self.body[spec.id]])
                      for spec in scene.entities if spec.kind == KIND_HAND}
        self._fingers: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        for spec in scene.entities:
            if spec.kind == KIND_HAND:
                fingers, thumbs = finger_geom_names(spec)
                self._fingers[spec.id] = (np.array([model.geom(n).id for n in fingers]),
                                          np.array([model.geom(n).id for n in thumbs]))
        self.welds = {(hand.id, target.id): model.equality(weld_name(hand, target)).id
                      for hand in scene.entities if hand.kind == KIND_HAND
                      for target in scene.entities if graspable(target)}
        self.hand_poses = {spec.id: HandPose(np.array(spec.position, float), spec.yaw)
                           for spec in scene.entities if spec.kind == KIND_HAND}
        self.attachments: set[tuple[int, int]] = set()
        self._support_min_z = config.ground_truth.support_normal_min_z
        self._contact_max = config.ground_truth.contact_distance_m
        self._geom_pairs = self._candidate_geom_pairs()
        for hand_id, pose in self.hand_poses.items():
            self.set_hand(hand_id, pose)
        mujoco.mj_forward(self.model, self.data)

    # ------------------------------------------------------------------ hands and grasps

    def set_hand(self, hand_id: int, pose: HandPose) -> None:
        """Move a hand (mocap) and place its fingers at `pose.finger_gap`."""
        self.hand_poses[hand_id] = pose
        mocap = self.mocap[hand_id]
        self.data.mocap_pos[mocap] = pose.position
        self.data.mocap_quat[mocap] = _yaw_quat(pose.yaw)
        spec = self.scene.entity(hand_id)
        side = finger_side(spec)
        fingers, thumbs = self._fingers[hand_id]
        self.model.geom_pos[fingers, 1] = side * pose.finger_gap
        self.model.geom_pos[thumbs, 1] = -side * pose.finger_gap

    def attach(self, hand_id: int, entity_id: int) -> None:
        """Weld `entity_id` to the hand at their current relative pose."""
        eq = self.welds[(hand_id, entity_id)]
        hand_body, body = self.body[hand_id], self.body[entity_id]
        data = self.data
        inverse = np.zeros(4)
        mujoco.mju_negQuat(inverse, data.xquat[hand_body])
        relative_pos = np.zeros(3)
        mujoco.mju_rotVecQuat(relative_pos, data.xpos[body] - data.xpos[hand_body], inverse)
        relative_quat = np.zeros(4)
        mujoco.mju_mulQuat(relative_quat, inverse, data.xquat[body])
        self.model.eq_data[eq, 0:3] = 0.0
        self.model.eq_data[eq, 3:6] = relative_pos
        self.model.eq_data[eq, 6:10] = relative_quat
        data.eq_active[eq] = 1
        self.attachments.add((hand_id, entity_id))

    def detach(self, hand_id: int) -> None:
        """Switch off every weld of the hand."""
        for pair in [p for p in self.attachments if p[0] == hand_id]:
            self.data.eq_active[self.welds[pair]] = 0
            self.attachments.discard(pair)

    def held_by(self, hand_id: int) -> int | None:
        held = [entity for hand, entity in self.attachments if hand == hand_id]
        return held[0] if held else None

    # ------------------------------------------------------------------ stepping and state

    def step(self) -> None:
        mujoco.mj_step(self.model, self.data)

    def settle(self, seconds: float) -> None:
        for _ in range(int(round(seconds / self.model.opt.timestep))):
            self.step()

    def entity_box(self, entity_id: int) -> tuple[np.ndarray, np.ndarray]:
        """World-aligned 3D bounding box of an entity now."""
        state_min, state_max = self._boxes()
        i = self._index[entity_id]
        return state_min[i], state_max[i]

    def body_pose(self, entity_id: int) -> tuple[np.ndarray, np.ndarray]:
        body = self.body[entity_id]
        return self.data.xpos[body].copy(), self.data.xmat[body].reshape(3, 3).copy()

    def _geom_boxes(self) -> tuple[np.ndarray, np.ndarray]:
        """World-aligned bounding box (low, high) of every geom now."""
        model, data = self.model, self.data
        rotation = data.geom_xmat.reshape(-1, 3, 3)
        centre = data.geom_xpos + np.einsum("gij,gj->gi", rotation, model.geom_aabb[:, :3])
        half = np.einsum("gij,gj->gi", np.abs(rotation), model.geom_aabb[:, 3:])
        return centre - half, centre + half

    def _boxes(self) -> tuple[np.ndarray, np.ndarray]:
        lows, highs = self._geom_boxes()
        box_min = np.empty((len(self.ids), 3))
        box_max = np.empty((len(self.ids), 3))
        for i, entity_id in enumerate(self.ids):
            # only geoms that collide: a hand's forearm and the table's legs are seen, not touched
            selected = (self.geom_entity == entity_id) & self._colliding
            box_min[i] = lows[selected].min(axis=0)
            box_max[i] = highs[selected].max(axis=0)
        return box_min, box_max

    @property
    def _colliding(self) -> np.ndarray:
        return (self.model.geom_contype > 0) | (self.model.geom_conaffinity > 0)

    def _candidate_geom_pairs(self) -> np.ndarray:
        """Geom pairs (g1, g2) of two different entities that can touch: both collide and not both
        are static (hands are mocap, the table is fixed: they never touch each other)."""
        model = self.model
        static_body = (model.body_mocapid >= 0) | (model.body_weldid == 0)
        geoms = np.flatnonzero(self._colliding & (self.geom_entity > 0))
        pairs = [(g1, g2) for k, g1 in enumerate(geoms) for g2 in geoms[k + 1:]
                 if self.geom_entity[g1] != self.geom_entity[g2]
                 and not (static_body[model.geom_bodyid[g1]] and static_body[model.geom_bodyid[g2]])]
        return np.array(pairs, dtype=np.int64).reshape(-1, 2)

    def _contacts(self, centres: np.ndarray) -> tuple[dict[tuple[int, int], float], set[tuple[int, int]]]:
        """Signed distance of every touching entity pair (<= contact_distance_m) and which entity
        rests on which. MuJoCo's contacts give touching surfaces; mj_geomDistance adds surfaces
        that almost touch (MuJoCo reports no contact before they meet)."""
        model, data = self.model, self.data
        distance: dict[tuple[int, int], float] = {}
        support: set[tuple[int, int]] = set()

        def add(g1: int, g2: int, dist: float, normal: np.ndarray, position_z: float) -> None:
            a, b = int(self.geom_entity[g1]), int(self.geom_entity[g2])
            key = (a, b) if a < b else (b, a)
            distance[key] = min(distance.get(key, np.inf), dist)
            if abs(normal[2]) >= self._support_min_z:
                for upper, lower in ((a, b), (b, a)):
                    if centres[self._index[upper]][2] > position_z:
                        support.add((upper, lower))

        for k in range(data.ncon):
            contact = data.contact[k]
            if contact.dist <= self._contact_max and self.geom_entity[contact.geom1] and \
                    self.geom_entity[contact.geom2] and \
                    self.geom_entity[contact.geom1] != self.geom_entity[contact.geom2]:
                add(contact.geom1, contact.geom2, float(contact.dist), contact.frame[:3], float(contact.pos[2]))
        if len(self._geom_pairs):
            lows, highs = self._geom_boxes()
            g1, g2 = self._geom_pairs[:, 0], self._geom_pairs[:, 1]
            gap = np.maximum(0.0, np.maximum(lows[g1] - highs[g2], lows[g2] - highs[g1]))
            near = np.flatnonzero(np.linalg.norm(gap, axis=1) <= self._contact_max)
            fromto = np.zeros(6)
            for pair in near:
                a, b = int(g1[pair]), int(g2[pair])
                dist = mujoco.mj_geomDistance(model, data, a, b, self._contact_max, fromto)
                if dist >= self._contact_max or dist <= 0.0:
                    continue  # too far, or touching (then MuJoCo's contact above has it)
                direction = fromto[3:] - fromto[:3]
                length = float(np.linalg.norm(direction))
                normal = direction / length if length > 1e-9 else np.zeros(3)
                add(a, b, float(dist), normal, float((fromto[2] + fromto[5]) / 2))
        return distance, support

    def record(self) -> PhysicsState:
        data = self.data
        box_min, box_max = self._boxes()
        centres = (box_min + box_max) / 2
        contact_distance, support = self._contacts(centres)
        body_ids = [self.body[i] for i in self.ids]
        return PhysicsState(
            time=float(data.time), ids=self.ids, box_min=box_min, box_max=box_max, centre=centres,
            body_pos=data.xpos[body_ids].copy(), body_rot=data.xmat[body_ids].reshape(-1, 3, 3).copy(),
            contact_distance=contact_distance, support_contacts=support,
            attachments=frozenset(self.attachments),
            hand_poses={hand: pose.copy() for hand, pose in self.hand_poses.items()})

    def index_of(self, entity_id: int) -> int:
        return self._index[entity_id]

    def containers(self) -> list[int]:
        return [spec.id for spec in self.scene.entities if spec.kind == KIND_CONTAINER]
