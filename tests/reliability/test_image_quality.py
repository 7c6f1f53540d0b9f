import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from predrel_ros.degradations import Degrader
from predrel_ros.reliability.image_quality import SIGNALS, ImageQuality, _grey


@pytest.fixture(scope="module")
def scene():
    """A 320x240 frame with smooth texture and sharp-edged discs (no 8-pixel period of its own)."""
    rng = np.random.default_rng(3)
    image = cv2.resize(rng.integers(0, 256, (37, 53, 3), dtype=np.uint8), (320, 240), interpolation=cv2.INTER_CUBIC)
    for _ in range(12):
        centre = tuple(int(v) for v in rng.integers(0, 300, 2))
        cv2.circle(image, centre, int(rng.integers(5, 60)), tuple(int(v) for v in rng.integers(0, 256, 3)), -1)
    return image


def test_every_signal_is_measured(scene):
    values = ImageQuality().measure(scene)
    assert tuple(values) == SIGNALS and all(np.isfinite(v) for v in values.values())
    assert 0.4 < values["exposure"] < 0.6 and values["dark_share"] < 0.01 and values["bright_share"] < 0.01
    assert 0.9 < values["blockiness"] < 1.1 and values["noise"] < 0.015


@pytest.mark.parametrize("kind", ["blur", "low_resolution"])
def test_blur_and_low_resolution_lower_the_sharpness_with_severity(scene, kind):
    quality = ImageQuality()
    sharpness = [quality.measure(Degrader(kind, severity, 0).apply_image(scene, 0))["sharpness"]
                 for severity in range(6)]
    assert all(a > b for a, b in zip(sharpness, sharpness[1:])), sharpness
    assert sharpness[5] < 0.75 * sharpness[0]


def test_illumination_moves_exposure_and_contrast(scene):
    quality = ImageQuality()
    clean = quality.measure(scene)
    # the illumination variant comes from the seed: 0 low light, 1 overexposure, 2 contrast reduction
    dark, bright, flat = (quality.measure(Degrader("illumination", 4, seed).apply_image(scene, 0)) for seed in range(3))
    assert dark["exposure"] < 0.5 * clean["exposure"]
    assert bright["exposure"] > clean["exposure"] + 0.2 and bright["bright_share"] > 0.2
    assert flat["contrast"] < 0.5 * clean["contrast"] and abs(flat["exposure"] - clean["exposure"]) < 0.02
    # the sharpness ratio does not move with a contrast change
    assert flat["sharpness"] == pytest.approx(clean["sharpness"], rel=0.1)


def test_noise_is_estimated_in_grey_units(scene):
    noise = np.random.default_rng(0).normal(0.0, 0.05 * 255, scene.shape[:2])[..., None]
    noisy = np.clip(scene + noise, 0, 255).astype(np.uint8)
    assert ImageQuality().measure(noisy)["noise"] == pytest.approx(0.05, rel=0.15)


@pytest.mark.parametrize("size", [(320, 240), (640, 480)])
def test_strong_jpeg_compression_is_blocky(scene, size):
    image = cv2.resize(scene, size, interpolation=cv2.INTER_AREA)
    _, encoded = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 10])
    quality = ImageQuality()
    assert quality.measure(cv2.imdecode(encoded, cv2.IMREAD_COLOR))["blockiness"] > \
        quality.measure(image)["blockiness"] + 0.1


def test_strides_keep_the_block_grid_and_the_width():
    quality = ImageQuality(width=160)
    assert [quality.stride(w) for w in (100, 320, 640, 1280, 4096)] == [1, 2, 4, 8, 8]


def test_grey_float_and_colour_uint8_agree(scene):
    grey = scene.mean(axis=2) / 255.0
    colour, flat = ImageQuality().measure(scene), ImageQuality().measure(grey)
    assert all(colour[name] == pytest.approx(flat[name], rel=1e-4, abs=1e-6) for name in SIGNALS)


def test_bad_images_are_refused():
    with pytest.raises(ValueError, match="image must be"):
        ImageQuality().measure(np.zeros((240, 320, 2), np.uint8))
    with pytest.raises(ValueError, match="image must be"):
        ImageQuality().measure(np.zeros(10, np.uint8))
    with pytest.raises(ValueError, match="width"):
        ImageQuality(width=4)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_the_grey_of_8_bit_colour_is_the_float_channel_mean(seed):
    image = np.random.default_rng(seed).integers(0, 256, (7, 9, 3), dtype=np.uint8)[::2, ::3]  # a strided view
    scale = np.float32(1.0 / 255.0) / np.float32(3.0)
    by_floats = (image[..., 0].astype(np.float32) + image[..., 1] + image[..., 2]) * scale
    np.testing.assert_array_equal(_grey(image), by_floats)
