"""MuJoCo model (MJCF XML) of a `SceneSpec`.

Each entity is one body named `EntitySpec.name`: the table is a static body, objects and containers
are free bodies (containers built from box geoms: a floor and walls, or a floor and tilted staves
for a bowl), hands are mocap bodies (a palm, three fingers and a thumb that collide, and a forearm
that is only seen). Every hand has an inactive weld to every graspable entity; the simulator
switches one on at grasp time with the relative pose of that moment.

Contacts have no margin (surfaces touch where they touch); the ground truth measures near-contacts
with `mj_geomDistance` instead (see `simulator.py`).
"""
from __future__ import annotations

import math

import numpy as np

from predrel_ros.tools.simulator.config import GenerationConfig
from predrel_ros.tools.simulator.scene import (
    BAR,
    BOWL,
    BOWL_STAVES,
    BOX,
    CUBE,
    CYLINDER,
    FINGER_RADIUS,
    FINGER_XS,
    FLOOR_THICKNESS,
    FOREARM_LENGTH,
    FOREARM_RADIUS,
    KIND_HAND,
    KIND_SURFACE,
    PALM_HALF,
    TABLE_HEIGHT,
    TABLE_THICKNESS,
    THUMB_RADIUS,
    WALL_THICKNESS,
    EntitySpec,
    SceneSpec,
)

OBJECT_DENSITY = 500.0
CONTAINER_DENSITY = 900.0
#: finger half gap (hand centre to finger axis) of an open hand before any grasp is planned
DEFAULT_OPEN_HALF_GAP = 0.055


def _f(values) -> str:
    return " ".join(f"{float(v):.6g}" for v in np.atleast_1d(values))


def _quat_z(yaw: float) -> np.ndarray:
    return np.array([math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)])


def _quat_zy(yaw: float, tilt: float) -> np.ndarray:
    """Rotation about z by yaw, then about the rotated y axis by tilt."""
    qz = _quat_z(yaw)
    qy = np.array([math.cos(tilt / 2), 0.0, math.sin(tilt / 2), 0.0])
    w1, x1, y1, z1 = qz
    w2, x2, y2, z2 = qy
    return np.array([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2])


def _geom(name: str, kind: str, size, pos=(0, 0, 0), rgba=None, quat=None, extra: str = "") -> str:
    attributes = [f'name="{name}"', f'type="{kind}"', f'size="{_f(size)}"', f'pos="{_f(pos)}"']
    if quat is not None:
        attributes.append(f'quat="{_f(quat)}"')
    if rgba is not None:
        attributes.append(f'rgba="{_f(rgba)}"')
    if extra:
        attributes.append(extra)
    return f"<geom {' '.join(attributes)}/>"


def finger_geom_names(hand: EntitySpec) -> tuple[list[str], list[str]]:
    """Names of the finger geoms (on the hand's +y side for a right hand) and the thumb geoms."""
    return [f"{hand.name}_finger{i}" for i in range(len(FINGER_XS))], [f"{hand.name}_thumb"]


def finger_side(hand: EntitySpec) -> float:
    """+1 when the fingers are on the hand's +y side (right hand), -1 for the mirrored left hand."""
    return 1.0 if hand.side == "right" else -1.0


