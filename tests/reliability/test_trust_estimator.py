import functools
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from predrel_ros.reliability.evidence_profile import EvidenceProfile
from predrel_ros.reliability.trust import ERROR, OK, WARN
from predrel_ros.reliability.trust_estimator import (
    GROUP_SIGNALS,
    INPUTS,
    MODEL_DEVIATIONS,
    GroupModel,
    TrustModel,
    deficit,
    delivered_factor,
    logistic_fit,
)
from predrel_ros.reliability.trust_evidence import FEATURES

BIRTHS = INPUTS.index("unexplained_birth_rate")
CONFIDENCE = INPUTS.index("confidence")
HANDS_DEFICIT = INPUTS.index("hands_deficit")


@settings(max_examples=50, deadline=None)
@given(share=st.one_of(st.floats(-1.0, 2.0), st.just(math.nan)))
def test_one_windows_delivered_factor_is_the_arrays(share):
    one = delivered_factor(share)
    assert isinstance(one, float) and 0.0 <= one <= 1.0
    assert one == float(delivered_factor(np.array([share]))[0])
    assert (one == 1.0) if math.isnan(share) else one == min(max(share, 0.0), 1.0)


def test_logistic_fit_recovers_the_weights_of_soft_labels():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4000, 3))
    y = 1.0 / (1.0 + np.exp(-(x @ np.array([1.5, -2.0, 0.0]) + 0.5)))
    weights, bias = logistic_fit(x, y, l2=0.0)
    assert weights == pytest.approx([1.5, -2.0, 0.0], abs=1e-4) and bias == pytest.approx(0.5, abs=1e-4)
    shrunk, _ = logistic_fit(x, y, l2=0.1)
    assert np.abs(shrunk).sum() < np.abs(weights).sum()
    with pytest.raises(ValueError, match="logistic_fit"):
        logistic_fit(np.zeros((0, 3)), np.zeros(0))


def clean_profile():
    window = dict.fromkeys(FEATURES, math.nan)
    window.update(unexplained_birth_rate=0.0, count=4.0)
    return EvidenceProfile.fit([window] * 10)


def synthetic(rng, count, clean):
    """Rows whose true agreement falls with the unexplained birth rate and rises with the confidence."""
    rows = np.full((count, len(INPUTS)), np.nan)
    rows[:, CONFIDENCE] = rng.uniform(0.6, 0.9, count)
    rows[:, INPUTS.index("tpc_s")] = 0.95
    rows[:, INPUTS.index("unk_rate")] = 0.05
    rows[:, BIRTHS] = 0.0 if clean else rng.uniform(0.0, 5.0, count)
    truth = 1.0 / (1.0 + np.exp(-(2.0 + 2.0 * (rows[:, CONFIDENCE] - 0.75) - 1.2 * rows[:, BIRTHS])))
    return rows, truth, np.full(count, clean)


@functools.lru_cache(maxsize=1)
def fitted():
    """(Cached: tests do not change it.)"""
    rng = np.random.default_rng(1)
    parts = [synthetic(rng, 500, True), synthetic(rng, 1500, False)]
    rows, truth, clean = (np.concatenate(p) for p in zip(*parts))
    return TrustModel.fit(clean_profile(), {"contact": (rows, truth, clean)}, window=30, l2=1e-4, error=0.4)


