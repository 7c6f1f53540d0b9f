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
