"""trust.json: reference-free trust against the true rolling agreement, by hand and from a sweep."""
from __future__ import annotations

import json

import numpy as np
import pytest

from predrel_ros.action.streams import OracleEntities
from predrel_ros.core.errors import UserError
from predrel_ros.degradations import CLEAN, Condition
from predrel_ros.predicates.extractor import PredicateExtractor
from predrel_ros.sources.dataset import open_dataset
from predrel_ros.tools.cli.profile import dataset_profile
from predrel_ros.tools.evaluation.config import NO_ACTION, EvaluationConfig
from predrel_ros.tools.evaluation.sequences import EpisodeSequences
from predrel_ros.tools.evaluation.sweep import run_sweep
from predrel_ros.tools.evaluation.trust_measurement import GROUPS, TrustSeries, trust_document, trust_table

PNG = b"\x89PNG\r\n\x1a\n"


def _series(flagged_contact, expected_contact):
    count = len(flagged_contact)
    flagged = np.zeros((len(GROUPS), count), bool)
    expected = np.full((len(GROUPS), count), np.nan)
    flagged[0] = flagged_contact
    expected[0] = expected_contact
    return TrustSeries(expected, flagged, np.ones_like(flagged))


def test_trust_document_by_hand():
    keys = [("contact", 1, 2)]
    y_ref = np.array([[1, 1, 1, 1]], np.int8)
    y = np.array([[[1, 1, 1, 1]], [[1, 0, 0, -1]]], np.int8)          # clean; occlusion: wrong from frame 1
    zeros = np.zeros((1, 4), np.float32)
    sequences = EpisodeSequences("e", "", keys, [CLEAN, Condition("occlusion", 3)], y,
                                 np.zeros((2, 1, 4), np.float32), y >= 0, np.ones((2, 4), bool), y_ref, zeros, zeros,
                                 "gt")
    series = [_series([False, True, False, False], [1.0, 1.0, 0.5, 0.5]),
              _series([False, False, True, True], [1.0, 0.5, 0.5, np.nan])]
    # switching schedule: clean frames 0-1, occlusion 3 from frame 2: true 1, 1, 0.5, 0; flagged from frame 3
    switches = {"occlusion": _series([False, False, False, True], [1.0, 1.0, 1.0, 1.0])}
    document = trust_document([(sequences, series, switches)], window=2)
    # true agreement, window 2: clean 1, 1, 1, 1; occlusion 1, 0.5, 0, 0
    clean, occluded = document["conditions"]
    assert (clean["kind"], occluded["kind"]) == ("none", "occlusion")
    assert clean["true"]["contact"] == 1.0 and occluded["true"]["contact"] == pytest.approx(0.375)
    assert occluded["flagged"]["contact"] == 0.5 and clean["flagged"]["contact"] == 0.25
    summary = document["summary"]
    # |errors|: clean 0, 0, .5, .5; occlusion 0, 0, .5 (frame 3 has no expectation)
    assert summary["mae"] == pytest.approx(1.5 / 7)
    assert summary["recall_below_0_6"] == pytest.approx(2 / 3)      # frames 1 (0.5), 2, 3 (0); 2, 3 flagged
    assert summary["false_alarm_clean"] == 0.25
    assert summary["median_delay_frames"] == 1.0
    assert summary["switch_series"] == summary["switch_series_flagged"] == 1
    never = trust_document([(sequences, series, {"occlusion": _series([False] * 4, [1.0] * 4)})], window=2)
    assert never["summary"]["median_delay_frames"] is None and never["summary"]["switch_series_flagged"] == 0
    assert summary["recall_by_kind"] == {"occlusion": pytest.approx(2 / 3)}     # no clean window is low
    assert "| occlusion 3 | 0.38 / 0.67 / 0.50 |" in trust_table(document)
    # per episode: all its conditions' errors; the clean condition's mean truth and expectation
    assert document["episodes"] == [{"episode": "e", "mae": pytest.approx(1.5 / 7), "group_windows": 7,
                                     "clean_true": {"contact": 1.0}, "clean_expected": {"contact": 0.75}}]
    assert "| e | 0.21 | 1.00 / 0.75 |" in trust_table(document)