def _hand_geoms(hand: EntitySpec) -> list[str]:
    length = hand.size[0]
    side = finger_side(hand)
    rgba = hand.rgba
    palm_bottom = -PALM_HALF[2]
    fingers, thumbs = finger_geom_names(hand)
    geoms = [_geom(f"{hand.name}_palm", "box", PALM_HALF, rgba=rgba)]
    for name, x in zip(fingers, FINGER_XS):
        geoms.append(_geom(name, "capsule", (FINGER_RADIUS, length / 2),
                           pos=(x, side * DEFAULT_OPEN_HALF_GAP, palm_bottom - length / 2), rgba=rgba))
    thumb_length = length - 0.008
    geoms.append(_geom(thumbs[0], "capsule", (THUMB_RADIUS, thumb_length / 2),
                       pos=(0.0, -side * DEFAULT_OPEN_HALF_GAP, palm_bottom - thumb_length / 2), rgba=rgba))
    outward = 1.0 if hand.side == "right" else -1.0
    direction = np.array([outward * 0.55, -0.25, 0.8])
    start = np.array([0.0, 0.0, PALM_HALF[2]])
    end = start + direction / np.linalg.norm(direction) * FOREARM_LENGTH
    geoms.append(f'<geom name="{hand.name}_forearm" type="capsule" size="{FOREARM_RADIUS}" '
                 f'fromto="{_f(np.concatenate([start, end]))}" rgba="{_f(rgba)}" contype="0" conaffinity="0"/>')
    return geoms


def _container_geoms(spec: EntitySpec) -> list[str]:
    t, ft = WALL_THICKNESS, FLOOR_THICKNESS
    rgba = spec.rgba
    name = spec.name
    if spec.label == BOX:
        ix, iy, height = spec.size
        geoms = [_geom(f"{name}_floor", "box", (ix + t, iy + t, ft / 2), pos=(0, 0, ft / 2), rgba=rgba)]
        for sign in (-1, 1):
            geoms.append(_geom(f"{name}_wall_x{sign:+d}", "box", (t / 2, iy + t, height / 2),
                               pos=(sign * (ix + t / 2), 0, height / 2), rgba=rgba))
            geoms.append(_geom(f"{name}_wall_y{sign:+d}", "box", (ix, t / 2, height / 2),
                               pos=(0, sign * (iy + t / 2), height / 2), rgba=rgba))
        return geoms
    bottom, top, height = spec.size
    tilt = math.atan2(top - bottom, height)
    slant_half = math.hypot(top - bottom, height) / 2
    half_width = math.pi * (top + t) / BOWL_STAVES * 1.08
    radius = (bottom + top) / 2 + t / 2
    geoms = [_geom(f"{name}_floor", "cylinder", (bottom + t, ft / 2), pos=(0, 0, ft / 2), rgba=rgba)]
    for k in range(BOWL_STAVES):
        angle = 2 * math.pi * k / BOWL_STAVES
        geoms.append(_geom(f"{name}_stave{k}", "box", (t / 2, half_width, slant_half),
                           pos=(radius * math.cos(angle), radius * math.sin(angle), height / 2),
                           quat=_quat_zy(angle, tilt), rgba=rgba))
    return geoms


def _object_geoms(spec: EntitySpec) -> list[str]:
    if spec.label == CUBE:
        return [_geom(f"{spec.name}_geom", "box", spec.half_extents(), rgba=spec.rgba)]
    if spec.label == CYLINDER:
        return [_geom(f"{spec.name}_geom", "cylinder", spec.size, rgba=spec.rgba)]
    if spec.label == BAR:
        return [_geom(f"{spec.name}_geom", "box", spec.half_extents(), rgba=spec.rgba)]
    raise ValueError(f"unknown object label {spec.label}")


def _table_geoms(spec: EntitySpec) -> list[str]:
    hx, hy = spec.size
    geoms = [_geom(f"{spec.name}_top", "box", (hx, hy, TABLE_THICKNESS / 2), pos=(0, 0, -TABLE_THICKNESS / 2),
                   rgba=spec.rgba)]
    leg_half = (TABLE_HEIGHT - TABLE_THICKNESS) / 2
    for sx in (-1, 1):
        for sy in (-1, 1):
            geoms.append(_geom(f"{spec.name}_leg{sx:+d}{sy:+d}", "box", (0.025, 0.025, leg_half),
                               pos=(sx * (hx - 0.05), sy * (hy - 0.05), -TABLE_THICKNESS - leg_half),
                               rgba=spec.rgba, extra='contype="0" conaffinity="0"'))
    return geoms


