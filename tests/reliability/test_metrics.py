import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from predrel_ros.reliability.metrics import (
    UNK,
    ReliabilityProfile,
    cws,
    dis_accuracy,
    dis_prob,
    pds,
    prs,
    reliability_profile,
    tpc,
    tpc_s,
    transitions,
    unk_summary,
)

# ----------------------------------------------------------------------------- hand-computed values


def test_prs_categorical_by_hand():
    # frame 3 has an UNK reference: excluded; frame 2 is a degraded UNK against T: disagreement
    y_deg = [1, 0, UNK, 1, 1]
    y_ref = [1, 1, 1, UNK, 1]
    conf = [0.8, 0.9, 0.7, 0.6, 0.5]
    # valid frames 0, 1, 2, 4: terms 0.8, 0, 0, 0.5 -> 1.3 / 4
    assert prs(y_deg, y_ref, conf) == pytest.approx(1.3 / 4)


def test_prs_continuous_by_hand():
    y_deg = [0.0, 2.0, 5.0, UNK]
    y_ref = [1.0, 2.0, 1.0, 3.0]
    conf = [1.0, 0.5, 1.0, 1.0]
    # alpha 2: (1 - 1/2) * 1, (1 - 0) * 0.5, (1 - 4/2)_+ = 0, UNK -> 0 ; mean over 4
    assert prs(y_deg, y_ref, conf, alpha=2.0) == pytest.approx((0.5 + 0.5 + 0 + 0) / 4)


def test_prs_nan_without_valid_frame_and_input_checks():
    assert math.isnan(prs([1, 0], [UNK, UNK], [1, 1]))
    with pytest.raises(ValueError, match="same number of frames"):
        prs([1], [1, 1], [1])
    with pytest.raises(ValueError, match=r"conf must lie in \[0, 1\]"):
        prs([1], [1], [1.5])
    with pytest.raises(ValueError, match="alpha"):
        prs([1], [1], [1], alpha=0)


def test_pds_both_forms_by_hand():
    scores = {1: 0.9, 2: 0.85, 3: 0.6, 4: 0.55, 5: 0.5}
    assert pds(scores, "endpoint") == pytest.approx((0.9 - 0.5) / (5 - 1))
    assert pds(scores, "mean_step") == pytest.approx((0.05 + 0.25 + 0.05 + 0.05) / 4)
    # uneven severities: endpoint divides by the severity span, mean_step by the number of steps
    uneven = {0.5: 1.0, 2: 0.7, 4: 0.4}
    assert pds(uneven, "endpoint") == pytest.approx(0.6 / 3.5)
    assert pds(uneven, "mean_step") == pytest.approx(0.3)
    with pytest.raises(ValueError, match="two severities"):
        pds({1: 0.5})
    with pytest.raises(ValueError, match="mode"):
        pds(scores, "slope")


def test_tpc_s_by_hand():
    assert tpc_s([0, 0, 1, 1, 0]) == pytest.approx(1 - 2 / 4)
    assert tpc_s([2, UNK, 2]) == pytest.approx(0.0)
    assert tpc_s([3]) == 1.0
    assert math.isnan(tpc_s([]))


def test_tpc_by_hand_matching_spurious_and_missed():
    y_ref = [0, 0, 0, 1, 1, 1, 1, 0, 0, 0]   # transitions (3, 0->1), (7, 1->0)
    y_deg = [0, 0, 0, 0, 1, 1, 0, 1, 1, 1]   # (4, 0->1) matches (3, 0->1); (6, 1->0) matches (7, 1->0)
    #                                          (7, 0->1) spurious
    assert transitions(y_deg) == [(4, 0, 1), (6, 1, 0), (7, 0, 1)]
    assert tpc(y_deg, y_ref, tol=2) == pytest.approx(1 - 1 / 9)
    # tolerance 0: nothing matches -> 3 spurious + 2 missed
    assert tpc(y_deg, y_ref, tol=0) == pytest.approx(1 - 5 / 9)


def test_tpc_one_to_one_earliest_first_and_ignored_unk_transitions():
    # two reference onsets close together; one degraded onset can match only one of them
    y_ref = [0, 1, 0, 1, 1]        # (1, 0->1), (2, 1->0), (3, 0->1)
    y_deg = [0, 0, 1, 1, 1]        # (2, 0->1) matches the earliest (1, 0->1); (2,1->0), (3,0->1) missed
    assert tpc(y_deg, y_ref, tol=2) == pytest.approx(1 - 2 / 4)
    # reference transitions into and out of UNK are not counted as missed
    y_ref_unk = [0, UNK, UNK, 0, 0]
    assert tpc([0, 0, 0, 0, 0], y_ref_unk) == 1.0
    # clipped at 0
    assert tpc([0, 1, 0, 1, 0], [1, 0, 1, 0, 1], tol=0) == 0.0