def test_fit_then_assess_gives_calibrated_agreement_levels_and_the_strongest_evidence():
    model = fitted()
    contact = model.groups["contact"]
    assert 0.8 < contact.warn < 0.9 and contact.error == 0.4
    signals = {"contact": {"confidence": 0.75, "tpc_s": 0.95, "unk_rate": 0.05, "violation_rate": math.nan}}
    base, births, confident = (model.filled(model.raw_inputs({**signals["contact"], **change}, deviations)[None, :],
                                            contact.clean)
                               for change, deviations in (({}, {}), ({}, {"unexplained_birth_rate": 2.0}),
                                                          ({"confidence": 0.85}, {})))
    assert contact.terms(births)[0, BIRTHS] < contact.terms(base)[0, BIRTHS]
    assert contact.terms(confident)[0, CONFIDENCE] > contact.terms(base)[0, CONFIDENCE]
    clean = model.assess(signals, {"unexplained_birth_rate": 0.0, "count": 4.0})["contact"]
    assert clean.level == OK and clean.reason == "" and clean.expected == pytest.approx(0.88, abs=0.02)
    # 1 unexplained birth per 30 frames: 1.67 clean ranges (min_spread 0.02) above clean
    births = model.assess(signals, {"unexplained_birth_rate": 1 / 30, "count": 4.0})["contact"]
    assert births.level == WARN and births.expected == pytest.approx(0.5, abs=0.03)
    assert "unexplained_birth_rate +1.67" in births.reason and births.reason.startswith("expected agreement 0.5")
    # far outside the clean range: clipped at 5 ranges, ERROR
    assert model.assess(signals, {"unexplained_birth_rate": 9.0})["contact"].level == ERROR
    assert model.assess({"static": signals["contact"]}, {}) == {}      # no model for the group


def test_round_trip_through_json_and_format_checks():
    model = fitted()
    again = TrustModel.from_dict(json.loads(json.dumps(model.to_dict())))
    signals = {"contact": {"confidence": 0.7, "tpc_s": 0.9, "unk_rate": 0.1}}
    features = {"unexplained_birth_rate": 0.05}
    assert again.assess(signals, features)["contact"].expected == \
        pytest.approx(model.assess(signals, features)["contact"].expected, abs=1e-5)
    with pytest.raises(ValueError, match="format"):
        TrustModel.from_dict({"format": "x"})
    with pytest.raises(ValueError, match="inputs"):
        TrustModel.from_dict({**model.to_dict(), "inputs": list(GROUP_SIGNALS)})


def test_fitting_needs_clean_windows_and_matching_rows():
    rows, truth, clean = synthetic(np.random.default_rng(2), 20, False)
    with pytest.raises(ValueError, match="no clean window"):
        TrustModel.fit(clean_profile(), {"contact": (rows, truth, clean)}, window=30)
    with pytest.raises(ValueError, match="must match"):
        TrustModel.fit(clean_profile(), {"contact": (rows, truth[:5], clean)}, window=30)


def test_weights_held_to_their_signs():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(3000, 3))
    y = 1.0 / (1.0 + np.exp(-(x @ np.array([1.0, 0.8, -0.5]))))
    weights, _ = logistic_fit(x, y, l2=0.0, signs=np.array([1.0, -1.0, -1.0]))
    assert weights[1] == 0.0 and weights[0] > 0.5 and weights[2] < -0.2
    with pytest.raises(ValueError, match="signs"):
        logistic_fit(x, y, signs=np.array([1.0]))


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(MODEL_DEVIATIONS), st.floats(-20, 20), st.floats(-20, 20))
def test_the_expected_agreement_never_rises_away_from_clean(name, a, b):
    model = fitted()
    signals = {"contact": {"confidence": 0.75, "tpc_s": 0.95, "unk_rate": 0.05}}
    near, far = sorted((a, b), key=abs)
    x_near, x_far = (model.filled(model.raw_inputs(signals["contact"], {name: value})[None, :],
                                  model.groups["contact"].clean) for value in (near, far))
    group = model.groups["contact"]
    assert group.expected(x_far)[0] <= group.expected(x_near)[0] + 1e-12


def test_ramps_fit_an_effect_that_saturates_which_one_weight_per_input_cannot():
    """Agreement that falls with the first unexplained births and then stays (the scene is lost):
    the piecewise model follows it, the linear one (segments=1) cannot."""
    rng = np.random.default_rng(4)
    rows, _, clean = synthetic(rng, 3000, False)
    rows[:500, BIRTHS], clean[:500] = 0.0, True
    truth = 1.0 / (1.0 + np.exp(-(2.0 - 3.0 * np.minimum(rows[:, BIRTHS], 1.0))))
    errors = {}
    for segments in (1, 4):
        model = TrustModel.fit(clean_profile(), {"contact": (rows, truth, clean)}, window=30, l2=1e-5,
                               segments=segments)
        group = model.groups["contact"]
        errors[segments] = np.abs(group.expected(model.filled(rows.copy(), group.clean)) - truth).mean()
    assert errors[4] < 0.04 and errors[1] > 3 * errors[4]     # measured: 0.026 and 0.130
    with pytest.raises(ValueError, match="segments"):
        TrustModel.fit(clean_profile(), {"contact": (rows, truth, clean)}, window=30, segments=0)


