"""One controlled episode end to end: script -> physics -> rendering -> ground truth -> Frames.

    episode = generate_episode("insert", seed=3, config=GenerationConfig(frames=60))
    episode.meta            # EpisodeMeta (template, scenario group, seed, camera, entities, ...)
    episode.frames          # list of predrel_ros.core.frame.Frame with ground truth
    episode.states          # PhysicsState per frame (what the ground truth was computed from)

Ground-truth entities: one per scene entity per frame. mask = the entity's pixels in the
segmentation render; box = the pixel extent of the mask (x1 = leftmost pixel, x2 = rightmost + 1;
when nothing is visible, the projected 3D box clipped to the image); visibility = visible / unoccluded
pixels; point3d = centre of the entity's 3D box in the optical frame; centroid = (mask centroid u, v,
point3d z). Detector class in `label` (CLASS_LABELS), the part it plays in `role`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from predrel_ros.core.entities import Entity
from predrel_ros.core.frame import Frame
from predrel_ros.sources.dataset import EntityInfo, EpisodeMeta
from predrel_ros.tools.simulator.config import GenerationConfig
from predrel_ros.tools.simulator.ground_truth import FrameScript, GroundTruth
from predrel_ros.tools.simulator.primitives import SCRIPT_TO_PRIMITIVE, Phase, Plan
from predrel_ros.tools.simulator.rendering import RenderedFrame, SceneRenderer
from predrel_ros.tools.simulator.simulator import HandPose, PhysicsState, Simulation
from predrel_ros.tools.simulator.templates import Script, allocate_frames, build_script

#: stamp of frame 0 of every episode (2023-11-14T22:13:20Z), so stamps are reproducible
START_STAMP_NS = 1_700_000_000 * 1_000_000_000
#: how much a radian of yaw and a metre of finger travel weigh against a metre of hand travel when
#: timing a hand's waypoints
_YAW_METRES_PER_RADIAN = 0.1


@dataclass
class Episode:
    meta: EpisodeMeta
    frames: list[Frame]
    states: list[PhysicsState]
    script: Script


def _ease(s: float) -> float:
    """Cosine speed profile: starts and stops at rest."""
    return 0.5 - 0.5 * math.cos(math.pi * s)


def _segment_length(a: HandPose, b: HandPose) -> float:
    turn = abs(math.remainder(b.yaw - a.yaw, 2 * math.pi))
    return float(np.linalg.norm(b.position - a.position)) + _YAW_METRES_PER_RADIAN * turn + \
        abs(b.finger_gap - a.finger_gap) + 1e-9


def interpolate_path(path: list[HandPose], s: float) -> HandPose:
    """Pose at fraction s in [0, 1] of a piecewise-linear path (yaw along the shorter turn)."""
    lengths = np.array([_segment_length(a, b) for a, b in zip(path, path[1:])])
    target = s * lengths.sum()
    for (a, b), length in zip(zip(path, path[1:]), lengths):
        if target <= length or b is path[-1]:
            u = min(max(target / length, 0.0), 1.0)
            turn = math.remainder(b.yaw - a.yaw, 2 * math.pi)
            return HandPose(a.position + u * (b.position - a.position), a.yaw + u * turn,
                            a.finger_gap + u * (b.finger_gap - a.finger_gap))
        target -= length
    return path[-1].copy()


def _entities(sim: Simulation, renderer: SceneRenderer, state: PhysicsState, rendered: RenderedFrame,
              index: int) -> list[Entity]:
    camera = renderer.intrinsics
    centres_optical = renderer.to_optical(state.centre)
    entities = []
    for i, entity_id in enumerate(state.ids):
        spec = sim.scene.entity(entity_id)
        mask = rendered.entity_map == entity_id
        point = centres_optical[i]
        if rendered.visible.get(entity_id, 0):
            rows = np.flatnonzero(mask.any(axis=1))
            cols = np.flatnonzero(mask.any(axis=0))
            box = (cols[0], rows[0], cols[-1] + 1, rows[-1] + 1)
            ys, xs = np.nonzero(mask)
            centroid = (xs.mean(), ys.mean(), point[2])
        else:
            box = _projected_box(renderer, state, i)
            uv = camera.project(point)[0] if point[2] > 0 else ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
            centroid = (uv[0], uv[1], point[2])
        entities.append(Entity(id=entity_id, label=spec.label, role=spec.role, box=box, mask=mask,
                               visibility=rendered.visibility(entity_id), centroid=centroid, point3d=point,
                               frame_index=index))
    return entities


def _projected_box(renderer: SceneRenderer, state: PhysicsState, i: int) -> tuple[float, float, float, float]:
    """The entity's 3D box projected and clipped to the image (zero area at the border when it
    lies outside)."""
    low, high = state.box_min[i], state.box_max[i]
    corners = np.array([[x, y, z] for x in (low[0], high[0]) for y in (low[1], high[1]) for z in (low[2], high[2])])
    optical = renderer.to_optical(corners)
    optical = optical[optical[:, 2] > 0.01]
    if optical.size == 0:
        return (0.0, 0.0, 0.0, 0.0)
    uv = renderer.intrinsics.project(optical)
    x1, y1 = np.clip(uv.min(axis=0), 0, [renderer.width, renderer.height])
    x2, y2 = np.clip(uv.max(axis=0), 0, [renderer.width, renderer.height])
    return (float(x1), float(y1), float(max(x1, x2)), float(max(y1, y2)))


def generate_episode(template: str, seed: int, config: GenerationConfig = GenerationConfig(),
                     name: str | None = None, split: str = "",
                     on_frame: Callable[[int], None] | None = None) -> Episode:
    """Simulate, render and label one episode. Same (template, seed, config) -> identical output."""
    script = build_script(template, seed, config.scene)
    sim = Simulation(script.scene, config)
    sim.settle(config.settle_s)
    counts = allocate_frames(script.phases, config.frames)
    states: list[PhysicsState] = []
    frame_scripts: list[FrameScript] = []
    rendered_frames: list[tuple[np.ndarray, np.ndarray, list[Entity]]] = []
    with SceneRenderer(sim, config.camera, config.width, config.height) as renderer:
        for phase, count in zip(script.phases, counts):
            plan = phase.plan(sim) if phase.hand is not None else Plan()
            path = _start_phase(sim, phase, plan)
            for frame_in_phase in range(count):
                for k in range(config.substeps):
                    if path is not None:
                        s = (frame_in_phase * config.substeps + k + 1) / (count * config.substeps)
                        sim.set_hand(phase.hand, interpolate_path(path, _ease(s)))
                    sim.step()
                if frame_in_phase == count - 1 and plan.attach is not None:
                    sim.attach(phase.hand, plan.attach)
                state = sim.record()
                rendered = renderer.render(state)
                index = len(states)
                states.append(state)
                frame_scripts.append(FrameScript(phase.hand, phase.primitive))
                rendered_frames.append((rendered.rgb, rendered.depth, _entities(sim, renderer, state, rendered, index)))
                if on_frame is not None:
                    on_frame(index)
        intrinsics = renderer.intrinsics
        camera_pose = renderer.camera_pose()
        backend = renderer.backend
    predicates = GroundTruth(script.scene, config.ground_truth, config.fps).compute(states, frame_scripts)
    frames = [Frame(index=i, stamp_ns=START_STAMP_NS + round(i * 1e9 / config.fps), rgb=rgb, depth=depth,
                    camera=intrinsics, entities=entities, predicates=predicates[i],
                    primitive=SCRIPT_TO_PRIMITIVE[frame_scripts[i].primitive], source="controlled",
                    attributes={"script_primitive": frame_scripts[i].primitive})
              for i, (rgb, depth, entities) in enumerate(rendered_frames)]
    meta = EpisodeMeta(
        name=name or f"{template}_{seed}", num_frames=len(frames), fps=config.fps, width=config.width,
        height=config.height, camera=intrinsics, camera_pose=camera_pose.tolist(), template=template,
        scenario_group=script.scenario_group, seed=int(seed), split=split,
        entities=[EntityInfo(spec.id, spec.label, spec.role, spec.name) for spec in script.scene.entities],
        extra={"renderer": backend, "camera_name": config.camera, "substeps": config.substeps,
               "script": [{"primitive": phase.primitive, "label": phase.label, "hand": phase.hand, "frames": n}
                          for phase, n in zip(script.phases, counts)],
               "ground_truth": vars(config.ground_truth)})
    return Episode(meta=meta, frames=frames, states=states, script=script)


def _start_phase(sim: Simulation, phase: Phase, plan: Plan) -> list[HandPose] | None:
    """Apply the phase's start events; return the acting hand's path (None when no hand moves)."""
    if phase.hand is None:
        return None
    if plan.detach:
        sim.detach(phase.hand)
    if not plan.waypoints:
        return None
    return [sim.hand_poses[phase.hand].copy()] + plan.waypoints
