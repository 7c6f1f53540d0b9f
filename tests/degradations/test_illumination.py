import numpy as np
import pytest

from predrel_ros.degradations import SEVERITIES, DegradationOptions, Degrader
from predrel_ros.degradations.illumination import illuminate, variant


def test_variant_comes_from_the_seed_unless_forced():
    assert [variant(seed, DegradationOptions()) for seed in range(6)] == [
        "low_light", "overexposure", "contrast"] * 2
    assert variant(1, DegradationOptions(illumination_mode="contrast")) == "contrast"
    with pytest.raises(ValueError, match="illumination_mode must be one of"):
        DegradationOptions(illumination_mode="dusk")


def test_hand_checked_transforms():
    image = np.array([[[0, 100, 200]], [[200, 200, 200]]], np.uint8)  # mean 150
    np.testing.assert_array_equal(illuminate(image, 0.5, 1.0), [[[0, 50, 100]], [[100, 100, 100]]])
    np.testing.assert_array_equal(illuminate(image, 2.0, 1.0), [[[0, 200, 255]], [[255, 255, 255]]])
    np.testing.assert_array_equal(illuminate(image, 1.0, 0.5), [[[75, 125, 175]], [[175, 175, 175]]])


def test_each_variant_removes_evidence_as_severity_grows():
    image = np.random.default_rng(0).integers(0, 256, (60, 80, 3), dtype=np.uint8)
    def run(mode):
        options = DegradationOptions(illumination_mode=mode)
        return [Degrader("illumination", s, options=options).apply_image(image, 0) for s in SEVERITIES]
    dark = [out.std() for out in run("low_light")]
    flat = [out.std() for out in run("contrast")]
    saturated = [(out == 255).sum() for out in run("overexposure")]
    assert dark == sorted(dark, reverse=True) and dark[-1] < 0.2 * dark[0]
    assert flat == sorted(flat, reverse=True) and flat[-1] < 0.2 * flat[0]
    assert saturated == sorted(saturated) and saturated[-1] > 0.5 * image.size