@settings(max_examples=60, deadline=None)
@given(st.floats(0.0, 1.0), st.floats(0.0, 1.0))
def test_the_expected_agreement_never_falls_with_the_confidence(a, b):
    model = fitted()
    group = model.groups["contact"]
    low, high = (model.filled(model.raw_inputs({"confidence": value, "tpc_s": 0.95, "unk_rate": 0.05}, {})[None, :],
                              group.clean) for value in sorted((a, b)))
    assert group.expected(low)[0] <= group.expected(high)[0] + 1e-12


def test_a_group_model_checks_its_knots_and_weights():
    group = fitted().groups["contact"]
    risk = (group.risk_weights, 0.0, 0.5)
    with pytest.raises(ValueError, match="ascending"):
        GroupModel([np.array([1.0, 0.5])] + group.knots[1:], group.weights, 0.0, group.clean, 0.5, 0.4, *risk)
    with pytest.raises(ValueError, match="ramps need as many weights"):
        GroupModel(group.knots, group.weights[:-1], 0.0, group.clean, 0.5, 0.4, *risk)
    with pytest.raises(ValueError, match="each of the"):
        GroupModel(group.knots[:-1], group.weights, 0.0, group.clean, 0.5, 0.4, *risk)
    with pytest.raises(ValueError, match="risk weights"):
        GroupModel(group.knots, group.weights, 0.0, group.clean, 0.5, 0.4, group.weights, 0.0, 0.5)


def test_the_risk_flags_evidence_that_ruins_some_windows_though_the_expected_agreement_stays_up():
    """Windows with unexplained births fail (true agreement 0.3) one time in five and agree better
    than clean ones (0.95) otherwise: their mean agreement (0.82) is above the clean windows' 0.8,
    so the expected agreement cannot flag them; the risk model sees that they fail and clean ones
    never do, and WARNs, naming the risk."""
    rng = np.random.default_rng(7)
    rows, _, clean = synthetic(rng, 4000, False)
    rows[:, CONFIDENCE] = 0.75
    rows[:1000, BIRTHS], clean[:1000] = 0.0, True
    rows[1000:, BIRTHS] = 1.0
    truth = np.where(clean, 0.8, np.where(rng.random(len(rows)) < 0.2, 0.3, 0.95))
    model = TrustModel.fit(clean_profile(), {"contact": (rows, truth, clean)}, window=30, l2=1e-6)
    group = model.groups["contact"]
    x = model.filled(rows.copy(), group.clean)
    risk = group.risk(x, np.ones(len(x)))
    assert risk[1000:].mean() == pytest.approx(0.2, abs=0.03) and risk[:1000].max() < 0.01
    assert risk[1000:].min() > group.risk_warn and group.expected(x[1000:]).min() >= group.warn
    signals = {"contact": {"confidence": 0.75, "tpc_s": 0.95, "unk_rate": 0.05}}
    births = model.assess(signals, {"unexplained_birth_rate": 1.0, "count": 4.0})["contact"]
    assert births.level == WARN and births.reason.startswith("risk of agreement < 0.6 0.2")
    assert model.assess(signals, {"unexplained_birth_rate": 0.0, "count": 4.0})["contact"].level == OK


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(MODEL_DEVIATIONS), st.floats(-20, 20), st.floats(-20, 20), st.floats(0, 1), st.floats(0, 1))
def test_the_risk_never_falls_away_from_clean_nor_as_fewer_frames_arrive(name, a, b, share_a, share_b):
    model = fitted()
    group = model.groups["contact"]
    signals = {"contact": {"confidence": 0.75, "tpc_s": 0.95, "unk_rate": 0.05}}
    near, far = sorted((a, b), key=abs)
    fewer, more = sorted((share_a, share_b))
    x_near, x_far = (model.filled(model.raw_inputs(signals["contact"], {name: value})[None, :], group.clean)
                     for value in (near, far))
    assert group.risk(x_far, np.array([more]))[0] >= group.risk(x_near, np.array([more]))[0] - 1e-12
    assert group.risk(x_near, np.array([fewer]))[0] >= group.risk(x_near, np.array([more]))[0] - 1e-12


