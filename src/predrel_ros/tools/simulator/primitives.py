"""Scripted manipulation primitives: each is a phase of hand motion planned from the current state.

A `Phase` names its script primitive, the acting hand and a relative duration; `plan(sim)` is
called when the phase starts (so targets follow where objects really are) and returns the hand's
waypoints plus the grasp events: `attach` welds an entity at the end of the phase, `detach`
releases at its start. Hands move along the waypoints with a smooth (cosine) speed profile.

Script primitives map onto the downstream recognizer's labels (paper 4.6) by
`SCRIPT_TO_PRIMITIVE`: lift / transport / hold / slide / handover-hold -> transport, stack -> place,
retreat -> idle; the others keep their name.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from predrel_ros.tools.simulator.mjcf import DEFAULT_OPEN_HALF_GAP
from predrel_ros.tools.simulator.scene import (
    FINGER_RADIUS,
    FLOOR_THICKNESS,
    KIND_CONTAINER,
    KIND_HAND,
    KIND_SURFACE,
    PALM_HALF,
    WALL_THICKNESS,
    hand_rest_position,
)
from predrel_ros.tools.simulator.simulator import HandPose, Simulation

SCRIPT_PRIMITIVES = ("idle", "approach", "grasp", "lift", "hold", "transport", "slide", "place", "stack",
                     "insert", "remove", "release", "retreat")
SCRIPT_TO_PRIMITIVE = {"idle": "idle", "approach": "approach", "grasp": "grasp", "lift": "transport",
                       "hold": "transport", "transport": "transport", "slide": "transport", "place": "place",
                       "stack": "place", "insert": "insert", "remove": "remove", "release": "release",
                       "retreat": "idle"}
#: script primitives during which the acting hand counts as active (besides holding something)
ACTIVE_PRIMITIVES = frozenset(SCRIPT_PRIMITIVES) - {"idle", "retreat"}

#: geometry of the scripted motions (metres)
APPROACH_HEIGHT = 0.07        # pre-grasp: palm this far above its grasp height
GRIP_CLEARANCE = 0.001        # closed fingers stop this far from the object's side (a contact)
OPEN_CLEARANCE = 0.018        # open fingers this far from the object's side
PALM_CLEARANCE = 0.003        # palm above the object's top at grasp
TIP_CLEARANCE = 0.004         # finger tips at least this far above the object's bottom
PLACE_GAP = 0.0008            # a placed object's bottom this far above its support when released
TRAVEL_CLEARANCE = 0.05       # a carried object's bottom this far above everything on the table
RETREAT_RISE = 0.08           # a retreating hand rises this much before going back to rest


@dataclass
class GraspPoint:
    """Where and how a hand grasps an entity, in the entity's body frame.

    local_xy: point of the body (x, y) under the palm centre; yaw_offset: hand yaw relative to the
    body's yaw (the fingers close along the hand's y); half_width: half the thickness between the
    fingers; top, bottom: z of the grasped part in the body frame.
    """

    entity: int
    local_xy: tuple[float, float]
    yaw_offset: float
    half_width: float
    top: float
    bottom: float


@dataclass
class Plan:
    """What a phase does with its hand: waypoints (ending at the target), grasp events."""

    waypoints: list[HandPose] = field(default_factory=list)
    attach: int | None = None
    detach: bool = False


@dataclass
class Phase:
    primitive: str
    hand: int | None
    weight: float
    plan: Callable[[Simulation], Plan] = lambda sim: Plan()

    def __post_init__(self) -> None:
        if self.primitive not in SCRIPT_PRIMITIVES:
            raise ValueError(f"unknown script primitive {self.primitive!r}")
        if self.weight <= 0:
            raise ValueError(f"phase {self.primitive}: weight must be positive")

    @property
    def label(self) -> str:
        return SCRIPT_TO_PRIMITIVE[self.primitive]


def _wrap_half_turn(yaw: float) -> float:
    """Equivalent yaw (mod pi) in (-pi/2, pi/2]: the fingers close along the same line."""
    yaw = math.remainder(yaw, math.pi)
    return yaw if yaw > -math.pi / 2 else yaw + math.pi


def _body_yaw(rotation: np.ndarray) -> float:
    return math.atan2(rotation[1, 0], rotation[0, 0])


def object_grasp(sim: Simulation, entity: int, offset_x: float = 0.0) -> GraspPoint:
    """Top-down grasp of an object across its body y axis, offset_x along its length."""
    half = sim.scene.entity(entity).half_extents()
    return GraspPoint(entity, (offset_x, 0.0), 0.0, float(half[1]), float(half[2]), float(-half[2]))


def wall_grasp(sim: Simulation, container: int) -> GraspPoint:
    """Grasp of a box container's -x wall (a hand holding it steady)."""
    spec = sim.scene.entity(container)
    inner_x, _, height = spec.interior()
    return GraspPoint(container, (-(inner_x + WALL_THICKNESS / 2), 0.0), math.pi / 2, WALL_THICKNESS / 2,
                      height, 0.0)


