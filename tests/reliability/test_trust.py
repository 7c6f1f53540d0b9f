import numpy as np
import pytest

from predrel_ros.entities import MANIPULATED_OBJECT, RIGHT_HAND, Entity
from predrel_ros.predicates import PredicateExtractor
from predrel_ros.predicates.estimate import PredicateEstimate
from predrel_ros.predicates.logic_rules import LogicMonitor
from predrel_ros.reliability.calibration import calibration_summary
from predrel_ros.reliability.rolling import RollingReliability
from predrel_ros.reliability.trust import (CLEAN_TWIN, ERROR, GROUND_TRUTH, OK, WARN, CleanProfile, Limit,
                                           PredicateBaseline, TrustAssessor, TrustConfig, build_clean_profile)


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
    calibration = calibration_summary([0.9] * 10, [True] * 7 + [False] * 3)     # 70 % agree on clean data
    profile = CleanProfile({"dynamic": PredicateBaseline(0.8, 0.8, 0.0, 0.0, calibration)})
    truth = TrustAssessor(profile=profile, reference=GROUND_TRUTH)
    assert truth.assess({"dynamic": healthy(agreement=0.68, tpc=0.9)})["dynamic"].level == OK
    worse = truth.assess({"dynamic": healthy(agreement=0.45, tpc=0.9)})["dynamic"]
    assert worse.level == ERROR and worse.reasons == ["agreement_drop 0.25 > 0.20 (error)"]
    # the clean twin is the same pipeline on clean frames: full agreement expected, profile or not
    twin = TrustAssessor(profile=profile, reference=CLEAN_TWIN).assess({"dynamic": healthy(agreement=0.68)})
    assert twin["dynamic"].reasons == ["agreement 0.68 < 0.80 (warn)"]


def rect(track_id, role, x, y):
    mask = np.zeros((120, 160), bool)
    mask[y:y + 10, x:x + 10] = True
    return Entity(id=track_id, label=role, role=role, box=[x, y, x + 9, y + 9], mask=mask)


def test_clean_profile_from_a_clean_run_round_trips(tmp_path):
    extractor = PredicateExtractor()
    frames = []
    for t in range(20):
        estimates = extractor.update(t, [rect(1, RIGHT_HAND, 40 + t, 40), rect(2, MANIPULATED_OBJECT, 40 + t, 50)])
        frames.append((t, estimates, estimates))           # a perfect reference: every estimate agrees
    profile = build_clean_profile(frames)
    contact = profile.baselines["contact"]
    assert contact.tpc_s == 1.0 and contact.unk_rate == 0.0
    assert contact.calibration.samples == 20
    filled = [a for a, n in zip(contact.calibration.agreement, contact.calibration.counts) if n]
    assert filled == [1.0] * len(filled)
    dynamic = profile.baselines["dynamic"]
    assert dynamic.unk_rate == pytest.approx(2 / 20)            # the first two frames have too few samples
    for suffix in (".json", ".yaml"):
        again = CleanProfile.load(profile.save(tmp_path / f"profile{suffix}"))
        assert again.baselines["contact"].confidence == pytest.approx(contact.confidence)
        assert again.baselines["contact"].calibration.counts == contact.calibration.counts
    assert set(profile.calibration_maps()) >= {"contact", "static"}
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "x"}')
    with pytest.raises(ValueError, match="expected format"):
        CleanProfile.load(bad)


def test_flickering_stream_is_untrusted_end_to_end():
    calibration = calibration_summary([0.9] * 10 + [0.3] * 10, [True] * 9 + [False] + [False] * 8 + [True] * 2)
    profile = CleanProfile({"contact": PredicateBaseline(0.9, 0.98, 0.0, 0.0, calibration)})
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
    # clean data: 70 % of the estimates agree with ground truth, the stream changes on 20 % of frames
    calibration = calibration_summary([0.9] * 10, [True] * 7 + [False] * 3)
    assert calibration.agreement_rate == pytest.approx(0.7)
    profile = CleanProfile({"dynamic": PredicateBaseline(0.8, 0.8, 0.0, 0.0, calibration)})
    assessor = TrustAssessor(TrustConfig(), profile)
    as_clean = assessor.assess({"dynamic": healthy(tpc_s=0.78, expected_agreement=0.7, confidence=0.8)})["dynamic"]
    assert as_clean.level == OK                      # absolute bounds (0.85, 0.8) would both say WARN
    worse = assessor.assess({"dynamic": healthy(tpc_s=0.6, expected_agreement=0.55, confidence=0.8)})["dynamic"]
    assert worse.level == ERROR
    assert worse.reasons == ["tpc_s_drop 0.20 > 0.15 (error)", "agreement_drop 0.15 > 0.10 (warn)"]
    assert worse.signals["tpc_s"] == 0.6 and worse.signals["expected_agreement"] == 0.55
