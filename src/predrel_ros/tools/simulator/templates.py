"""Task templates: a scene and a script of primitives, randomised by a seed.

Each template samples its entities (sizes, colours, placements, distractors, which hand acts, an
optional idle second hand) and returns the phases of its script. The five scenario groups of the
paper (Table 5) are all covered:

| template | group | script |
| --- | --- | --- |
| pick_and_hold | hand_object | approach, grasp, lift, hold, place back, release, retreat |
| reach_and_withdraw | hand_object | approach, reach around the object with open fingers, hover, retreat |
| pick_and_place | object_surface | approach, grasp, lift, transport, place, release, retreat |
| slide | object_surface | approach, grasp, slide along the table, hold, release, retreat |
| insert | object_container | approach, grasp, lift, transport, insert, release, retreat |
| remove | object_container | (object starts inside) approach, grasp, remove, transport, place, release, retreat |
| stack | object_object | approach, grasp, lift, transport, stack on target, release, retreat |
| unstack | object_object | (object starts on target) approach, grasp, lift, transport, place, release, retreat |
| handover | bimanual | right picks the bar, left takes it over, right retreats, left places it |
| hold_and_insert | bimanual | left holds the box container, right inserts an object, both let go |
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import numpy as np

from predrel_ros.core import entities as roles
from predrel_ros.core.errors import UserError
from predrel_ros.tools.simulator import primitives as p
from predrel_ros.tools.simulator.config import SceneConfig
from predrel_ros.tools.simulator.scene import BAR, BOX, CUBE, CYLINDER, SceneBuilder, SceneSpec

HAND_OBJECT, OBJECT_CONTAINER, OBJECT_SURFACE, BIMANUAL, OBJECT_OBJECT = (
    "hand_object", "object_container", "object_surface", "bimanual", "object_object")


@dataclass(frozen=True)
class Script:
    """A sampled episode plan: the scene and its phases."""

    template: str
    scenario_group: str
    scene: SceneSpec
    phases: tuple[p.Phase, ...]


def _jitter(rng: np.random.Generator, weight: float) -> float:
    return weight * float(rng.uniform(0.8, 1.25))


def _hands(builder: SceneBuilder, rng: np.random.Generator, config: SceneConfig, both: bool = False):
    """The acting hand (right or left) and, sometimes, an idle other hand."""
    acting_side = "right" if both or rng.random() < 0.5 else "left"
    other_side = "left" if acting_side == "right" else "right"
    acting = builder.add_hand(acting_side)
    other = builder.add_hand(other_side) if both or rng.random() < config.second_hand_probability else None
    return acting, other


def _side_region(side: str, config: SceneConfig) -> tuple[float, float]:
    """The half of the workspace on a hand's side (objects start near the hand that takes them)."""
    low, high = config.workspace_x
    middle = (low + high) / 2
    return (middle - 0.05, high) if side == "right" else (low, middle + 0.05)


def _pick_phases(rng, hand: int, obj: int) -> list[p.Phase]:
    grasp_point = lambda sim: p.object_grasp(sim, obj)  # noqa: E731
    return [p.idle(_jitter(rng, 0.35)), p.approach(hand, grasp_point, _jitter(rng, 0.8)),
            p.grasp(hand, grasp_point, _jitter(rng, 0.5))]


def _carry_phases(rng, hand: int, destination, support, primitive: str = "place",
                  lift_primitive: str = "lift") -> list[p.Phase]:
    """Lift the held object clear of everything, pause, carry it above `destination` (x, y) and
    lower it onto `support` (a height), then pause before the release."""
    return [p.lift(hand, _jitter(rng, 0.5), primitive=lift_primitive), p.hold(hand, _jitter(rng, 0.2)),
            p.transport(hand, destination, _jitter(rng, 0.9)),
            p.lower_onto(hand, support, primitive, _jitter(rng, 0.55)), p.hold(hand, _jitter(rng, 0.2))]


def _pick_and_carry(rng, hand: int, obj: int, destination, support, primitive: str,
                    lift_primitive: str = "lift") -> list[p.Phase]:
    """The whole script of a one-hand move: pick `obj`, carry it onto `support` above
    `destination`, let go and go back to rest."""
    return (_pick_phases(rng, hand, obj) + _carry_phases(rng, hand, destination, support, primitive, lift_primitive)
            + _finish_phases(rng, hand))


