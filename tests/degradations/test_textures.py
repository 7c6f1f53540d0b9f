"""Occluder textures and shapes (degradations/textures.py)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from predrel_ros.degradations.textures import SHAPES, TEXTURES, cut_patch, procedural_texture, shape_mask


@pytest.mark.parametrize("kind", TEXTURES)
def test_textures_are_textured_and_deterministic(kind):
    texture = procedural_texture(np.random.default_rng(4), 40, 60, kind)
    assert texture.shape == (40, 60, 3) and texture.dtype == np.uint8
    assert np.array_equal(texture, procedural_texture(np.random.default_rng(4), 40, 60, kind))
    grey = texture.astype(np.float64).mean(axis=2)
    colours_differ = np.abs(texture.astype(int)[..., 0] - texture[..., 1]).max() > 0
    assert grey.std() > 1.0 or colours_differ  # never one flat colour


@pytest.mark.parametrize("kind", SHAPES)
@pytest.mark.parametrize("size", [(30, 80), (80, 30), (5, 5)])
def test_shapes_fill_part_of_their_box_and_touch_its_sides(kind, size):
    for seed in range(5):
        mask = shape_mask(np.random.default_rng(seed), *size, kind)
        assert mask.shape == size and 0.2 < mask.mean() < 0.95 or size == (5, 5) and mask.any()
        rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
        assert (rows[-1] - rows[0] + 1) >= 0.5 * size[0] and (cols[-1] - cols[0] + 1) >= 0.5 * size[1]


def test_a_patch_is_cut_from_its_source():
    source = np.arange(20 * 30 * 3, dtype=np.uint32).reshape(20, 30, 3).astype(np.uint8)
    patch = cut_patch(source, np.random.default_rng(0), 5, 7)
    found = [(y, x) for y in range(16) for x in range(24) if np.array_equal(source[y:y + 5, x:x + 7], patch)]
    assert found and cut_patch(source, np.random.default_rng(0), 40, 50).shape == (40, 50, 3)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), size=st.tuples(st.integers(2, 12), st.integers(2, 12)))
def test_a_patch_of_the_background_holds_no_object(seed, size):
    background = np.ones((30, 40), bool)
    background[8:22, 10:20] = False          # an object
    source = np.where(background[..., None], 100, 250).astype(np.uint8).repeat(3, axis=2)
    patch = cut_patch(source, np.random.default_rng(seed), *size, allowed=background, min_allowed=1.0)
    if patch is not None:
        assert (patch == 100).all()


def test_a_patch_where_no_place_is_background_enough_is_not_cut():
    allowed = np.indices((20, 20)).sum(axis=0) % 2 == 0      # a checkerboard: half of any 3 x 3 window
    source = np.zeros((20, 20, 3), np.uint8)
    assert cut_patch(source, np.random.default_rng(0), 3, 3, allowed=allowed) is None
    assert cut_patch(source, np.random.default_rng(0), 30, 30, allowed=np.ones((20, 20), bool)) is None
    assert cut_patch(source, np.random.default_rng(0), 1, 1, allowed=np.ones((20, 20), bool)).shape == (1, 1, 3)


def test_unknown_kinds_are_refused():
    with pytest.raises(ValueError, match="texture kind"):
        procedural_texture(np.random.default_rng(0), 4, 4, "plaid")
    with pytest.raises(ValueError, match="shape kind"):
        shape_mask(np.random.default_rng(0), 4, 4, "star")
