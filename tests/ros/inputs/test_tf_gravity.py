"""Gravity from tf: the z axis of a REP-103 frame in the camera's frame, against a fake tf2_ros."""
import sys

import numpy as np
import pytest
from ros_testing import require_ros

require_ros()

import fake_tf2  # noqa: E402
from rclpy.time import Time  # noqa: E402

from predrel_ros.core.errors import UserError  # noqa: E402
from predrel_ros.ros.inputs.tf_gravity import TfGravity  # noqa: E402

#: base_link into a level optical frame looking ahead (the inverse of link -> optical): up is the image's -y
LEVEL = (0.5, -0.5, 0.5, 0.5)


def test_up_is_looked_up_at_the_frames_stamp(monkeypatch):
    tf2 = fake_tf2.install(monkeypatch, LEVEL)
    gravity = TfGravity(node="the node", frame="base_link")
    assert gravity.listener.node == "the node"
    up = gravity.up("camera_color_optical_frame", Time(nanoseconds=42))
    assert np.allclose(up, [0.0, -1.0, 0.0])
    assert [(target, source, time.nanoseconds) for target, source, time in tf2.lookups] == \
        [("camera_color_optical_frame", "base_link", 42)]


def test_without_the_stamp_the_newest_transform_and_without_any_a_lookup_error(monkeypatch):
    tf2 = fake_tf2.install(monkeypatch, LEVEL, newest_only=True)
    assert np.allclose(TfGravity(None, "base_link").up("camera", Time(nanoseconds=42)), [0.0, -1.0, 0.0])
    assert [time.nanoseconds for _, _, time in tf2.lookups] == [42, 0]
    fake_tf2.install(monkeypatch, None)
    with pytest.raises(LookupError, match="tf base_link -> camera: no transform"):
        TfGravity(None, "base_link").up("camera", Time(nanoseconds=42))
    with pytest.raises(LookupError, match="no frame_id"):
        TfGravity(None, "base_link").up("", Time(nanoseconds=42))


def test_without_tf2_ros_the_parameter_is_refused_with_the_way_out(monkeypatch):
    monkeypatch.setitem(sys.modules, "tf2_ros", None)           # import tf2_ros raises ImportError
    with pytest.raises(UserError, match="gravity_frame \\(base_link\\): tf2_ros cannot be imported.*"
                                        "leave gravity_frame empty"):
        TfGravity(None, "base_link")