def _finish_phases(rng, hand: int) -> list[p.Phase]:
    return [p.release(hand, _jitter(rng, 0.3)), p.retreat(hand, _jitter(rng, 0.7)), p.idle(_jitter(rng, 0.3))]


def pick_and_hold(builder: SceneBuilder, rng: np.random.Generator, config: SceneConfig):
    hand, _ = _hands(builder, rng, config)
    builder.add_table()
    obj = builder.place_on_table(builder.object_spec(roles.MANIPULATED_OBJECT), _side_region(hand.side, config))
    phases = _pick_phases(rng, hand.id, obj.id) + [
        p.lift(hand.id, _jitter(rng, 0.5), extra_height=float(rng.uniform(0.0, 0.06))),
        p.hold(hand.id, _jitter(rng, 0.4)),
        p.lower_onto(hand.id, p.table_top, "place", _jitter(rng, 0.5)),
        p.hold(hand.id, _jitter(rng, 0.2)),
    ] + _finish_phases(rng, hand.id)
    return HAND_OBJECT, phases


def reach_and_withdraw(builder: SceneBuilder, rng: np.random.Generator, config: SceneConfig):
    """The hand reaches to the object and leaves without taking it: proximity without grasp."""
    hand, _ = _hands(builder, rng, config)
    builder.add_table()
    obj = builder.place_on_table(builder.object_spec(roles.MANIPULATED_OBJECT), _side_region(hand.side, config))
    grasp_point = lambda sim: p.object_grasp(sim, obj.id)  # noqa: E731
    phases = [p.idle(_jitter(rng, 0.4)), p.approach(hand.id, grasp_point, _jitter(rng, 0.8)),
              p.reach(hand.id, grasp_point, _jitter(rng, 0.4)), p.hover(hand.id, _jitter(rng, 0.3)),
              p.retreat(hand.id, _jitter(rng, 0.8)), p.idle(_jitter(rng, 0.4))]
    return HAND_OBJECT, phases


def pick_and_place(builder: SceneBuilder, rng: np.random.Generator, config: SceneConfig):
    hand, _ = _hands(builder, rng, config)
    builder.add_table()
    obj = builder.place_on_table(builder.object_spec(roles.MANIPULATED_OBJECT), _side_region(hand.side, config))
    destination = builder.free_spot(obj.footprint_radius, obj.position[:2], 0.14, 0.32, ignore=(obj.id,))
    return OBJECT_SURFACE, _pick_and_carry(rng, hand.id, obj.id, p.fixed_point(*destination), p.table_top, "place")


def slide(builder: SceneBuilder, rng: np.random.Generator, config: SceneConfig):
    hand, _ = _hands(builder, rng, config)
    builder.add_table()
    obj = builder.place_on_table(builder.object_spec(roles.MANIPULATED_OBJECT, (CUBE, CYLINDER)),
                                 _side_region(hand.side, config))
    destination = builder.free_spot(obj.footprint_radius, obj.position[:2], 0.12, 0.25, ignore=(obj.id,),
                                    clear_path=True)
    phases = _pick_phases(rng, hand.id, obj.id) + [
        p.hold(hand.id, _jitter(rng, 0.2)),
        p.transport(hand.id, p.fixed_point(*destination), _jitter(rng, 1.1), primitive="slide"),
        p.hold(hand.id, _jitter(rng, 0.3)),
    ] + _finish_phases(rng, hand.id)
    return OBJECT_SURFACE, phases


def insert(builder: SceneBuilder, rng: np.random.Generator, config: SceneConfig):
    hand, _ = _hands(builder, rng, config)
    builder.add_table()
    container = builder.place_on_table(builder.container_spec())
    obj = builder.place_on_table(builder.object_spec(roles.MANIPULATED_OBJECT, (CUBE, CYLINDER)),
                                 _side_region(hand.side, config), away_from=container.position[:2], min_distance=0.2)
    return OBJECT_CONTAINER, _pick_and_carry(rng, hand.id, obj.id, p.centre_of(container.id),
                                             p.floor_of(container.id), "insert")