def test_clean_false_alarms_are_split_by_whether_clean_perception_failed():
    keys = [("contact", 1, 2)]
    y_ref = np.array([[1, 1, 1, 1]], np.int8)
    y = np.array([[[1, 1, 0, 0]]], np.int8)                    # clean, wrong from frame 2: truth 1, 1, 0.5, 0
    zeros = np.zeros((1, 4), np.float32)
    sequences = EpisodeSequences("e", "", keys, [CLEAN], y, np.zeros((1, 1, 4), np.float32), y >= 0,
                                 np.ones((1, 4), bool), y_ref, zeros, zeros, "gt")
    summary = trust_document([(sequences, [_series([False, True, False, True], [1.0] * 4)], {})],
                             window=2)["summary"]
    assert summary["false_alarm_clean"] == 0.5
    assert summary["clean_low_share"] == 0.5                    # frames 2 and 3
    assert summary["false_alarm_clean_good"] == 0.5             # frame 1 of the good frames 0 and 1
    assert summary["flagged_clean_low"] == 0.5                  # frame 3 of the failed frames 2 and 3
    assert summary["recall_by_kind"] == {"none": 0.5}


@pytest.fixture(scope="module")
def profile_file(controlled_dataset, tmp_path_factory):
    episodes = open_dataset(controlled_dataset).episodes("train")
    profile = dataset_profile(episodes, OracleEntities(), PredicateExtractor(), window=30)
    return str(profile.save(tmp_path_factory.mktemp("profile") / "profile.json"))


def test_the_sweep_writes_trust_json_its_table_and_plot(controlled_dataset, predicate_file, profile_file, tmp_path):
    config = EvaluationConfig(perception="oracle", predicate_config=predicate_file, kinds=("detection_noise",),
                              severities=(3, 5), action_model=NO_ACTION, test_split="train", max_episodes=1,
                              trust_profile=profile_file)
    run_sweep(config, controlled_dataset, tmp_path, progress=False, log=lambda _: None)
    document = json.loads((tmp_path / "trust.json").read_text())
    assert [(c["kind"], c["severity"]) for c in document["conditions"]] == [("none", 0), ("detection_noise", 3),
                                                                            ("detection_noise", 5)]
    summary = document["summary"]
    assert 0.0 <= summary["mae"] <= 1.0 and summary["group_windows"] > 100
    assert summary["switch_series"] >= 1            # detection noise 3 brings some group below 0.6
    clean = document["conditions"][0]
    assert set(clean["true"]) <= set(GROUPS) and all(0.0 <= v <= 1.0 for v in clean["expected"].values())
    assert "## Trust" in (tmp_path / "tables.md").read_text()
    assert (tmp_path / "plots" / "trust.png").read_bytes().startswith(PNG)
    with pytest.raises(UserError, match="trust-window"):
        run_sweep(EvaluationConfig(perception="oracle", predicate_config=predicate_file, trust_profile=profile_file,
                                   trust_window=20), controlled_dataset, tmp_path / "again", progress=False,
                  log=lambda _: None)


def test_series_keep_their_signals_and_features_through_a_file(tmp_path):
    from predrel_ros.reliability.trust_estimator import GROUP_SIGNALS
    from predrel_ros.reliability.trust_evidence import FEATURES
    from predrel_ros.tools.evaluation.trust_measurement import load_series, save_series

    series = _series([False, True, True], [1.0, 0.5, 0.2])
    assert series.signals.shape == (len(GROUPS), 3, len(GROUP_SIGNALS)) and series.features.shape == (3, len(FEATURES))
    series.signals[0, 1] = 0.25
    series.features[2, 0] = 3.0
    path = save_series(tmp_path / "e.trust.npz", [series], {"blur": series})
    (loaded,), switches = load_series(path)
    for got in (loaded, switches["blur"]):
        assert np.array_equal(got.signals, series.signals, equal_nan=True)
        assert np.array_equal(got.features, series.features, equal_nan=True)
        assert np.array_equal(got.flagged, series.flagged)
    # a file of the earlier format (no signals, no features) loads with NaN there
    np.savez(tmp_path / "old.npz", expected=series.expected[None], flagged=series.flagged[None],
             judged=series.judged[None], switch_kinds=np.array([], dtype=str))
    (old,), none = load_series(tmp_path / "old.npz")
    assert none == {} and np.isnan(old.features).all() and np.isnan(old.signals).all()


def _scripted_frames(count):
    from predrel_ros.reliability.image_quality import ImageQuality
    from predrel_ros.tools.benchmarks.core import scripted_scene
    from predrel_ros.tools.benchmarks.trust import drawn_frames

    scene = scripted_scene(count, 160, 120)
    images = drawn_frames(scene, 160, 120)
    extractor = PredicateExtractor()
    quality = ImageQuality()
    return [(t, extractor.update(t, entities), entities, quality.measure(image))
            for t, (entities, image) in enumerate(zip(scene, images))]


