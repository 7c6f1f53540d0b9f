import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from predrel_ros.predicates.estimate import PredicateEstimate
from predrel_ros.predicates.logic_rules import LogicMonitor
from predrel_ros.reliability.calibration import calibration_summary
from predrel_ros.reliability.rolling import RollingReliability
from predrel_ros.reliability.trust import (
    CLEAN_TWIN,
    ERROR,
    GROUND_TRUTH,
    OK,
    WARN,
    CleanProfile,
    Limit,
    PredicateBaseline,
    TrustAssessor,
    TrustConfig,
)


def healthy(**changes):
    return {"frames": 30, "tpc_s": 0.97, "confidence": 0.8, "unk_rate": 0.0, "expected_agreement": 0.9,
            "prs": float("nan"), "tpc": float("nan")} | changes


def test_limits_judge_both_directions():
    assert Limit(0.8, 0.6).judge("tpc_s", 0.7) == (WARN, "tpc_s 0.70 < 0.80 (warn)")
    assert Limit(0.8, 0.6).judge("tpc_s", 0.5)[0] == ERROR
    assert Limit(0.1, 0.3, higher_is_better=False).judge("rate", 0.05) == (OK, None)
    assert Limit(0.1, 0.3, higher_is_better=False).judge("rate", 0.4) == (ERROR, "rate 0.40 > 0.30 (error)")


def test_reasons_show_enough_decimals_to_tell_value_and_bound_apart():
    assert Limit(0.8, 0.6).judge("agreement", 0.5996) == (ERROR, "agreement 0.5996 < 0.6000 (error)")
    assert Limit(0.8, 0.6).judge("agreement", 0.79999999)[1] == "agreement 0.800000 < 0.800000 (warn)"
    assert Limit(0.1, 0.3, higher_is_better=False).judge("rate", 0.1004) == (WARN, "rate 0.1004 > 0.1000 (warn)")
    with pytest.raises(ValueError, match="must not exceed"):
        Limit(0.5, 0.7)
    with pytest.raises(ValueError, match="trust.tpc_s: error bound"):
        TrustConfig.from_dict({"tpc_s": {"warn": 0.5, "error": 0.9}})


def test_reference_free_levels_and_reasons():
    profile = CleanProfile({"contact": PredicateBaseline(confidence=0.85, tpc_s=0.98, unk_rate=0.02,
                                                         violation_rate=0.01)})
    assessor = TrustAssessor(TrustConfig(), profile)
    result = assessor.assess({"contact": healthy(), "static": healthy(tpc_s=0.6)}, {"contact": 0.02})
    assert result["contact"].level == OK and result["contact"].reasons == []
    assert result["static"].level == ERROR and result["static"].reasons == ["tpc_s 0.60 < 0.70 (error)"]
    dropped = assessor.assess({"contact": healthy(confidence=0.6)})["contact"]
    assert dropped.level == WARN and dropped.reasons == ["confidence_drop 0.25 > 0.15 (warn)"]
    violating = assessor.assess({"contact": healthy()}, {"contact": 0.21})["contact"]
    assert violating.level == ERROR and "violation_excess 0.20 > 0.15 (error)" in violating.reasons
    young = assessor.assess({"contact": healthy(frames=3)})["contact"]
    assert young.level == WARN and young.reasons == ["not enough frames (3 < 10)"]
    unknown = assessor.assess({"contact": healthy(unk_rate=0.6)})["contact"]
    assert unknown.level == ERROR and unknown.signals["unk_excess"] == pytest.approx(0.58)


def test_with_a_reference_trust_judges_agreement_and_tpc_not_the_confidence_weighted_prs():
    twin = TrustAssessor(reference=CLEAN_TWIN)
    # identical twins at confidence 0.6: PRS is the mean confidence, the agreement is full
    identical = twin.assess({"grasp": healthy(prs=0.6, agreement=1.0, tpc=1.0, confidence=0.6, tpc_s=0.5,
                                              unk_rate=0.4)})["grasp"]
    assert identical.level == OK and identical.reasons == []
    assert identical.signals["prs"] == 0.6 and identical.signals["tpc_s"] == 0.5    # reported, not judged
    disagreeing = twin.assess({"grasp": healthy(prs=0.7, agreement=0.7, tpc=0.95)})["grasp"]
    assert disagreeing.level == WARN and disagreeing.reasons == ["agreement 0.70 < 0.80 (warn)"]
    assert disagreeing.signals["tpc"] == 0.95
    flickering = twin.assess({"grasp": healthy(agreement=0.9, tpc=0.5)})["grasp"]
    assert flickering.level == ERROR and flickering.reasons == ["tpc 0.50 < 0.60 (error)"]
    with pytest.raises(ValueError, match="reference must be"):
        TrustAssessor(reference="twin")


def test_against_ground_truth_the_agreement_is_judged_as_a_drop_from_the_clean_profile():
    # the lowest agreement with ground truth of any clean window: 0.7
    profile = CleanProfile({"dynamic": PredicateBaseline(0.8, 0.8, 0.0, 0.0, agreement=0.7)})
    truth = TrustAssessor(profile=profile, reference=GROUND_TRUTH)
    assert truth.assess({"dynamic": healthy(agreement=0.68, tpc=0.9)})["dynamic"].level == OK
    worse = truth.assess({"dynamic": healthy(agreement=0.45, tpc=0.9)})["dynamic"]
    assert worse.level == ERROR and worse.reasons == ["agreement_drop 0.25 > 0.20 (error)"]
    # the clean twin is the same pipeline on clean frames: full agreement expected, profile or not
    twin = TrustAssessor(profile=profile, reference=CLEAN_TWIN).assess({"dynamic": healthy(agreement=0.68)})
    assert twin["dynamic"].reasons == ["agreement 0.68 < 0.80 (warn)"]


