"""sensor_msgs/CameraInfo <-> pinhole intrinsics (predrel_ros.core.frame.CameraIntrinsics), for
rclpy and rosbags messages alike."""
from __future__ import annotations

import numpy as np

from predrel_ros.core.frame import CAMERA_FRAME_ID, CameraIntrinsics
from predrel_ros.ros.messages.fields import check_image_size, header_at, stamp_to_ns
from predrel_ros.ros.messages.message_classes import CAMERA_INFO, RCLPY, REGION_OF_INTEREST, Message, MessageClasses


def intrinsics_to_camera_info(camera: CameraIntrinsics, header: Message | None = None, *,
                              classes: MessageClasses = RCLPY) -> Message:
    """CameraInfo of pinhole intrinsics (R identity, P = [K | 0], no binning or region of interest);
    the header's stamp (0 without one) and frame_id, else the camera's frame_id."""
    if header is None or not header.frame_id:
        header = header_at(0 if header is None else stamp_to_ns(header), camera.frame_id, classes=classes)
    K = camera.K
    roi = classes.build(REGION_OF_INTEREST, x_offset=0, y_offset=0, height=0, width=0, do_rectify=False)
    return classes.build(
        CAMERA_INFO, header=header, height=int(camera.height), width=int(camera.width),
        distortion_model=camera.distortion_model, d=classes.sequence(camera.distortion, np.float64),
        k=K.reshape(9).astype(np.float64), r=np.eye(3).reshape(9),
        p=np.hstack([K, np.zeros((3, 1))]).reshape(12).astype(np.float64), binning_x=0, binning_y=0, roi=roi)


def check_camera_info(msg: Message) -> None:
    """ValueError unless the image size is 1..MAX_IMAGE_SIDE and D, R and P are finite (K: see
    `camera_info_to_intrinsics`)."""
    check_image_size(msg.width, msg.height, "CameraInfo")
    for name in ("d", "r", "p"):
        values = np.asarray(getattr(msg, name), dtype=np.float64)
        if not np.all(np.isfinite(values)):
            raise ValueError(f"CameraInfo.{name} has non-finite values: {values.tolist()}")


def camera_info_to_intrinsics(msg: Message) -> np.ndarray:
    """3 x 3 intrinsic matrix K (float64) of the (raw) image described by `msg`."""
    k = np.asarray(msg.k, dtype=np.float64)
    if k.size != 9:
        raise ValueError(f"CameraInfo.k must hold 9 values, got {k.size}")
    k = k.reshape(3, 3)
    if not np.all(np.isfinite(k)):
        raise ValueError(f"CameraInfo.k has non-finite values: {k.tolist()}")
    if k[0, 0] <= 0 or k[1, 1] <= 0:
        raise ValueError(f"CameraInfo.k has no focal length (fx={k[0, 0]}, fy={k[1, 1]}): the camera "
                         f"is uncalibrated")
    return k


def camera_info_to_camera(msg: Message) -> CameraIntrinsics:
    """The intrinsics `msg` describes (K checked as by `camera_info_to_intrinsics`); an empty
    distortion model reads as plumb_bob, an empty frame_id as the camera's optical frame."""
    check_camera_info(msg)
    k = camera_info_to_intrinsics(msg)
    return CameraIntrinsics(width=int(msg.width), height=int(msg.height), fx=float(k[0, 0]), fy=float(k[1, 1]),
                            cx=float(k[0, 2]), cy=float(k[1, 2]), distortion=tuple(float(v) for v in msg.d),
                            distortion_model=msg.distortion_model or "plumb_bob",
                            frame_id=msg.header.frame_id or CAMERA_FRAME_ID)