def test_the_expected_agreement_is_scaled_by_the_delivered_share_and_fitted_on_the_delivered_frames():
    """A window whose stream delivered half its frames agrees at most half as often (a dropped frame
    disagrees everywhere): the model's output is scaled by the delivered share, known and not learnt,
    and fitted to the agreement on the delivered frames; a low share is named first in the reason."""
    rng = np.random.default_rng(5)
    rows, truth, clean = synthetic(rng, 2000, False)
    rows[:500, BIRTHS], clean[:500] = 0.0, True
    truth = 1.0 / (1.0 + np.exp(-(2.0 + 2.0 * (rows[:, CONFIDENCE] - 0.75) - 1.2 * rows[:, BIRTHS])))
    delivered = np.where(np.arange(len(rows)) % 2 == 0, 1.0, rng.uniform(0.3, 1.0, len(rows)))
    delivered[clean] = 1.0
    model = TrustModel.fit(clean_profile(), {"contact": (rows, truth * delivered, clean, delivered)}, window=30,
                           l2=1e-6)
    signals = {"contact": {"confidence": 0.75, "tpc_s": 0.95, "unk_rate": 0.05}}
    full = model.assess(signals, {"unexplained_birth_rate": 0.0, "delivered_share": 1.0})["contact"]
    half = model.assess(signals, {"unexplained_birth_rate": 0.0, "delivered_share": 0.5})["contact"]
    unknown = model.assess(signals, {"unexplained_birth_rate": 0.0})["contact"]
    assert full.expected == pytest.approx(1.0 / (1.0 + math.exp(-2.0)), abs=0.01) == unknown.expected
    assert half.expected == pytest.approx(full.expected / 2, abs=1e-9)
    assert half.level == WARN and "delivered_share 0.50" in half.reason.split(": ", 1)[1].split(",")[0]
    with pytest.raises(ValueError, match="delivered shares must match"):
        TrustModel.fit(clean_profile(), {"contact": (rows, truth, clean, delivered[:3])}, window=30)


@functools.lru_cache(maxsize=1)
def fitted_on_hands():
    """A model whose true agreement falls as the hands seen fall below the clean scenes' 1-2 (cached)."""
    window = dict.fromkeys(FEATURES, math.nan)
    profile = EvidenceProfile.fit([{**window, "hands": 1.0 + i % 2} for i in range(10)])
    rng = np.random.default_rng(6)
    rows, _, clean = synthetic(rng, 2000, False)
    rows[:, BIRTHS] = 0.0
    rows[:, HANDS_DEFICIT] = rng.uniform(0.0, 1.0, len(rows))
    rows[:500, HANDS_DEFICIT], clean[:500] = 0.0, True
    truth = 1.0 / (1.0 + np.exp(-(2.0 - 3.0 * rows[:, HANDS_DEFICIT])))
    return TrustModel.fit(profile, {"contact": (rows, truth, clean)}, window=30, l2=1e-6)


def test_fewer_hands_than_the_clean_scenes_lower_the_expected_agreement_more_do_not():
    """The hands enter as their deficit below the clean range only: a hand hidden by an occluder is
    evidence, a second hand in a scene whose clean runs showed one is another scene."""
    model = fitted_on_hands()
    signals = {"contact": {"confidence": 0.75, "tpc_s": 0.95, "unk_rate": 0.05}}
    expected = {hands: model.assess(signals, {"hands": hands})["contact"] for hands in (0.0, 0.5, 1.5, 4.0)}
    clean = 1.0 / (1.0 + math.exp(-2.0))
    assert expected[1.5].expected == pytest.approx(clean, abs=0.01) == expected[4.0].expected
    assert expected[4.0].level == OK and model.assess(signals, {})["contact"].expected == expected[1.5].expected
    assert expected[0.5].expected == pytest.approx(1.0 / (1.0 + math.exp(-0.5)), abs=0.01)
    assert expected[0.0].expected == pytest.approx(1.0 / (1.0 + math.exp(1.0)), abs=0.01)
    assert expected[0.0].level == ERROR and "hands_deficit 1.00" in expected[0.0].reason
    assert deficit(-0.5) == 0.5 and deficit(0.0) == 0.0 == deficit(2.0) and math.isnan(deficit(math.nan))