def remove(builder: SceneBuilder, rng: np.random.Generator, config: SceneConfig):
    hand, _ = _hands(builder, rng, config)
    builder.add_table()
    container = builder.place_on_table(builder.container_spec(), _side_region(hand.side, config))
    obj = builder.place_inside(builder.object_spec(roles.MANIPULATED_OBJECT, (CUBE, CYLINDER)), container)
    destination = builder.free_spot(obj.footprint_radius, container.position[:2], 0.18, 0.34)
    return OBJECT_CONTAINER, _pick_and_carry(rng, hand.id, obj.id, p.fixed_point(*destination), p.table_top,
                                             "place", lift_primitive="remove")


def stack(builder: SceneBuilder, rng: np.random.Generator, config: SceneConfig):
    hand, _ = _hands(builder, rng, config)
    builder.add_table()
    base = builder.place_on_table(builder.object_spec(roles.TARGET, (CUBE,)), yaw_range=0.4)
    obj = builder.place_on_table(builder.object_spec(roles.MANIPULATED_OBJECT, (CUBE, CYLINDER)),
                                 _side_region(hand.side, config), away_from=base.position[:2], min_distance=0.15)
    return OBJECT_OBJECT, _pick_and_carry(rng, hand.id, obj.id, p.centre_of(base.id), p.top_of(base.id), "stack")


def unstack(builder: SceneBuilder, rng: np.random.Generator, config: SceneConfig):
    hand, _ = _hands(builder, rng, config)
    builder.add_table()
    base = builder.place_on_table(builder.object_spec(roles.TARGET, (CUBE,)), _side_region(hand.side, config),
                                  yaw_range=0.4)
    obj = builder.place_on(builder.object_spec(roles.MANIPULATED_OBJECT, (CUBE,)), base)
    destination = builder.free_spot(obj.footprint_radius, base.position[:2], 0.15, 0.3)
    return OBJECT_OBJECT, _pick_and_carry(rng, hand.id, obj.id, p.fixed_point(*destination), p.table_top, "place")


def handover(builder: SceneBuilder, rng: np.random.Generator, config: SceneConfig):
    right, left = _hands(builder, rng, config, both=True)
    builder.add_table()
    bar = builder.place_on_table(builder.object_spec(roles.TOOL, (BAR,)), (0.0, config.workspace_x[1]),
                                 yaw_range=0.35)
    destination = builder.free_spot(bar.footprint_radius, (-0.18, 0.05), 0.0, 0.2, ignore=(bar.id,))
    grip = 0.55 * bar.size[0]
    right_point = lambda sim: p.object_grasp(sim, bar.id, +grip)  # noqa: E731
    left_point = lambda sim: p.object_grasp(sim, bar.id, -grip)  # noqa: E731
    meeting = (float(rng.uniform(-0.04, 0.04)), float(rng.uniform(0.0, 0.08)))
    phases = [
        p.idle(_jitter(rng, 0.3)), p.approach(right.id, right_point, _jitter(rng, 0.7)),
        p.grasp(right.id, right_point, _jitter(rng, 0.4)), p.lift(right.id, _jitter(rng, 0.4)),
        p.transport(right.id, p.fixed_point(*meeting), _jitter(rng, 0.7)), p.hold(right.id, _jitter(rng, 0.2)),
        p.approach(left.id, left_point, _jitter(rng, 0.7)), p.grasp(left.id, left_point, _jitter(rng, 0.4)),
        p.release(right.id, _jitter(rng, 0.25)), p.retreat(right.id, _jitter(rng, 0.5)),
        p.transport(left.id, p.fixed_point(*destination), _jitter(rng, 0.7)),
        p.lower_onto(left.id, p.table_top, "place", _jitter(rng, 0.45)),
        p.release(left.id, _jitter(rng, 0.25)), p.retreat(left.id, _jitter(rng, 0.5)),
    ]
    return BIMANUAL, phases


