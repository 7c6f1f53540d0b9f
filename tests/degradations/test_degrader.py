"""Properties every kind must have: identity at 0, shape/dtype, determinism, monotonic severity."""
import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from predrel_ros.core.entities import Entity
from predrel_ros.degradations import (
    ALL_KINDS,
    DETECTION_NOISE,
    FRAME_DROP,
    IMAGE_KINDS,
    KINDS,
    OCCLUSION_KINDS,
    REGISTRY,
    SEVERITIES,
    DegradationOptions,
    Degrader,
    FrameAction,
)
from predrel_ros.degradations.low_resolution import reduced_size
from predrel_ros.degradations.options import ILLUMINATION_VARIANTS

#: pixel-sized parameters in pixels of these small test images (16 = smallest allowed reference)
SMALL = DegradationOptions(reference_size=16)


def _structured(pattern: str, height: int, width: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if pattern == "checker":
        cell = int(rng.integers(1, 6))
        ys, xs = np.mgrid[:height, :width]
        board = ((ys // cell + xs // cell) % 2).astype(bool)
        a, b = rng.integers(0, 256, (2, 3))
        return np.where(board[..., None], a, b).astype(np.uint8)
    if pattern == "gradient":
        ramp = np.linspace(0, 255, width)[None, :, None] * rng.random(3)
        return np.broadcast_to(ramp, (height, width, 3)).astype(np.uint8).copy()
    image = np.full((height, width, 3), rng.integers(0, 256, 3), np.uint8)
    for _ in range(int(rng.integers(1, 6))):
        x1, x2 = np.sort(rng.integers(0, width + 1, 2))
        y1, y2 = np.sort(rng.integers(0, height + 1, 2))
        image[y1:y2, x1:x2] = rng.integers(0, 256, 3)
    return image


sides = st.integers(16, 48)
random_images = sides.flatmap(lambda h: sides.flatmap(lambda w: arrays(np.uint8, (h, w, 3))))
structured_images = st.builds(_structured, st.sampled_from(["checker", "gradient", "rects"]), sides, sides,
                              st.integers(0, 2**31))
images = st.one_of(random_images, structured_images)
seeds = st.integers(0, 2**32 - 1)
frames = st.integers(0, 10**6)


def gradient_energy(image: np.ndarray) -> float:
    x = image.astype(np.float64)
    return float((np.diff(x, axis=0) ** 2).sum() + (np.diff(x, axis=1) ** 2).sum())


def loses_detail(energies: list[float], image: np.ndarray) -> bool:
    """Non-increasing up to uint8 rounding: rounding can split two equal neighbours by one grey
    level, so one level squared per neighbour pair is allowed (a flat image blurred to x.5 values)."""
    height, width = image.shape[:2]
    slack = ((height - 1) * width + height * (width - 1)) * image.shape[2]
    return all(b <= a + slack for a, b in zip(energies, energies[1:]))


def test_registry_covers_the_design_contract():
    assert KINDS == ("blur", "occlusion", "illumination", "low_resolution", "frame_drop", "detection_noise")
    assert ALL_KINDS == KINDS + ("occlusion_flat",)   # the flat look, by name only: "all" stays 31 conditions
    assert set(REGISTRY) == set(ALL_KINDS) | {"none"}
    assert {k for k, info in REGISTRY.items() if info.level == "image"} == set(IMAGE_KINDS)
    assert REGISTRY[FRAME_DROP].level == "stream" and REGISTRY[DETECTION_NOISE].level == "entities"


@settings(max_examples=40, deadline=None)
@given(images, seeds, frames)
def test_severity_zero_is_the_identity_for_every_kind(image, seed, frame_index):
    entities = [Entity(3, "cube", "manipulated_object", [1, 2, 9, 12])]
    for kind in ALL_KINDS + ("none",):
        degrader = Degrader(kind, 0, seed, options=SMALL)
        out = degrader.apply_image(image, frame_index, targets=entities)
        np.testing.assert_array_equal(out, image)
        assert out is not image
        assert degrader.decide_frame(frame_index).action == FrameAction.DELIVER
        assert degrader.apply_entities(entities, frame_index, image.shape) == entities


@settings(max_examples=30, deadline=None)
@given(images, seeds, frames, st.integers(1, 5))
def test_output_keeps_shape_and_dtype_and_the_input_is_untouched(image, seed, frame_index, severity):
    before = image.copy()
    for kind in ALL_KINDS:
        out = Degrader(kind, severity, seed, options=SMALL).apply_image(image, frame_index)
        assert out.shape == image.shape and out.dtype == np.uint8
    grey = image[..., 0].copy()
    for kind in IMAGE_KINDS:
        out = Degrader(kind, severity, seed, options=SMALL).apply_image(grey, frame_index)
        assert out.shape == grey.shape and out.dtype == np.uint8
    np.testing.assert_array_equal(image, before)


@settings(max_examples=20, deadline=None)
@given(random_images, seeds, st.lists(frames, min_size=2, max_size=4, unique=True), st.integers(1, 5))
def test_same_seed_and_frame_give_the_same_output_in_any_call_order(image, seed, frame_list, severity):
    for kind in IMAGE_KINDS:
        forward = {f: Degrader(kind, severity, seed, options=SMALL).apply_image(image, f) for f in frame_list}
        degrader = Degrader(kind, severity, seed, options=SMALL)
        for f in reversed(frame_list):
            np.testing.assert_array_equal(degrader.apply_image(image, f), forward[f])


@settings(max_examples=20, deadline=None)
@given(st.integers(24, 48), st.integers(24, 48), st.integers(0, 2**31), seeds, frames, st.integers(2, 5))
def test_different_seeds_differ_for_the_random_image_kinds(height, width, image_seed, seed, frame_index, severity):
    image = np.random.default_rng(image_seed).integers(0, 256, (height, width, 3), dtype=np.uint8)
    other = (seed + 1) % 2**32
    for kind in ("blur",) + OCCLUSION_KINDS:
        a = Degrader(kind, severity, seed, options=SMALL).apply_image(image, frame_index)
        b = Degrader(kind, severity, other, options=SMALL).apply_image(image, frame_index)
        assert not np.array_equal(a, b), kind


@settings(max_examples=40, deadline=None)
@given(images, seeds, frames)
def test_blur_loses_detail_monotonically(image, seed, frame_index):
    energies = [gradient_energy(Degrader("blur", s, seed, options=SMALL).apply_image(image, frame_index))
                for s in SEVERITIES]
    assert loses_detail(energies, image), energies
    assert energies[-1] < energies[0] or energies[0] == 0


def _natural(height: int, width: int, seed: int, smoothness: float) -> np.ndarray:
    """Smoothed noise: a random field with the falling spectrum of natural images."""
    noise = np.random.default_rng(seed).random((height, width, 3)).astype(np.float32)
    field = cv2.GaussianBlur(noise, (0, 0), smoothness)
    field = (field - field.min()) / max(float(np.ptp(field)), 1e-6)
    return (255 * field).astype(np.uint8)


natural_images = st.builds(_natural, st.integers(32, 96), st.integers(32, 96), st.integers(0, 2**31),
                           st.floats(0.5, 4.0))


@settings(max_examples=40, deadline=None)
@given(st.one_of(random_images, natural_images))
def test_low_resolution_keeps_fewer_samples_and_loses_detail_monotonically(image):
    """The sample count falls with every step. The gradient energy falls too on natural-like images;
    on synthetic edges or periodic patterns aligned with one sampling grid and not the next (a
    one-pixel checkerboard, a box edge on a grid line) a coarser grid can keep more contrast, so
    those are not used for this check."""
    sizes = [reduced_size(image.shape, Degrader("low_resolution", s).parameters()["scale"]) for s in SEVERITIES]
    assert all(b[0] <= a[0] and b[1] <= a[1] for a, b in zip(sizes, sizes[1:]))
    energies = [gradient_energy(Degrader("low_resolution", s).apply_image(image, 0)) for s in SEVERITIES]
    assert loses_detail(energies, image), energies


@settings(max_examples=40, deadline=None)
@given(images, seeds)
def test_illumination_moves_every_pixel_monotonically_away_from_its_clean_value(image, seed):
    for variant in ILLUMINATION_VARIANTS:
        options = DegradationOptions(illumination_mode=variant)
        deviations = [np.abs(Degrader("illumination", s, seed, options=options).apply_image(image, 0).astype(int)
                             - image) for s in SEVERITIES]
        for lower, higher in zip(deviations, deviations[1:]):
            assert np.all(higher >= lower), variant


@settings(max_examples=40, deadline=None)
@given(images, seeds, st.booleans(), st.sampled_from(OCCLUSION_KINDS))
def test_occlusion_is_nested_and_grows_with_severity(image, seed, with_targets, kind):
    height, width = image.shape[:2]
    targets = (np.array([[0, 0, width / 2, height / 2], [width / 3, height / 4, width, height]])
               if with_targets else None)
    masks = [Degrader(kind, s, seed).occluder_mask(image.shape, targets) for s in SEVERITIES]
    for lower, higher in zip(masks, masks[1:]):
        assert np.all(higher[lower]) and higher.sum() >= lower.sum()
    assert masks[-1].sum() > 0
    for severity, mask in zip(SEVERITIES, masks):
        changed = np.any(Degrader(kind, severity, seed).apply_image(image, 0, targets) != image, axis=2)
        assert not np.any(changed & ~mask)


@pytest.mark.parametrize("kind, severity, expected", [
    ("blur", 3, {"gaussian_sigma_px": 2.0, "motion_sigma_px": 3.5, "reference_size_px": 480.0}),
    ("occlusion", 5, {"area_ratio": 0.5}),
    ("occlusion_flat", 5, {"area_ratio": 0.5}),
    ("low_resolution", 1, {"scale": 0.5}),
    ("frame_drop", 4, {"affected_rate": 0.45, "repeat_share": 0.5}),
    ("detection_noise", 2, {"box_jitter": 0.04, "miss_rate": 0.1, "false_per_frame": 0.1, "track_break_rate": 0.01}),
    ("none", 0, {}),
])
def test_parameters_are_the_table_row(kind, severity, expected):
    assert Degrader(kind, severity, seed=4).parameters() == expected


@pytest.mark.parametrize("seed, expected", [(0, {"low_light_gain": 0.32}), (1, {"overexposure_gain": 1.9}),
                                            (2, {"contrast_factor": 0.33}), (5, {"contrast_factor": 0.33})])
def test_illumination_reports_the_column_of_the_variant_it_applies(seed, expected):
    assert Degrader("illumination", 3, seed).parameters() == expected


def test_bad_settings_are_refused_naming_the_field():
    with pytest.raises(ValueError, match="kind must be one of"):
        Degrader("fog", 1)
    with pytest.raises(ValueError, match="severity must lie in 0..5"):
        Degrader("blur", 6)
    with pytest.raises(ValueError, match="severity must be an integer"):
        Degrader("blur", 2.5)
    with pytest.raises(ValueError, match="severity must be 0 for kind 'none'"):
        Degrader("none", 1)
    with pytest.raises(ValueError, match="seed must be an integer"):
        Degrader("blur", 1, seed=-1)
    with pytest.raises(ValueError, match="frame_index must be an integer"):
        Degrader("blur", 1).apply_image(np.zeros((8, 8, 3), np.uint8), 1.5)
    with pytest.raises(ValueError, match="dtype uint8"):
        Degrader("blur", 1).apply_image(np.zeros((8, 8, 3), np.float32), 0)
    with pytest.raises(ValueError, match="H x W x 3"):
        Degrader("blur", 1).apply_image(np.zeros((8, 8, 4), np.uint8), 0)
    with pytest.raises(ValueError, match="image_shape"):
        Degrader("detection_noise", 1).apply_entities([], 0, (5,))


def test_non_image_kinds_pass_pixels_through_and_image_kinds_pass_entities_through():
    image = np.random.default_rng(0).integers(0, 256, (20, 30, 3), dtype=np.uint8)
    entities = [Entity(1, "cube", "manipulated_object", [2, 2, 10, 10])]
    for kind in ("frame_drop", "detection_noise"):
        np.testing.assert_array_equal(Degrader(kind, 5, 1).apply_image(image, 3), image)
    for kind in IMAGE_KINDS + ("frame_drop",):
        assert Degrader(kind, 5, 1).apply_entities(entities, 3, image.shape) == entities
