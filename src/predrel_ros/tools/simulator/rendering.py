"""Offscreen rendering of a simulation: RGB, metric depth, instance masks and exact visibility.

Per frame: one RGB, one depth and one segmentation render. Visibility = visible pixels / pixels
the entity covers when rendered alone (unoccluded). The second number needs a segmentation render
of the entity alone, except when the depth image proves that nothing can hide it (then it equals
the visible pixels); it is cached per entity and reused while the entity's pose (and a hand's
finger opening) stays within a sub-pixel tolerance of the rendered one, so only moving, possibly
occluded entities cost extra renders.
Truncation by the image border is not occlusion: both counts are taken inside the image.

Camera conventions: intrinsics in the OpenCV / ROS convention (pixel (0, 0) is the centre of the
top-left pixel), square pixels, principal point at the image centre; 3D points in the ROS optical
frame (x right, y down, z forward).
"""
from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from predrel_ros.core.errors import UserError
from predrel_ros.core.frame import CameraIntrinsics
from predrel_ros.tools.simulator.gl import backend_in_effect, missing_backend_message
from predrel_ros.tools.simulator.scene import KIND_HAND
from predrel_ros.tools.simulator.simulator import PhysicsState, Simulation

#: MuJoCo -> optical axes (flip y and z)
_OPTICAL = np.diag([1.0, -1.0, -1.0])
#: geom groups used to render one entity alone
_SHOWN_GROUP, _HIDDEN_GROUP = 3, 4
#: pose changes below these leave an entity's unoccluded footprint unchanged (sub-pixel at 0.3 m)
_POSE_TOLERANCE_M = 1e-5
_GEOM = int(mujoco.mjtObj.mjOBJ_GEOM)
#: how far a resting body may sink into its support (soft contacts) and still count as above it
_RESTING_DEPTH_M = 1e-3
_ROTATION_TOLERANCE = 1e-4


@dataclass
class RenderedFrame:
    """rgb: H x W x 3 uint8. depth: H x W float32 metres. entity_map: H x W int32 entity id per pixel
    (0 = no entity: floor or background). visible / unoccluded: pixel counts per entity id."""

    rgb: np.ndarray
    depth: np.ndarray
    entity_map: np.ndarray
    visible: dict[int, int]
    unoccluded: dict[int, int]

    def visibility(self, entity_id: int) -> float:
        full = self.unoccluded.get(entity_id, 0)
        return min(1.0, self.visible.get(entity_id, 0) / full) if full else 0.0


