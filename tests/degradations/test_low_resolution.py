import cv2
import numpy as np

from predrel_ros.degradations import Degrader
from predrel_ros.degradations.low_resolution import low_resolution, reduced_size


def test_reduced_sizes_of_the_default_table():
    scales = [Degrader("low_resolution", s).parameters()["scale"] for s in range(1, 6)]
    assert [reduced_size((480, 640, 3), s) for s in scales] == [(320, 240), (256, 192), (192, 144), (141, 106),
                                                               (102, 77)]
    assert [reduced_size((240, 320), s) for s in scales] == [(160, 120), (128, 96), (96, 72), (70, 53), (51, 38)]
    assert reduced_size((3, 3), 0.01) == (1, 1)


def test_is_area_downsampling_then_bilinear_upsampling():
    image = np.random.default_rng(0).integers(0, 256, (48, 64, 3), dtype=np.uint8)
    small = cv2.resize(image, (16, 12), interpolation=cv2.INTER_AREA)
    np.testing.assert_array_equal(low_resolution(image, 0.25),
                                  cv2.resize(small, (64, 48), interpolation=cv2.INTER_LINEAR))
    np.testing.assert_array_equal(low_resolution(image, 1.0), image)
    flat = np.full((30, 40, 3), 90, np.uint8)
    np.testing.assert_array_equal(low_resolution(flat, 0.16), flat)
