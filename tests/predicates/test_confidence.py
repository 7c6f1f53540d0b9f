import math
from collections import deque

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from predrel_ros.predicates.confidence import (
    AgreementSamples,
    CalibratedConfidence,
    GeometricMeanConfidence,
    agreement_samples,
    fit_geometric_weights,
    fit_logistic,
    q_tmp,
)
from predrel_ros.predicates.config import ConfidenceConfig, Threshold
from predrel_ros.predicates.estimate import PredicateEstimate, match_references


def test_factors_by_hand():
    assert Threshold(3.0, 4.0).margin(5.0) == pytest.approx(0.5)    # q_sp = |5 - 3| / 4
    assert Threshold(3.0, 1.0).margin(1.0) == 1.0                   # capped at 1
    assert Threshold(3.0, 2.0).margin(3.0) == 0.0                   # on the threshold
    assert q_tmp([1, 1, 0, 1, -1], 1) == pytest.approx(3 / 5)
    assert q_tmp(deque([-1]), -1) == 1.0
    with pytest.raises(ValueError, match="eta"):
        Threshold(1.0, 0.0)
    with pytest.raises(ValueError, match="window"):
        q_tmp([], 1)


def test_geometric_mean_by_hand():
    weights = {"contact": {"det": 1, "seg": 1, "trk": 0, "vis": 0, "sp": 2, "tmp": 0}}
    g = GeometricMeanConfidence(weights)
    # (0.5^1 * 0.8^1 * 0.25^2)^(1/4) ; trk/vis/tmp ignored (weight 0), even at 0
    assert g("contact", (0.5, 0.8, 0.0, 0.0, 0.25, 0.0)) == pytest.approx((0.5 * 0.8 * 0.25 ** 2) ** 0.25)
    assert g("contact", (0.0, 1, 1, 1, 1, 1)) == 0.0
    with pytest.raises(ValueError, match="no confidence weights"):
        g("static", (1,) * 6)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=6, max_size=6))
def test_default_confidence_is_bounded_by_its_factors(factors):
    g = GeometricMeanConfidence(ConfidenceConfig().weights)
    for name in ("contact", "static", "dynamic", "grasp"):
        value = g(name, factors)
        assert min(factors) - 1e-12 <= value <= max(factors) + 1e-12


def test_logistic_fit_recovers_a_known_model_and_round_trips(tmp_path):
    rng = np.random.default_rng(0)
    factors = rng.uniform(0, 1, size=(4000, 6))
    truth = np.array([-3.0, 0.0, 0.0, 0.0, 1.0, 4.0, 0.5])
    probability = 1 / (1 + np.exp(-(truth[0] + factors @ truth[1:])))
    correct = rng.uniform(size=4000) < probability
    beta = fit_logistic(factors, correct, l2=0.0)
    np.testing.assert_allclose(beta, truth, atol=0.45)
    model = CalibratedConfidence.fit({"contact": AgreementSamples(factors, np.zeros(4000), correct)})
    z = (0.9, 0.9, 0.9, 0.9, 0.9, 0.9)
    expected = 1 / (1 + math.exp(-(model.coefficients["contact"][0] + 0.9 * model.coefficients["contact"][1:].sum())))
    assert model("contact", z) == pytest.approx(expected)
    for suffix in (".json", ".yaml"):
        path = model.save(tmp_path / f"calibrated{suffix}")
        again = CalibratedConfidence.load(path)
        assert again("contact", z) == pytest.approx(model("contact", z))
    with pytest.raises(ValueError, match="no coefficients"):
        model("static", z)
    fallback = GeometricMeanConfidence(ConfidenceConfig().weights)
    assert CalibratedConfidence.load(path, fallback)("static", z) == pytest.approx(0.9)


