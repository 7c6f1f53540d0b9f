import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from predrel_ros.perception import letterbox


def test_apply_places_the_frame_rgb_and_pads_grey():
    frame = np.zeros((240, 320, 3), np.uint8)
    frame[:, :] = (10, 20, 30)  # BGR
    geometry = letterbox.plan(240, 320, 256, 320)
    tensor = letterbox.apply(frame, geometry)
    assert tensor.shape == (1, 3, 256, 320) and tensor.dtype == np.float32
    np.testing.assert_allclose(tensor[0, :, 8, 0] * 255, [30, 20, 10], atol=1e-4)  # RGB order
    np.testing.assert_allclose(tensor[0, :, 0, 0] * 255, [114, 114, 114], atol=1e-4)
    np.testing.assert_allclose(tensor[0, :, 255, 319] * 255, [114, 114, 114], atol=1e-4)
    assert np.allclose(tensor[0, 0, 8:248] * 255, 30)


def test_input_size_for_dynamic_models_pads_to_the_stride():
    assert letterbox.input_size_for(240, 320) == (256, 320)
    assert letterbox.input_size_for(480, 640) == (480, 640)
    assert letterbox.input_size_for(720, 1280, longest_side=640) == (384, 640)


@settings(max_examples=60, deadline=None)
@given(fh=st.integers(10, 2000), fw=st.integers(10, 2000), ih=st.integers(32, 1280), iw=st.integers(32, 1280),
       box=st.tuples(*[st.floats(0, 1)] * 4))
def test_frame_boxes_survive_the_round_trip(fh, fw, ih, iw, box):
    geometry = letterbox.plan(fh, fw, ih, iw)
    assert geometry.content_width <= iw and geometry.content_height <= ih
    assert geometry.pad_x >= 0 and geometry.pad_y >= 0
    x1, x2 = sorted((box[0] * fw, box[2] * fw))
    y1, y2 = sorted((box[1] * fh, box[3] * fh))
    forward = np.array([[x1, y1, x2, y2]]) * geometry.scale + [geometry.pad_x, geometry.pad_y] * 2
    np.testing.assert_allclose(geometry.to_frame(forward), [[x1, y1, x2, y2]], atol=1e-6)


def test_bad_frames_are_refused():
    geometry = letterbox.plan(240, 320, 256, 320)
    with pytest.raises(ValueError, match="H x W x 3"):
        letterbox.apply(np.zeros((240, 320), np.uint8), geometry)
    with pytest.raises(ValueError, match="uint8"):
        letterbox.apply(np.zeros((240, 320, 3), np.float32), geometry)
    with pytest.raises(ValueError, match="planned for 320x240"):
        letterbox.apply(np.zeros((480, 640, 3), np.uint8), geometry)
    with pytest.raises(ValueError, match="positive"):
        letterbox.plan(0, 320, 256, 320)