def test_self_trust_records_the_evidence_and_takes_levels_from_a_trust_model():
    from predrel_ros.reliability.evidence_profile import EvidenceProfile
    from predrel_ros.reliability.trust_estimator import INPUTS, GroupModel, TrustModel
    from predrel_ros.reliability.trust_evidence import FEATURES
    from predrel_ros.tools.evaluation.trust_measurement import self_trust

    frames = _scripted_frames(40)
    del frames[20]                                          # a dropped frame keeps the last values
    plain = self_trust(frames, 40, window=20, image_size=(160, 120))
    count, sharpness = FEATURES.index("count"), FEATURES.index("sharpness")
    assert (plain.features[:, count] == 8).all() and np.isfinite(plain.features[:, sharpness]).all()
    assert np.array_equal(plain.features[20], plain.features[19], equal_nan=True)
    contact = GROUPS.index("contact")
    assert np.isfinite(plain.signals[contact, 15:, 0]).all()        # the confidence of the contact group
    profile = EvidenceProfile.fit([dict(zip(FEATURES, row)) for row in plain.features])

    def model(bias):
        group = GroupModel([np.zeros(0)] * len(INPUTS), np.zeros(0), bias, np.zeros(len(INPUTS)), warn=0.6, error=0.4,
                      risk_weights=np.zeros(1), risk_bias=0.0, risk_warn=1.0)
        return TrustModel(profile, {name: group for name in GROUPS}, window=20)
    doubtful = self_trust(frames, 40, window=20, image_size=(160, 120), model=model(-2.0))
    trusted = self_trust(frames, 40, window=20, image_size=(160, 120), model=model(2.0))
    judged = doubtful.judged[contact]
    assert judged[15:].all() and not judged[:5].any()               # STALE until min_frames frames
    assert np.array_equal(doubtful.flagged[contact], judged) and not trusted.flagged.any()
    delivered = doubtful.features[:, FEATURES.index("delivered_share")]     # 19 of 20 frames with frame 20 in it
    assert np.allclose(doubtful.expected[contact][judged], delivered[judged] / (1 + np.exp(2.0)))
    assert delivered[judged].min() == pytest.approx(0.95) and delivered[19] == 1.0


def test_the_action_gate_is_measured_as_selective_prediction():
    keys = [("contact", 1, 2)]
    y = np.array([[[1, 1, 1, 1]], [[1, 0, 0, 0]]], np.int8)
    zeros = np.zeros((1, 4), np.float32)
    sequences = EpisodeSequences("e", "", keys, [CLEAN, Condition("blur", 3)], y, np.zeros((2, 1, 4), np.float32),
                                 y >= 0, np.ones((2, 4), bool), np.ones((1, 4), np.int8), zeros, zeros, "gt")
    clean, blurred = _series([False] * 4, [1.0] * 4), _series([False] * 4, [1.0] * 4)
    clean.action_correct[:] = [1, 1, 0, np.nan]                     # frame 3 has no label
    clean.action_trusted[:] = [True, True, True, True]
    blurred.action_correct[:] = [1, 0, 0, 0]
    blurred.action_trusted[:] = [True, False, False, True]
    document = trust_document([(sequences, [clean, blurred], {})], window=2)
    gates = {c["kind"]: c["action"] for c in document["conditions"]}
    assert gates["none"] == {"accuracy_when_trusted": pytest.approx(2 / 3), "trusted_share": 1.0,
                             "accuracy": pytest.approx(2 / 3), "frames": 3}
    assert gates["blur"] == {"accuracy_when_trusted": 0.5, "trusted_share": 0.5, "accuracy": 0.25, "frames": 4}
    summary = document["summary"]
    assert summary["action_accuracy_when_trusted_min"] == 0.5 and summary["action_trusted_share_clean"] == 1.0
    assert "| blur 3 |" in trust_table(document) and "0.50 / 0.50 |" in trust_table(document)


def test_self_trust_runs_the_action_gate_on_its_reports():
    from predrel_ros.action import ActionConfig, ActionRecognizer, PrimitiveModel
    from predrel_ros.tools.evaluation.trust_measurement import self_trust

    frames = _scripted_frames(30)
    model = PrimitiveModel.load(None)
    labels = np.full(30, -1)
    labels[10:] = 0
    gate = self_trust(frames, 30, window=20, image_size=(160, 120),
                      recognizer=ActionRecognizer(model, ActionConfig(min_probability=0.0)), labels=labels)
    assert np.isnan(gate.action_correct[:10]).all() and np.isin(gate.action_correct[10:], (0.0, 1.0)).all()
    assert gate.action_trusted.all()                     # no probability floor, no untrusted relied-on predicate
    strict = self_trust(frames, 30, window=20, image_size=(160, 120),
                        recognizer=ActionRecognizer(model, ActionConfig(min_probability=1.0)), labels=labels)
    assert not strict.action_trusted.any()