def graspable(spec: EntitySpec) -> bool:
    return spec.kind not in (KIND_HAND, KIND_SURFACE)


def weld_name(hand: EntitySpec, target: EntitySpec) -> str:
    return f"grasp_{hand.name}_{target.name}"


def build_mjcf(scene: SceneSpec, config: GenerationConfig) -> str:
    timestep = config.timestep
    weld_timeconst = max(2.0 * timestep, 0.004)
    bodies = []
    for spec in scene.entities:
        position = _f(spec.position)
        if spec.kind == KIND_SURFACE:
            bodies.append(f'<body name="{spec.name}" pos="{position}">' + "".join(_table_geoms(spec)) + "</body>")
        elif spec.kind == KIND_HAND:
            bodies.append(f'<body name="{spec.name}" mocap="true" pos="{position}" quat="{_f(_quat_z(spec.yaw))}">'
                          + "".join(_hand_geoms(spec)) + "</body>")
        else:
            is_container = spec.label in (BOX, BOWL)
            geoms = _container_geoms(spec) if is_container else _object_geoms(spec)
            bodies.append(f'<body name="{spec.name}" pos="{position}" quat="{_f(_quat_z(spec.yaw))}" '
                          f'childclass="{"container" if is_container else "object"}">'
                          f'<freejoint name="{spec.name}_joint"/>' + "".join(geoms) + "</body>")
    cameras = []
    for camera in scene.cameras:
        right, up = camera.axes()
        cameras.append(f'<camera name="{camera.name}" pos="{_f(camera.position)}" '
                       f'xyaxes="{_f(np.concatenate([right, up]))}" fovy="{camera.fovy:.6g}"/>')
    lights = [f'<light name="light{i}" pos="{_f(light.position)}" dir="{_f(light.direction)}" '
              f'diffuse="{_f([light.diffuse] * 3)}" specular="0.15 0.15 0.15" '
              f'castshadow="{"true" if light.shadows else "false"}"/>'
              for i, light in enumerate(scene.lights)]
    welds = [f'<weld name="{weld_name(hand, target)}" body1="{hand.name}" body2="{target.name}" active="false" '
             f'solref="{weld_timeconst:.6g} 1"/>'
             for hand in scene.entities if hand.kind == KIND_HAND
             for target in scene.entities if graspable(target)]
    return f"""<mujoco model="predrel_controlled">
  <compiler angle="radian"/>
  <option timestep="{timestep:.8g}" integrator="implicitfast"/>
  <statistic extent="1" center="0 0 0"/>
  <visual>
    <global offwidth="{config.width}" offheight="{config.height}"/>
    <quality shadowsize="2048" offsamples="4"/>
    <map znear="0.01" zfar="20"/>
    <headlight ambient="0.25 0.25 0.25" diffuse="0.2 0.2 0.2" specular="0.05 0.05 0.05"/>
  </visual>
  <asset>
    <texture name="floor" type="2d" builtin="checker" width="256" height="256" rgb1="{_f(scene.floor_rgba[:3])}"
             rgb2="{_f(np.asarray(scene.floor_rgba[:3]) * 0.8)}"/>
    <material name="floor" texture="floor" texrepeat="6 6" reflectance="0.05"/>
  </asset>
  <default>
    <geom friction="1 0.005 0.0001" condim="3"/>
    <default class="object"><geom density="{OBJECT_DENSITY:.6g}"/></default>
    <default class="container"><geom density="{CONTAINER_DENSITY:.6g}"/></default>
  </default>
  <worldbody>
    <geom name="floor" type="plane" size="4 4 0.1" pos="0 0 {-TABLE_HEIGHT:.6g}" material="floor"/>
    {''.join(lights)}
    {''.join(cameras)}
    {''.join(bodies)}
  </worldbody>
  <equality>{''.join(welds)}</equality>
</mujoco>
"""

