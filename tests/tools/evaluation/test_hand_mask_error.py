"""The hand-mask error model: exact masks made as coarse as a landmark detector's (tools/evaluation)."""
import numpy as np
import pytest

from predrel_ros.tools.evaluation.hand_mask_error import HandMaskError, HandMaskErrorConfig

OFF = dict(lag_frames=0, polygon_px=0, max_grow_px=0, max_shift_px=0)


def hand(x1=40, y1=30, x2=60, y2=70) -> np.ndarray:
    mask = np.zeros((100, 120), bool)
    mask[y1:y2, x1:x2] = True
    return mask


def test_with_every_error_off_the_mask_is_the_exact_one():
    exact = hand()
    assert np.array_equal(HandMaskError(HandMaskErrorConfig(**OFF))(exact, np.random.default_rng(0)), exact)


def test_the_mask_is_a_frame_late():
    model, rng = HandMaskError(HandMaskErrorConfig(**{**OFF, "lag_frames": 1})), np.random.default_rng(0)
    first, second = hand(), hand(50, 30, 70, 70)
    assert np.array_equal(model(first, rng), first)  # nothing older yet
    assert np.array_equal(model(second, rng), first)
    model.reset()
    assert np.array_equal(model(second, rng), second)


@pytest.mark.parametrize("seed", range(8))
def test_grown_or_shrunk_by_one_to_three_pixels(seed):
    exact = hand()
    coarse = HandMaskError(HandMaskErrorConfig(**{**OFF, "max_grow_px": 3}))(exact, np.random.default_rng(seed))
    rows, cols = np.flatnonzero(coarse.any(axis=1)), np.flatnonzero(coarse.any(axis=0))
    change = (exact.any(axis=0).sum() - (cols[-1] - cols[0] + 1)) / 2, (40 - (rows[-1] - rows[0] + 1)) / 2
    assert change[0] == change[1] and 1 <= abs(change[0]) <= 3


def test_shifted_by_one_to_three_pixels_and_the_same_for_the_same_seed():
    exact = hand()
    model = HandMaskError(HandMaskErrorConfig(**{**OFF, "max_shift_px": 3}))
    shifts = set()
    for seed in range(20):
        coarse = model(exact, np.random.default_rng(seed))
        assert coarse.sum() == exact.sum() and np.array_equal(coarse, model(exact, np.random.default_rng(seed)))
        dy, dx = np.argwhere(coarse)[0] - np.argwhere(exact)[0]
        assert 1 <= max(abs(dx), abs(dy)) <= 3 and np.hypot(dx, dy) <= 3 * np.sqrt(2)
        shifts.add((int(dx), int(dy)))
    assert len(shifts) > 5  # in every direction


def test_the_polygon_fills_the_holes_and_keeps_close_to_the_outline():
    exact = hand()
    exact[45:50, 48:52] = False  # a hole: a landmark hull has none
    coarse = HandMaskError(HandMaskErrorConfig(**{**OFF, "polygon_px": 2}))(exact, np.random.default_rng(0))
    assert coarse[45:50, 48:52].all() and abs(int(coarse.sum()) - 800) <= 80


def test_defaults_change_the_mask_but_keep_it_near():
    exact = hand()
    model, rng = HandMaskError(), np.random.default_rng(3)
    model(exact, rng)
    coarse = model(exact, rng)
    overlap = (coarse & exact).sum() / (coarse | exact).sum()
    assert not np.array_equal(coarse, exact) and 0.4 < overlap < 1


@pytest.mark.parametrize("field,value", [("lag_frames", -1), ("polygon_px", -0.5), ("max_grow_px", -1),
                                         ("max_shift_px", -2)])
def test_config_refuses_negative_values(field, value):
    with pytest.raises(ValueError, match=field):
        HandMaskErrorConfig(**{field: value})