def test_calibrated_confidence_refuses_bad_files(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "other"}')
    with pytest.raises(ValueError, match="expected format"):
        CalibratedConfidence.load(bad)
    with pytest.raises(ValueError, match="cannot read"):
        CalibratedConfidence.load(tmp_path / "missing.json")
    with pytest.raises(ValueError, match="7 finite coefficients"):
        CalibratedConfidence({"contact": [1, 2]})


def test_fit_skips_predicates_without_both_outcomes():
    factors = np.full((30, 6), 0.5)
    model = CalibratedConfidence.fit({"contact": AgreementSamples(factors, np.zeros(30), np.ones(30, bool))})
    assert model.coefficients == {}


def test_geometric_weights_favour_the_informative_factor():
    rng = np.random.default_rng(1)
    informative = rng.uniform(0.05, 1, 3000)
    noise = rng.uniform(0.05, 1, size=(3000, 5))
    factors = np.column_stack([noise[:, :4], informative, noise[:, 4]])    # sp is informative
    correct = rng.uniform(size=3000) < informative
    weights = fit_geometric_weights(factors, correct)
    assert sum(weights.values()) == pytest.approx(1.0)
    assert max(weights, key=weights.get) == "sp"


def test_agreement_samples_match_references_in_either_orientation():
    estimates = [PredicateEstimate("contact", 1, 2, "T", 0.9, frame_index=0),
                 PredicateEstimate("contact", 1, 2, "UNK", 0.1, frame_index=1),
                 PredicateEstimate("static", 1, 2, "Ab", 0.7, frame_index=0),
                 PredicateEstimate("static", 1, 2, "Ab", 0.7, frame_index=1)]
    references = [PredicateEstimate("contact", 2, 1, "T", frame_index=0),
                  PredicateEstimate("contact", 2, 1, "N", frame_index=1),
                  PredicateEstimate("static", 2, 1, "Be", frame_index=0),      # other orientation: no match
                  PredicateEstimate("static", 1, 2, "UNK", frame_index=1)]
    samples = agreement_samples(match_references(estimates, references))
    assert set(samples) == {"contact"}
    assert samples["contact"].correct.tolist() == [True, False]
    assert samples["contact"].confidence.tolist() == [0.9, 0.1]
    assert samples["contact"].factors.shape == (2, 6)


_factor = st.floats(0.0, 1.0) | st.sampled_from([0.0, 1.0, 1e-300])


@settings(max_examples=50, deadline=None)
@given(rows=st.lists(st.tuples(st.sampled_from(["contact", "static", "dynamic", "grasp", "active_hand"]),
                               st.lists(_factor, min_size=6, max_size=6)), min_size=1, max_size=20))
def test_confidences_of_rows_equal_one_call_per_row(rows):
    """The models' array form (the extractor's) gives each row's `__call__` value (to an ulp: numpy's
    log and exp against math's)."""
    from predrel_ros.predicates.confidence import confidences

    weights = ConfidenceConfig().weights
    weights["grasp"] = dict(weights["grasp"], seg=0.0)            # a factor without weight is ignored, even at 0
    geometric = GeometricMeanConfidence(weights)
    calibrated = CalibratedConfidence({"contact": [0.3, 1.0, -2.0, 0.5, 0.1, 3.0, -1.0]}, fallback=geometric)
    names = [name for name, _ in rows]
    factors = np.array([values for _, values in rows], np.float64)
    for model in (geometric, calibrated, lambda name, z: geometric(name, z)):      # the last: a plain callable
        got = confidences(model, names, factors)
        expected = [model(name, values) for name, values in rows]
        assert got.tolist() == pytest.approx(expected, rel=1e-15, abs=1e-300)


def test_confidences_refuse_an_unknown_predicate():
    from predrel_ros.predicates.confidence import confidences

    with pytest.raises(ValueError, match="nope"):
        confidences(GeometricMeanConfidence(ConfidenceConfig().weights), ["nope"], np.ones((1, 6)))
    with pytest.raises(ValueError, match="nope"):
        confidences(CalibratedConfidence({}), ["nope"], np.ones((1, 6)))
