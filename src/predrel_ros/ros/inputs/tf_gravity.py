"""Which way is up, from the robot's tf: the z axis of a REP-103 frame (base_link, odom, map: z up)
in the camera's optical frame at a frame's stamp, for the static relations in 3D
(`predicates.gravity`; the predicate node's `gravity_frame`).

tf2_ros comes with a ROS 2 install, not with the PyPI wheels the development machines use: there
this module is tested against a fake tf2_ros (tests/ros/inputs/test_tf_gravity.py), and it runs for
real where tf2_ros exists.
"""
from __future__ import annotations

import numpy as np

from predrel_ros.core.errors import UserError
from predrel_ros.predicates.gravity import up_from_rotation


class TfGravity:
    """Up from tf: a listener on /tf and /tf_static (in `node`'s executor) and its buffer."""

    def __init__(self, node, frame: str) -> None:
        try:
            import tf2_ros
        except ImportError:
            raise UserError(f"parameter gravity_frame ({frame}): tf2_ros cannot be imported here (it comes with a "
                            f"ROS 2 install, not with the PyPI wheels); leave gravity_frame empty for gravity from "
                            f"the support plane in depth") from None
        self.frame = frame
        self._failure = tf2_ros.TransformException
        self.buffer = tf2_ros.Buffer()
        self.listener = tf2_ros.TransformListener(self.buffer, node)

    def up(self, camera_frame: str, stamp) -> np.ndarray:
        """Up in `camera_frame` at `stamp` (an rclpy Time), else at the newest transform tf has (a
        head camera's tilt changes slowly against its frame rate); LookupError when tf has neither."""
        if not camera_frame:
            raise LookupError("the entities carry no frame_id to look gravity up in")
        try:
            transform = self.buffer.lookup_transform(camera_frame, self.frame, stamp)
        except self._failure:
            try:
                transform = self.buffer.lookup_transform(camera_frame, self.frame, type(stamp)())
            except self._failure as error:
                raise LookupError(f"tf {self.frame} -> {camera_frame}: {error}") from None
        rotation = transform.transform.rotation
        return up_from_rotation((rotation.x, rotation.y, rotation.z, rotation.w))