def _grasp_pose(sim: Simulation, hand: int, grasp: GraspPoint, finger_gap: float) -> HandPose:
    position, rotation = sim.body_pose(grasp.entity)
    point = position + rotation @ np.array([grasp.local_xy[0], grasp.local_xy[1], 0.0])
    length = sim.scene.entity(hand).size[0]
    top = position[2] + grasp.top
    bottom = position[2] + grasp.bottom
    palm_z = max(top + PALM_CLEARANCE + PALM_HALF[2], bottom + TIP_CLEARANCE + length + PALM_HALF[2])
    yaw = _wrap_half_turn(_body_yaw(rotation) + grasp.yaw_offset)
    return HandPose(np.array([point[0], point[1], palm_z]), yaw, finger_gap)


def _open_gap(grasp: GraspPoint) -> float:
    return grasp.half_width + FINGER_RADIUS + OPEN_CLEARANCE


def _closed_gap(grasp: GraspPoint) -> float:
    return grasp.half_width + FINGER_RADIUS + GRIP_CLEARANCE


def _moved(pose: HandPose, position=None, yaw=None, finger_gap=None) -> HandPose:
    return HandPose(np.array(position if position is not None else pose.position, float),
                    pose.yaw if yaw is None else yaw, pose.finger_gap if finger_gap is None else finger_gap)


def _table_top_of_others(sim: Simulation, exclude: set[int]) -> float:
    """Highest point of everything on the table except `exclude` (and hands, and the table)."""
    state = sim.record()
    top = 0.0
    for i, entity in enumerate(state.ids):
        spec = sim.scene.entity(entity)
        if entity in exclude or spec.kind in (KIND_HAND, KIND_SURFACE):
            continue
        top = max(top, float(state.box_max[i][2]))
    return top


def _held_bottom_offset(sim: Simulation, hand: int) -> float:
    """z of the held object's bottom relative to the palm centre."""
    held = sim.held_by(hand)
    if held is None:
        raise RuntimeError(f"hand {hand} holds nothing")
    low, _ = sim.entity_box(held)
    return float(low[2] - sim.hand_poses[hand].position[2])


def _held_offset_xy(sim: Simulation, hand: int) -> np.ndarray:
    held = sim.held_by(hand)
    low, high = sim.entity_box(held)
    return (low[:2] + high[:2]) / 2 - sim.hand_poses[hand].position[:2]


# ---------------------------------------------------------------------- primitives

def idle(weight: float = 0.4) -> Phase:
    return Phase("idle", None, weight)


def approach(hand: int, grasp: Callable[[Simulation], GraspPoint], weight: float = 0.8) -> Phase:
    def plan(sim: Simulation) -> Plan:
        point = grasp(sim)
        target = _grasp_pose(sim, hand, point, _open_gap(point))
        target.position[2] += APPROACH_HEIGHT
        return Plan([target])
    return Phase("approach", hand, weight, plan)


def grasp(hand: int, grasp_point: Callable[[Simulation], GraspPoint], weight: float = 0.5) -> Phase:
    def plan(sim: Simulation) -> Plan:
        point = grasp_point(sim)
        return Plan([_grasp_pose(sim, hand, point, _closed_gap(point))], attach=point.entity)
    return Phase("grasp", hand, weight, plan)


def reach(hand: int, grasp_point: Callable[[Simulation], GraspPoint], weight: float = 0.4) -> Phase:
    """Descend to the grasp height with the fingers open around the object, without closing."""
    def plan(sim: Simulation) -> Plan:
        point = grasp_point(sim)
        return Plan([_grasp_pose(sim, hand, point, _open_gap(point))])
    return Phase("approach", hand, weight, plan)