def test_a_clean_profile_round_trips_and_old_formats_are_refused(tmp_path):
    calibration = calibration_summary([0.9] * 10, [True] * 7 + [False] * 3)
    profile = CleanProfile({"contact": PredicateBaseline(0.6, 0.9, 0.3, float("nan"), calibration,
                                                         expected_agreement=0.65, agreement=0.5)},
                           window=20, quantile=0.99)
    for suffix in (".json", ".yaml"):
        again = CleanProfile.load(profile.save(tmp_path / f"profile{suffix}"))
        assert again.to_dict() == profile.to_dict()
        assert (again.window, again.quantile) == (20, 0.99)
        assert again.baselines["contact"].calibration.counts == calibration.counts
    assert set(profile.calibration_maps()) == {"contact"}
    old = tmp_path / "old.json"
    old.write_text('{"format": "predrel-clean-profile/1", "predicates": {}}')
    with pytest.raises(ValueError, match="expected format .*measure it again"):
        CleanProfile.load(old)
    with pytest.raises(ValueError, match="quantile"):
        CleanProfile({}, quantile=0.2)


def test_flickering_stream_is_untrusted_end_to_end():
    calibration = calibration_summary([0.9] * 10 + [0.3] * 10, [True] * 9 + [False] + [False] * 8 + [True] * 2)
    profile = CleanProfile({"contact": PredicateBaseline(0.9, 0.98, 0.0, 0.0, calibration, expected_agreement=0.8)})
    rolling = RollingReliability(window=20, mode="self", calibration=profile.calibration_maps())
    monitor = LogicMonitor(rate_window=20)
    for t in range(20):
        value = "T" if t % 2 else "N"                            # flips every frame
        estimates = [PredicateEstimate("contact", 1, 2, value, 0.3, frame_index=t)]
        rolling.update(t, estimates)
        monitor.update(t, estimates)
    result = TrustAssessor(profile=profile).assess(rolling.by_predicate(), monitor.compute())["contact"]
    assert result.level == ERROR
    assert result.signals["tpc_s"] == 0.0
    assert result.signals["expected_agreement"] == pytest.approx(0.2)
    assert "confidence_drop 0.60 > 0.30 (error)" in result.reasons


def test_with_a_baseline_tpc_s_and_expected_agreement_are_judged_as_drops_from_clean():
    # the worst clean windows: an expected agreement of 0.7, a change on 20 % of the frames
    calibration = calibration_summary([0.9] * 10, [True] * 7 + [False] * 3)
    profile = CleanProfile({"dynamic": PredicateBaseline(0.8, 0.8, 0.0, 0.0, calibration, expected_agreement=0.7)})
    assessor = TrustAssessor(TrustConfig(), profile)
    as_clean = assessor.assess({"dynamic": healthy(tpc_s=0.78, expected_agreement=0.7, confidence=0.8)})["dynamic"]
    assert as_clean.level == OK                      # absolute bounds (0.85, 0.8) would both say WARN
    worse = assessor.assess({"dynamic": healthy(tpc_s=0.6, expected_agreement=0.55, confidence=0.8)})["dynamic"]
    assert worse.level == ERROR
    assert worse.reasons == ["tpc_s_drop 0.20 > 0.15 (error)", "agreement_drop 0.15 > 0.10 (warn)"]
    assert worse.signals["tpc_s"] == 0.6 and worse.signals["expected_agreement"] == 0.55


_metric = st.one_of(st.just(float("nan")), st.floats(0.0, 1.0))
_stream = st.fixed_dictionaries({"frames": st.integers(1, 40), "tpc_s": _metric, "confidence": _metric,
                                 "unk_rate": _metric, "expected_agreement": _metric, "prs": _metric, "tpc": _metric,
                                 "agreement": _metric, "name": st.sampled_from(["contact", "static", "grasp"])})


@settings(max_examples=80, deadline=None)
@given(st.lists(_stream, min_size=1, max_size=12), st.sampled_from([None, CLEAN_TWIN, GROUND_TRUTH]), st.booleans())
def test_streams_judged_together_are_judged_as_one_by_one(streams, reference, with_profile):
    """assess_streams gives every row the level and reasons assess_one gives it alone, whatever mix
    of predicates (with and without a baseline) and NaNs."""
    profile = CleanProfile({"contact": PredicateBaseline(0.7, 0.9, 0.1, 0.05, expected_agreement=0.8, agreement=0.85),
                            "grasp": PredicateBaseline(0.5, float("nan"), 0.2, float("nan"))}) if with_profile else None
    assessor = TrustAssessor(TrustConfig(min_frames=10), profile, reference)
    names = [stream["name"] for stream in streams]
    columns = {metric: np.array([stream[metric] for stream in streams], dtype=np.float64)
               for metric in streams[0] if metric != "name"}
    together = assessor.assess_streams(names, columns)
    for stream, (level, reasons) in zip(streams, together):
        alone = assessor.assess_one(stream["name"], stream)
        assert (level, reasons) == (alone.level, alone.reasons)
