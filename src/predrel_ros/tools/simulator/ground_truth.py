"""Ground-truth predicates from the simulator (never from images or the 2D extraction rules).

Inputs per frame: a `PhysicsState` (MuJoCo contacts, world-aligned 3D boxes, body poses, the
script's welds) and the frame's `FrameScript` (acting hand and script primitive). Thresholds:
`GroundTruthConfig`. Every estimate has confidence 1 and all evidence factors 1.

Entity classes: hands H, objects O (manipulated_object, tool, target), distractors D, containers
C, the surface S. Meaningful pairs (paper 4.2), unordered: {h, x} for x in O or C; {o, c};
{x, s} for x in O, C or D; {o, o'}. Distractors relate to the surface only; hands never to each
other or to the table (mocap hands never touch it).

Rules (first matching value wins where several are listed):

- contact, each pair once (hand first, else lower id first): T when two of their colliding geoms
  are at most contact_distance_m apart (a MuJoCo contact, or mj_geomDistance for surfaces that
  almost touch), else N.
- static, each pair in both orders (a, b):
  In: a is not a hand, b is a container and a's 3D box centre lies in b's interior (inside the
  inner walls, or within the bowl's radius at that height; between floor and rim).
  Sup: neither is a hand and a rests on b (a contact between them with its normal within the
  support cone, below a's centre).
  Ab: a's box bottom >= b's box top - vertical_tolerance_m and their footprints overlap.
  Be: a's box top <= b's box bottom + vertical_tolerance_m and their footprints overlap.
  Ar: the gap between their 3D boxes is at most around_distance_m.  Else none.
- dynamic, each pair once, over the window W (w frames, trailing t-w+1..t by default, like the live
  extractor) of box-centre tracks
  with velocities by central differences: HT when the pair moves together at W's first frame and
  both are still and near at its last; MT when it moves together (both faster than
  moving_speed_mps, velocities differing by less than together_speed_mps, box gap under
  near_distance_m or touching) on at least half of W; FMT when exactly one of them moves while
  they touch on at least half of W; GC / MA when their centre distance shrinks / grows faster
  than distance_rate_mps over W; else S.
- grasp (h, x): T while the script's weld holds x to h.
- release (h, x): T on the frame the hand lets go: the first frame, at or after the weld is
  switched off, on which h and x no longer touch (the paper's "transition from contact to
  non-contact"; the weld going off alone is an internal script state that no camera sees, and
  the fingers still touch the object while they open). No event when h grasps x again first.
- active_hand (h, -1): T while h holds something or performs a primitive other than idle/retreat.
- containment_event (o, c): T on the frame static(o, c) becomes In.
- support_event (x, y), x not a hand or surface, y the surface or an object: T on the frame
  static(x, y) becomes Sup.

Note Be follows from geometry alone: the table is "below" an object resting on it (Sup in the
other order) and a stacked object's base is "below" it.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

from predrel_ros.core import entities as roles
from predrel_ros.predicates import vocabulary as v
from predrel_ros.predicates.estimate import NO_OBJECT, PredicateEstimate
from predrel_ros.tools.simulator.config import GroundTruthConfig
from predrel_ros.tools.simulator.primitives import ACTIVE_PRIMITIVES
from predrel_ros.tools.simulator.scene import (
    BOWL,
    FLOOR_THICKNESS,
    KIND_CONTAINER,
    KIND_HAND,
    KIND_OBJECT,
    KIND_SURFACE,
    SceneSpec,
)
from predrel_ros.tools.simulator.simulator import PhysicsState


@dataclass(frozen=True)
class FrameScript:
    """What the script did in one frame: the acting hand (None when nobody acts) and its primitive."""

    hand: int | None
    primitive: str


@dataclass(frozen=True)
class PairSets:
    """The entity pairs each predicate is computed for (see the module docstring)."""

    unordered: tuple[tuple[int, int], ...]      # contact and dynamic, in emission order
    ordered: tuple[tuple[int, int], ...]        # static
    hand_object: tuple[tuple[int, int], ...]    # grasp and release
    containment: tuple[tuple[int, int], ...]    # containment_event
    support: tuple[tuple[int, int], ...]        # support_event
    hands: tuple[int, ...]                      # active_hand


def _class_of(spec) -> str:
    if spec.kind == KIND_OBJECT:
        return "D" if spec.role == roles.DISTRACTOR else "O"
    return {KIND_HAND: "H", KIND_CONTAINER: "C", KIND_SURFACE: "S"}[spec.kind]


def meaningful_pairs(scene: SceneSpec) -> PairSets:
    specs = {spec.id: spec for spec in scene.entities}
    classes = {entity: _class_of(spec) for entity, spec in specs.items()}
    allowed = {frozenset("HO"), frozenset("HC"), frozenset("OC"), frozenset("OS"), frozenset("CS"),
               frozenset("DS"), frozenset("O")}
    unordered = []
    for a, b in combinations(sorted(specs), 2):
        if frozenset((classes[a], classes[b])) not in allowed:
            continue
        if classes[b] == "H" and classes[a] != "H":
            a, b = b, a  # hand first
        unordered.append((a, b))
    ordered = [pair for a, b in unordered for pair in ((a, b), (b, a))]
    hand_object = [(a, b) for a, b in unordered if classes[a] == "H"]
    containment = [(a, b) for a, b in ordered if classes[a] == "O" and classes[b] == "C"]
    support = [(a, b) for a, b in ordered if classes[a] in "OCD" and classes[b] in "SO"]
    hands = [entity for entity in sorted(specs) if classes[entity] == "H"]
    return PairSets(tuple(unordered), tuple(ordered), tuple(hand_object), tuple(containment), tuple(support),
                    tuple(hands))


def _footprints_overlap(state: PhysicsState, i: int, j: int) -> bool:
    return bool(np.all(state.box_min[i, :2] <= state.box_max[j, :2]) and
                np.all(state.box_min[j, :2] <= state.box_max[i, :2]))


def box_gap(state: PhysicsState, i: int, j: int) -> float:
    """Distance between two world-aligned 3D boxes (0 when they overlap)."""
    separation = np.maximum(0.0, np.maximum(state.box_min[i] - state.box_max[j], state.box_min[j] - state.box_max[i]))
    return float(np.linalg.norm(separation))


class GroundTruth:
    """Computes every ground-truth predicate of an episode from its physics states."""

    def __init__(self, scene: SceneSpec, config: GroundTruthConfig, fps: float) -> None:
        self.scene = scene
        self.config = config
        self.fps = float(fps)
        self.pairs = meaningful_pairs(scene)
        self._specs = {spec.id: spec for spec in scene.entities}

    # ------------------------------------------------------------------ static

    def inside(self, state: PhysicsState, a: int, container: int) -> bool:
        ia, ic = state.ids.index(a), state.ids.index(container)
        local = state.body_rot[ic].T @ (state.centre[ia] - state.body_pos[ic])
        spec = self._specs[container]
        first, second, rim = spec.interior()
        if not FLOOR_THICKNESS - self.config.vertical_tolerance_m <= local[2] <= rim:
            return False
        if spec.label == BOWL:
            fraction = np.clip((local[2] - FLOOR_THICKNESS) / (rim - FLOOR_THICKNESS), 0.0, 1.0)
            return bool(np.hypot(local[0], local[1]) <= first + fraction * (second - first))
        return bool(abs(local[0]) <= first and abs(local[1]) <= second)

    def static(self, state: PhysicsState, a: int, b: int) -> str:
        spec_a, spec_b = self._specs[a], self._specs[b]
        i, j = state.ids.index(a), state.ids.index(b)
        tolerance = self.config.vertical_tolerance_m
        if spec_a.kind != KIND_HAND and spec_b.kind == KIND_CONTAINER and self.inside(state, a, b):
            return "In"
        if KIND_HAND not in (spec_a.kind, spec_b.kind) and (a, b) in state.support_contacts:
            return "Sup"
        if _footprints_overlap(state, i, j):
            if state.box_min[i, 2] >= state.box_max[j, 2] - tolerance:
                return "Ab"
            if state.box_max[i, 2] <= state.box_min[j, 2] + tolerance:
                return "Be"
        if box_gap(state, i, j) <= self.config.around_distance_m:
            return "Ar"
        return "none"

    # ------------------------------------------------------------------ dynamic

    def _window(self, t: int, count: int) -> tuple[int, int]:
        w = self.config.window
        if self.config.window_alignment == "centered":
            first = t - w // 2
            last = first + w - 1
        else:
            first, last = t - w + 1, t
        return max(first, 0), min(last, count - 1)

    def dynamic_values(self, states: list[PhysicsState]) -> dict[tuple[int, int], list[str]]:
        """Dynamic relation of every unordered pair at every frame."""
        count = len(states)
        centres = np.stack([state.centre for state in states])  # T x E x 3
        velocities = np.gradient(centres, axis=0) * self.fps if count > 1 else np.zeros_like(centres)
        speeds = np.linalg.norm(velocities, axis=2)
        moving = speeds > self.config.moving_speed_mps
        ids = states[0].ids
        result: dict[tuple[int, int], list[str]] = {}
        for a, b in self.pairs.unordered:
            i, j = ids.index(a), ids.index(b)
            key = (a, b) if a < b else (b, a)
            touching = np.array([key in state.contact_distance for state in states])
            near = touching | np.array([box_gap(state, i, j) < self.config.near_distance_m for state in states])
            relative = np.linalg.norm(velocities[:, i] - velocities[:, j], axis=1)
            together = moving[:, i] & moving[:, j] & (relative < self.config.together_speed_mps) & near
            one_moves_on_other = (moving[:, i] ^ moving[:, j]) & touching
            distance = np.linalg.norm(centres[:, i] - centres[:, j], axis=1)
            values = []
            for t in range(count):
                first, last = self._window(t, count)
                span = slice(first, last + 1)
                half = (last - first + 1) / 2
                if together[first] and not moving[last, i] and not moving[last, j] and near[last] and last > first:
                    values.append("HT")
                elif together[span].sum() >= half:
                    values.append("MT")
                elif one_moves_on_other[span].sum() >= half:
                    values.append("FMT")
                else:
                    seconds = (last - first) / self.fps
                    rate = (distance[last] - distance[first]) / seconds if seconds > 0 else 0.0
                    if rate < -self.config.distance_rate_mps:
                        values.append("GC")
                    elif rate > self.config.distance_rate_mps:
                        values.append("MA")
                    else:
                        values.append("S")
            result[(a, b)] = values
        return result

    # ------------------------------------------------------------------ everything

    def compute(self, states: list[PhysicsState], scripts: list[FrameScript]) -> list[list[PredicateEstimate]]:
        """Predicates of every frame, in a fixed order (contact, static, dynamic, derived)."""
        if len(states) != len(scripts):
            raise ValueError(f"{len(states)} physics states but {len(scripts)} frame scripts")
        dynamic = self.dynamic_values(states)
        statics = [{pair: self.static(state, *pair) for pair in self.pairs.ordered} for state in states]
        frames = []
        letting_go: set[tuple[int, int]] = set()  # weld off, fingers still on the object
        for t, (state, script) in enumerate(zip(states, scripts)):
            previous = states[t - 1] if t else None
            estimates = []
            touching = set()
            for a, b in self.pairs.unordered:
                key = (a, b) if a < b else (b, a)
                if key in state.contact_distance:
                    touching.add((a, b))
                estimates.append(PredicateEstimate(v.CONTACT, a, b, "T" if (a, b) in touching else "N", frame_index=t))
            for a, b in self.pairs.ordered:
                estimates.append(PredicateEstimate(v.STATIC, a, b, statics[t][(a, b)], frame_index=t))
            for pair in self.pairs.unordered:
                estimates.append(PredicateEstimate(v.DYNAMIC, *pair, dynamic[pair][t], frame_index=t))
            for hand, entity in self.pairs.hand_object:
                held = (hand, entity) in state.attachments
                if held:
                    letting_go.discard((hand, entity))
                elif previous is not None and (hand, entity) in previous.attachments:
                    letting_go.add((hand, entity))
                released = (hand, entity) in letting_go and (hand, entity) not in touching
                if released:
                    letting_go.discard((hand, entity))
                estimates.append(PredicateEstimate(v.GRASP, hand, entity, "T" if held else "N", frame_index=t))
                estimates.append(PredicateEstimate(v.RELEASE, hand, entity, "T" if released else "N", frame_index=t))
            for hand in self.pairs.hands:
                holding = any(h == hand for h, _ in state.attachments)
                acting = script.hand == hand and script.primitive in ACTIVE_PRIMITIVES
                estimates.append(PredicateEstimate(v.ACTIVE_HAND, hand, NO_OBJECT, "T" if holding or acting else "N",
                                                   frame_index=t))
            for name, pairs, value in ((v.CONTAINMENT_EVENT, self.pairs.containment, "In"),
                                       (v.SUPPORT_EVENT, self.pairs.support, "Sup")):
                for pair in pairs:
                    began = t > 0 and statics[t][pair] == value and statics[t - 1][pair] != value
                    estimates.append(PredicateEstimate(name, *pair, "T" if began else "N", frame_index=t))
            frames.append(estimates)
        return frames