def hold_and_insert(builder: SceneBuilder, rng: np.random.Generator, config: SceneConfig):
    right, left = _hands(builder, rng, config, both=True)
    builder.add_table()
    container = builder.place_on_table(builder.container_spec((BOX,)), (config.workspace_x[0], 0.1),
                                       yaw_range=0.3)
    obj_spec = builder.object_spec(roles.MANIPULATED_OBJECT, (CUBE, CYLINDER))
    if obj_spec.half_extents()[0] > 0.025:  # leave room for the holding hand's fingers
        obj_spec = replace(obj_spec, size=(0.025,) + obj_spec.size[1:])
    obj = builder.place_on_table(obj_spec, (0.0, config.workspace_x[1]), away_from=container.position[:2],
                                 min_distance=0.22)
    wall = lambda sim: p.wall_grasp(sim, container.id)  # noqa: E731
    grasp_point = lambda sim: p.object_grasp(sim, obj.id)  # noqa: E731

    def insertion_point(sim):
        position, rotation = sim.body_pose(container.id)
        point = position + rotation @ np.array([0.025, 0.0, 0.0])
        return float(point[0]), float(point[1])

    phases = [
        p.idle(_jitter(rng, 0.25)), p.approach(left.id, wall, _jitter(rng, 0.6)),
        p.grasp(left.id, wall, _jitter(rng, 0.4)), p.approach(right.id, grasp_point, _jitter(rng, 0.6)),
        p.grasp(right.id, grasp_point, _jitter(rng, 0.4)), p.lift(right.id, _jitter(rng, 0.4)),
        p.transport(right.id, insertion_point, _jitter(rng, 0.7)),
        p.lower_onto(right.id, p.floor_of(container.id), "insert", _jitter(rng, 0.5)),
        p.release(right.id, _jitter(rng, 0.25)), p.retreat(right.id, _jitter(rng, 0.5)),
        p.release(left.id, _jitter(rng, 0.25)), p.retreat(left.id, _jitter(rng, 0.5)),
    ]
    return BIMANUAL, phases


TemplateFunction = Callable[[SceneBuilder, np.random.Generator, SceneConfig], tuple]

#: template name -> (scenario group, function)
TEMPLATES: dict[str, tuple[str, TemplateFunction]] = {
    "pick_and_hold": (HAND_OBJECT, pick_and_hold),
    "reach_and_withdraw": (HAND_OBJECT, reach_and_withdraw),
    "pick_and_place": (OBJECT_SURFACE, pick_and_place),
    "slide": (OBJECT_SURFACE, slide),
    "insert": (OBJECT_CONTAINER, insert),
    "remove": (OBJECT_CONTAINER, remove),
    "stack": (OBJECT_OBJECT, stack),
    "unstack": (OBJECT_OBJECT, unstack),
    "handover": (BIMANUAL, handover),
    "hold_and_insert": (BIMANUAL, hold_and_insert),
}


def build_script(template: str, seed: int, config: SceneConfig = SceneConfig()) -> Script:
    """Sample the scene and phases of `template` from `seed` (same seed, same script)."""
    if template not in TEMPLATES:
        raise UserError(f"unknown template {template!r}; expected one of {tuple(TEMPLATES)}")
    group, function = TEMPLATES[template]
    rng = np.random.default_rng(seed)
    builder = SceneBuilder(rng, config)
    declared_group, phases = function(builder, rng, config)
    assert declared_group == group, f"template {template} declares group {declared_group}, registry says {group}"
    return Script(template=template, scenario_group=group, scene=builder.finish(), phases=tuple(phases))


def allocate_frames(phases, total: int) -> list[int]:
    """Frames per phase, proportional to the weights (largest remainder), at least 2 each."""
    minimum = 2
    if total < minimum * len(phases):
        raise UserError(f"{total} frames cannot hold {len(phases)} phases of at least {minimum} frames; "
                        f"use --frames {minimum * len(phases)} or more")
    weights = np.array([phase.weight for phase in phases], dtype=np.float64)
    spare = total - minimum * len(phases)
    exact = weights / weights.sum() * spare
    counts = np.floor(exact).astype(int)
    remainder = spare - counts.sum()
    order = np.argsort(-(exact - counts), kind="stable")
    counts[order[:remainder]] += 1
    return (counts + minimum).tolist()