def hover(hand: int, weight: float = 0.3) -> Phase:
    """The hand stays where it is, holding nothing (an idle hand near the scene)."""
    return Phase("idle", hand, weight)


def lift(hand: int, weight: float = 0.5, primitive: str = "lift", extra_height: float = 0.0) -> Phase:
    """Raise the held object until it clears everything on the table (label `remove` when it
    comes out of a container)."""
    def plan(sim: Simulation) -> Plan:
        held = sim.held_by(hand)
        top = _table_top_of_others(sim, {held})
        pose = sim.hand_poses[hand]
        z = top + TRAVEL_CLEARANCE + extra_height - _held_bottom_offset(sim, hand)
        return Plan([_moved(pose, position=(pose.position[0], pose.position[1], max(z, pose.position[2])))])
    return Phase(primitive, hand, weight, plan)


def hold(hand: int, weight: float = 0.3) -> Phase:
    return Phase("hold", hand, weight)


def transport(hand: int, destination: Callable[[Simulation], tuple[float, float]], weight: float = 0.9,
              primitive: str = "transport") -> Phase:
    """Carry the held object horizontally until its centre is above `destination` (x, y);
    `slide` keeps it on the table."""
    def plan(sim: Simulation) -> Plan:
        pose = sim.hand_poses[hand]
        xy = np.asarray(destination(sim)) - _held_offset_xy(sim, hand)
        return Plan([_moved(pose, position=(xy[0], xy[1], pose.position[2]))])
    return Phase(primitive, hand, weight, plan)


def lower_onto(hand: int, support_top: Callable[[Simulation], float], primitive: str = "place",
               weight: float = 0.6) -> Phase:
    """Lower the held object until its bottom is just above `support_top` (a surface, an object's
    top for stack, a container's floor for insert)."""
    def plan(sim: Simulation) -> Plan:
        pose = sim.hand_poses[hand]
        z = support_top(sim) + PLACE_GAP - _held_bottom_offset(sim, hand)
        return Plan([_moved(pose, position=(pose.position[0], pose.position[1], z))])
    return Phase(primitive, hand, weight, plan)


def release(hand: int, weight: float = 0.3) -> Phase:
    def plan(sim: Simulation) -> Plan:
        pose = sim.hand_poses[hand]
        held = sim.held_by(hand)
        half_width = pose.finger_gap - FINGER_RADIUS - GRIP_CLEARANCE
        gap = half_width + FINGER_RADIUS + OPEN_CLEARANCE if held is not None else DEFAULT_OPEN_HALF_GAP
        return Plan([_moved(pose, finger_gap=gap)], detach=True)
    return Phase("release", hand, weight, plan)


def retreat(hand: int, weight: float = 0.7) -> Phase:
    """Rise, then go back to the rest pose with the fingers relaxed."""
    def plan(sim: Simulation) -> Plan:
        pose = sim.hand_poses[hand]
        side = sim.scene.entity(hand).side
        up = _moved(pose, position=pose.position + np.array([0.0, 0.0, RETREAT_RISE]))
        rest = HandPose(np.array(hand_rest_position(side), float), 0.0, DEFAULT_OPEN_HALF_GAP)
        return Plan([up, rest])
    return Phase("retreat", hand, weight, plan)


# ---------------------------------------------------------------------- support heights

def table_top(sim: Simulation) -> float:
    return 0.0


def top_of(entity: int) -> Callable[[Simulation], float]:
    def top(sim: Simulation) -> float:
        return float(sim.entity_box(entity)[1][2])
    return top


def floor_of(container: int) -> Callable[[Simulation], float]:
    def floor(sim: Simulation) -> float:
        position, _ = sim.body_pose(container)
        return float(position[2] + FLOOR_THICKNESS)
    return floor


def centre_of(entity: int) -> Callable[[Simulation], tuple[float, float]]:
    def centre(sim: Simulation) -> tuple[float, float]:
        position, _ = sim.body_pose(entity)
        spec = sim.scene.entity(entity)
        if spec.kind == KIND_CONTAINER:
            return float(position[0]), float(position[1])
        low, high = sim.entity_box(entity)
        return float((low[0] + high[0]) / 2), float((low[1] + high[1]) / 2)
    return centre


def fixed_point(x: float, y: float) -> Callable[[Simulation], tuple[float, float]]:
    return lambda sim: (x, y)
