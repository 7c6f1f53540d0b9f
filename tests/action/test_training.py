"""Fitting: the gradient, class balance, determinism, and learnability on scripted predicate streams."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import check_grad

from predrel_ros.action.encoding import TemporalSpec
from predrel_ros.action.evaluation import evaluate_streams
from predrel_ros.action.synthetic import scripted_streams
from predrel_ros.action.training import (
    Hyperparameters,
    balanced_weights,
    fit_model,
    fit_network,
    labelled_features,
    select_and_fit,
)
from predrel_ros.core.errors import UserError
from predrel_ros.core.frame import PRIMITIVE_LABELS

TEMPORAL = TemporalSpec(lags=(0, 3), recent_max=8, max_hold=2)


def test_balanced_weights_give_every_present_class_the_same_total():
    y = np.array([0, 0, 0, 1, 2, 2])
    weights = balanced_weights(y, 4)
    totals = np.bincount(y, weights=weights, minlength=4)
    np.testing.assert_allclose(totals[:3], [2.0, 2.0, 2.0])
    assert totals[3] == 0 and weights.mean() == pytest.approx(1.0)


@pytest.mark.parametrize("hidden", [0, 3])
def test_fitted_network_separates_a_separable_problem_and_is_deterministic(hidden):
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, size=90)
    x = np.eye(3)[y] + rng.normal(0, 0.05, size=(90, 3))
    first = fit_network(x, y, 3, hidden=hidden, l2=1e-4, seed=7)
    again = fit_network(x, y, 3, hidden=hidden, l2=1e-4, seed=7)
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a.weights, b.weights)
    h = x
    if hidden:
        h = np.tanh(x @ first[0].weights + first[0].bias)
    predicted = (h @ first[-1].weights + first[-1].bias).argmax(axis=1)
    assert (predicted == y).all()


def test_loss_gradient_matches_finite_differences():
    """The analytic gradient that L-BFGS follows, against scipy's finite differences."""
    from scipy import optimize

    from predrel_ros.action import training

    captured = {}

    def spy(fun, x0, jac, method, options):
        captured["fun"] = fun
        captured["x0"] = x0
        return optimize.OptimizeResult(x=x0)
    rng = np.random.default_rng(1)
    x, y = rng.uniform(size=(12, 4)), rng.integers(0, 3, size=12)
    original = training.minimize
    training.minimize = spy
    try:
        fit_network(x, y, 3, hidden=2, l2=0.1, seed=0)
    finally:
        training.minimize = original
    theta = captured["x0"] + rng.normal(0, 0.3, size=captured["x0"].shape)
    error = check_grad(lambda t: captured["fun"](t)[0], lambda t: captured["fun"](t)[1], theta)
    assert error < 1e-5


def test_labelled_features_skip_unlabelled_frames_and_refuse_unknown_primitives():
    stream = scripted_streams(1, seed=3)[0]
    x, y = labelled_features([stream], TEMPORAL, PRIMITIVE_LABELS)
    assert x.shape == (len(stream.frames), 70 * 3) and len(y) == len(stream.frames)
    stream.labels[0] = None
    assert labelled_features([stream], TEMPORAL, PRIMITIVE_LABELS)[0].shape[0] == len(stream.frames) - 1
    stream.labels[1] = "wave"
    with pytest.raises(UserError, match="'wave'"):
        labelled_features([stream], TEMPORAL, PRIMITIVE_LABELS)


def test_learnable_from_scripted_predicate_streams():
    train, val, test = scripted_streams(6, seed=1), scripted_streams(3, seed=2), scripted_streams(6, seed=3)
    grid = [Hyperparameters(TemporalSpec(lags=(0,), recent_max=0, max_hold=0), 0, 1e-3),
            Hyperparameters(TEMPORAL, 0, 1e-3)]
    selection = select_and_fit(train, val, PRIMITIVE_LABELS, grid, seed=0)
    assert len(selection.trials) == 2
    assert selection.best.hyperparameters.temporal == TEMPORAL    # events need the temporal context
    result = evaluate_streams(selection.model, test)
    assert result.accuracy > 0.9 and result.macro_f1 > 0.85
    # the no-confidence variant learns too
    model = fit_model(train, Hyperparameters(TEMPORAL, 0, 1e-3), PRIMITIVE_LABELS, confidence_weighted=False)
    assert not model.confidence_weighted
    assert evaluate_streams(model, test).accuracy > 0.9