class SceneRenderer:
    """Renders one camera of a `Simulation`. Call `close()` (or use `with`) when done."""

    def __init__(self, sim: Simulation, camera: str, width: int, height: int) -> None:
        self.sim = sim
        self.width, self.height = int(width), int(height)
        try:
            self.camera_id = sim.model.camera(camera).id
        except KeyError:
            raise UserError(f"the scene has no camera {camera!r}") from None
        self.camera = camera
        try:
            self._renderer = mujoco.Renderer(sim.model, self.height, self.width)
        except Exception as error:  # MuJoCo raises several types when no GL context can be made
            raise UserError(missing_backend_message(error)) from None
        self.backend = backend_in_effect()
        self._isolated_option = mujoco.MjvOption()
        self._isolated_option.geomgroup[:] = 0
        self._isolated_option.geomgroup[_SHOWN_GROUP] = 1
        self._entity_geoms = {entity_id: np.flatnonzero(sim.geom_entity == entity_id) for entity_id in sim.ids}
        self._cache: dict[int, tuple[np.ndarray, int]] = {}

    # ------------------------------------------------------------------ camera

    @property
    def intrinsics(self) -> CameraIntrinsics:
        fovy = np.deg2rad(self.sim.model.cam_fovy[self.camera_id])
        focal = (self.height / 2.0) / np.tan(fovy / 2.0)
        return CameraIntrinsics(width=self.width, height=self.height, fx=float(focal), fy=float(focal),
                                cx=(self.width - 1) / 2.0, cy=(self.height - 1) / 2.0)

    def camera_pose(self) -> np.ndarray:
        """4x4 world-from-optical transform of the camera now."""
        data = self.sim.data
        pose = np.eye(4)
        pose[:3, :3] = data.cam_xmat[self.camera_id].reshape(3, 3) @ _OPTICAL
        pose[:3, 3] = data.cam_xpos[self.camera_id]
        return pose

    def to_optical(self, points_world: np.ndarray) -> np.ndarray:
        """N x 3 world points -> N x 3 points in the camera's optical frame."""
        pose = self.camera_pose()
        return (np.asarray(points_world, dtype=np.float64).reshape(-1, 3) - pose[:3, 3]) @ pose[:3, :3]

    # ------------------------------------------------------------------ rendering

    def render(self, state: PhysicsState) -> RenderedFrame:
        renderer = self._renderer
        renderer.update_scene(self.sim.data, self.camera_id)
        rgb = renderer.render().copy()
        renderer.enable_depth_rendering()
        depth = renderer.render().astype(np.float32)
        renderer.disable_depth_rendering()
        renderer.enable_segmentation_rendering()
        entity_map = self._entity_map(renderer.render())
        renderer.disable_segmentation_rendering()
        ids, counts = np.unique(entity_map, return_counts=True)
        visible = {int(i): int(c) for i, c in zip(ids, counts) if i != 0}
        unoccluded = {entity_id: self._unoccluded_pixels(entity_id, state, entity_map, depth, visible)
                      for entity_id in self.sim.ids}
        return RenderedFrame(rgb=rgb, depth=depth, entity_map=entity_map, visible=visible, unoccluded=unoccluded)

    def _entity_map(self, segmentation: np.ndarray) -> np.ndarray:
        ids, types = segmentation[..., 0], segmentation[..., 1]
        is_geom = (types == _GEOM) & (ids >= 0)
        return np.where(is_geom, self.sim.geom_entity[np.clip(ids, 0, None)], 0).astype(np.int32)

    def _pose(self, entity_id: int, state: PhysicsState) -> np.ndarray:
        """Position, rotation (and a hand's finger gap) scaled so that 1 is the reuse tolerance."""
        i = self.sim.index_of(entity_id)
        parts = [state.body_pos[i] / _POSE_TOLERANCE_M, state.body_rot[i].reshape(-1) / _ROTATION_TOLERANCE]
        if self.sim.scene.entity(entity_id).kind == KIND_HAND:
            parts.append([state.hand_poses[entity_id].finger_gap / _POSE_TOLERANCE_M])
        return np.concatenate(parts)

    def _may_be_occluded(self, entity_id: int, state: PhysicsState, entity_map: np.ndarray,
                         depth: np.ndarray) -> bool:
        """False when provably nothing hides the entity: inside the projection of its 3D box, no
        pixel shows a possible occluder nearer than the box's farthest corner. Possible occluders
        are the other entities not lying wholly below it (with the camera above, a body under the
        plane z = h cannot hide one above it; the floor is under everything; the sub-millimetre
        sinking of a resting body into its support is ignored). Then its unoccluded footprint
        equals its visible pixels."""
        i = self.sim.index_of(entity_id)
        camera_z = self.camera_pose()[2, 3]
        occluders = [other for j, other in enumerate(state.ids) if other != entity_id and
                     (state.box_max[j, 2] > state.box_min[i, 2] + _RESTING_DEPTH_M or camera_z <= state.box_max[j, 2])]
        low, high = state.box_min[i], state.box_max[i]
        corners = np.array([[x, y, z] for x in (low[0], high[0]) for y in (low[1], high[1])
                            for z in (low[2], high[2])])
        optical = self.to_optical(corners)
        if np.any(optical[:, 2] <= 0.01):
            return True  # reaches behind the camera: no cheap bound
        uv = self.intrinsics.project(optical)
        x1, y1 = np.maximum(np.floor(uv.min(axis=0)).astype(int), 0)
        x2, y2 = np.minimum(np.ceil(uv.max(axis=0)).astype(int) + 1, [self.width, self.height])
        if x2 <= x1 or y2 <= y1:
            return False  # outside the image
        others = np.isin(entity_map[y1:y2, x1:x2], occluders)
        return bool(np.any(depth[y1:y2, x1:x2][others] < optical[:, 2].max()))

    def _unoccluded_pixels(self, entity_id: int, state: PhysicsState, entity_map: np.ndarray,
                           depth: np.ndarray, visible: dict[int, int]) -> int:
        pose = self._pose(entity_id, state)
        cached = self._cache.get(entity_id)
        if cached is not None and np.max(np.abs(cached[0] - pose)) < 1.0:
            return cached[1]
        if not self._may_be_occluded(entity_id, state, entity_map, depth):
            count = visible.get(entity_id, 0)
        else:
            count = self._render_alone(entity_id)
        self._cache[entity_id] = (pose, count)
        return count

    def _render_alone(self, entity_id: int) -> int:
        """Pixels of the entity in a segmentation render that shows nothing else."""
        model = self.sim.model
        saved = model.geom_group.copy()
        model.geom_group[:] = _HIDDEN_GROUP
        model.geom_group[self._entity_geoms[entity_id]] = _SHOWN_GROUP
        self._renderer.enable_segmentation_rendering()
        try:
            self._renderer.update_scene(self.sim.data, self.camera_id, scene_option=self._isolated_option)
            alone = self._entity_map(self._renderer.render())
        finally:
            model.geom_group[:] = saved
            self._renderer.disable_segmentation_rendering()
        return int(np.count_nonzero(alone == entity_id))

    def close(self) -> None:
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None

    def __enter__(self) -> "SceneRenderer":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.close()