def test_cws_by_hand():
    c_deg = [0.8, 0.5, 1.0]
    c_ref = [1.0, 0.5, 0.0]
    assert cws(c_deg, c_ref) == pytest.approx((0.8 * 0.8 + 0.5 * 1.0 + 1.0 * 0.0) / 3)


def test_dis_both_forms_by_hand():
    assert dis_accuracy(0.92, 0.71) == pytest.approx(0.21)
    assert dis_prob([0.9, 0.8, 0.5], [0.6, 0.8, 0.9]) == pytest.approx((0.3 + 0.0 + 0.4) / 3)
    with pytest.raises(ValueError, match="finite"):
        dis_accuracy(float("nan"), 0.5)
    with pytest.raises(ValueError, match="p_degraded_without_k"):
        dis_prob([0.5], [1.5])


def test_unk_summary():
    summary = unk_summary([UNK, 1, UNK, 0], [1, 1, UNK, UNK])
    assert summary == {"reference_unk_rate": 0.5, "degraded_unk_rate": 0.5, "unk_on_known_reference": 0.5}


def test_reliability_profile_assembles_phi():
    y_ref = np.array([0, 0, 1, 1])
    c_ref = np.ones(4)
    y = {1: np.array([0, 0, 1, 1]), 3: np.array([0, 1, 1, 0])}
    c = {1: np.full(4, 0.9), 3: np.full(4, 0.5)}
    profile = reliability_profile(y, c, y_ref, c_ref, dis_by_severity={1: 0.1})
    assert profile[1] == ReliabilityProfile(prs=pytest.approx(0.9), pds=pytest.approx((0.9 - 0.25) / 2),
                                            tpc=1.0, cws=pytest.approx(0.9 * 0.9), dis=pytest.approx(0.1))
    assert profile[3].prs == pytest.approx(0.25)
    assert math.isnan(profile[3].dis)
    assert profile[3].as_array().shape == (5,)


# ------------------------------------------------------------------------------------- properties

codes = st.integers(min_value=-1, max_value=3)


@st.composite
def paired_streams(draw, min_size=1):
    n = draw(st.integers(min_value=min_size, max_value=40))
    y_deg = draw(st.lists(codes, min_size=n, max_size=n))
    y_ref = draw(st.lists(codes, min_size=n, max_size=n))
    conf = draw(st.lists(st.floats(0, 1), min_size=n, max_size=n))
    conf_ref = draw(st.lists(st.floats(0, 1), min_size=n, max_size=n))
    return np.array(y_deg), np.array(y_ref), np.array(conf), np.array(conf_ref)


@settings(max_examples=200, deadline=None)
@given(paired_streams(), st.one_of(st.none(), st.floats(0.1, 5)))
def test_scores_lie_in_unit_interval(streams, alpha):
    y_deg, y_ref, conf, conf_ref = streams
    value = prs(y_deg, y_ref, conf, alpha)
    assert math.isnan(value) or 0.0 <= value <= 1.0
    for value in (tpc_s(y_deg), tpc(y_deg, y_ref), cws(conf, conf_ref), dis_prob(conf, conf_ref)):
        assert 0.0 <= value <= 1.0


@settings(max_examples=200, deadline=None)
@given(paired_streams())
def test_identity_cases(streams):
    y, _, conf, _ = streams
    known = y != UNK
    ones = np.ones(y.size)
    # a stream agrees fully with itself: PRS is the mean confidence over known frames (1 at c = 1)
    if known.any():
        assert prs(y, y, ones) == pytest.approx(1.0)
        assert prs(y, y, conf) == pytest.approx(conf[known].mean())
        assert prs(y, y, ones, alpha=1.0) == pytest.approx(1.0)
    assert tpc(y, y) == 1.0
    assert cws(ones, ones) == 1.0
    assert dis_prob(conf, conf) == 0.0
    assert tpc_s(np.full(y.size, y[0])) == 1.0


@settings(max_examples=300, deadline=None)
@given(st.lists(codes, min_size=1, max_size=40), codes, st.integers(0, 4))
def test_tpc_equals_tpc_s_for_a_constant_reference(y_deg, constant, tol):
    y_deg = np.array(y_deg)
    assert tpc(y_deg, np.full(y_deg.size, constant), tol) == pytest.approx(tpc_s(y_deg))


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.integers(0, 10), st.floats(0, 1), min_size=2, max_size=6))
def test_pds_forms_agree_for_unit_spaced_severities(scores):
    severities = sorted(scores)
    unit = {i: scores[s] for i, s in enumerate(severities)}
    assert pds(unit, "endpoint") == pytest.approx(pds(unit, "mean_step"))
