import numpy as np
import pytest
from ros_testing import require_ros

require_ros()

from sensor_msgs.msg import CameraInfo  # noqa: E402

from predrel_ros.ros.messages.camera_info import camera_info_to_intrinsics  # noqa: E402

pytestmark = pytest.mark.ros


def test_camera_info_intrinsics():
    info = CameraInfo(k=[600.0, 0.0, 320.0, 0.0, 610.0, 240.0, 0.0, 0.0, 1.0])
    np.testing.assert_array_equal(camera_info_to_intrinsics(info),
                                  [[600, 0, 320], [0, 610, 240], [0, 0, 1]])
    with pytest.raises(ValueError, match="CameraInfo.k has no focal length"):
        camera_info_to_intrinsics(CameraInfo())


@pytest.mark.parametrize("change, match", [
    ({"width": 2**32 - 1}, "expected sides in 1..16384"),
    ({"height": 0}, "expected sides in 1..16384"),
    ({"d": [0.0, float("nan"), 0.0, 0.0, 0.0]}, "CameraInfo.d has non-finite values"),
    ({"p": [float("nan")] * 12}, "CameraInfo.p has non-finite values"),
])
def test_hostile_camera_info_is_refused(change, match):
    from predrel_ros.core.frame import CameraIntrinsics
    from predrel_ros.ros.messages.camera_info import camera_info_to_camera, intrinsics_to_camera_info

    msg = intrinsics_to_camera_info(CameraIntrinsics(width=64, height=48, fx=50.0, fy=50.0, cx=32.0, cy=24.0))
    for name, value in change.items():
        setattr(msg, name, value)
    with pytest.raises(ValueError, match=match):
        camera_info_to_camera(msg)


def test_negative_stamps_are_refused():
    from std_msgs.msg import Header

    from predrel_ros.ros.messages.fields import stamp_to_ns

    header = Header()
    header.stamp.sec = -5
    with pytest.raises(ValueError, match="expected sec >= 0"):
        stamp_to_ns(header)
    header.stamp.sec, header.stamp.nanosec = 3, 7
    assert stamp_to_ns(header) == 3_000_000_007