@settings(max_examples=60, deadline=None)
@given(st.floats(-20, 20), st.floats(-20, 20))
def test_the_expected_agreement_never_rises_as_the_hands_fall(a, b):
    model = fitted_on_hands()
    group = model.groups["contact"]
    signals = {"confidence": 0.75, "tpc_s": 0.95, "unk_rate": 0.05}
    fewer, more = (model.filled(model.raw_inputs(signals, {"hands": value})[None, :], group.clean)
                   for value in sorted((a, b)))
    assert group.expected(fewer)[0] <= group.expected(more)[0] + 1e-12


def one_group_at_a_time(model, group_signals, features):
    """The assessment group by group through `GroupModel`, as `TrustModel.assess` computed it before
    it took all groups in one array pass: the reference the one pass must equal."""
    deviations = model.profile.deviations(features)
    share = features.get("delivered_share", math.nan)
    delivered = 1.0 if math.isnan(share) else min(max(share, 0.0), 1.0)
    result = {}
    for name, signals in group_signals.items():
        group = model.groups.get(name)
        if group is None:
            continue
        x = model.filled(model.raw_inputs(signals, deviations)[None, :], group.clean)
        expected = delivered * float(group.expected(x)[0])
        risk = float(group.risk(x, np.array([delivered]))[0])
        level = ERROR if expected < group.error else WARN if expected < group.warn or risk > group.risk_warn else OK
        reason = ""
        if level != OK:
            pull = (group.terms(x) - group.terms(group.clean[None, :]))[0]
            strongest = [f"{INPUTS[i]} {x[0, i]:+.2f}" if INPUTS[i] in MODEL_DEVIATIONS and INPUTS[i] != "score_shift"
                         else f"{INPUTS[i]} {x[0, i]:.2f}" for i in np.argsort(pull) if pull[i] < 0][:2]
            lost = [f"delivered_share {delivered:.2f}"] if delivered < 0.9 else []
            if level == ERROR or expected < group.warn:
                bound = group.error if level == ERROR else group.warn
                judged = f"expected agreement {expected:.2f} < {bound:.2f} ({level.lower()})"
            else:
                judged = f"risk of agreement < 0.6 {risk:.2f} > {group.risk_warn:.2f} (warn)"
            reason = f"{judged}: " + ", ".join((lost + (strongest or ["no single input stands out"]))[:2])
        result[name] = (expected, level, reason)
    return result


@functools.lru_cache(maxsize=1)
def shipped():
    from predrel_ros.reliability.trust_estimator import DEFAULT_TRUST_MODEL_FILE
    return TrustModel.load(DEFAULT_TRUST_MODEL_FILE)


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.floats(0.0, 1.0), st.booleans())
def test_all_groups_in_one_pass_equal_the_groups_one_at_a_time(seed, missing, every_group):
    model = shipped()
    rng = np.random.default_rng(seed)
    profile = model.profile
    features = {}
    for name in FEATURES:
        if rng.random() >= missing * 0.5:          # some features undefined (NaN or absent)
            low, high = profile.low[name], profile.high[name]
            centre, width = (0.0, 1.0) if math.isnan(low) else ((low + high) / 2, max(high - low, 0.05))
            features[name] = float(centre + width * rng.normal(0.0, 2.0)) if rng.random() > 0.1 else math.nan
    groups = [*model.groups, "not_modelled"]
    chosen = groups if every_group else [g for g in groups if rng.random() < 0.5]
    signals = {name: {signal: float(rng.uniform(-0.2, 1.2)) for signal in GROUP_SIGNALS if rng.random() > 0.1}
               for name in reversed(chosen)}
    assessed = model.assess(signals, features)
    reference = one_group_at_a_time(model, signals, features)
    assert list(assessed) == list(reference)
    for name, (expected, level, reason) in reference.items():
        assert assessed[name].expected == pytest.approx(expected, abs=1e-12)
        assert (assessed[name].level, assessed[name].reason) == (level, reason)
