import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reliability_scenarios import occlusion_run, oracle_profile

from predrel_ros.core.entities import Entity
from predrel_ros.predicates import PredicateExtractor, vocabulary
from predrel_ros.predicates.estimate import PredicateEstimate
from predrel_ros.predicates.logic_rules import LogicMonitor
from predrel_ros.reliability import metrics
from predrel_ros.reliability.evidence_profile import EvidenceProfile
from predrel_ros.reliability.monitor import (
    CLEAN_TWIN,
    GROUND_TRUTH,
    POOLED,
    SELF,
    MonitorConfig,
    ReliabilityMonitor,
    worst_level,
)
from predrel_ros.reliability.trust import ERROR, OK, STALE, WARN, CleanProfile, PredicateBaseline, TrustConfig
from predrel_ros.reliability.trust_estimator import INPUTS, GroupModel, TrustModel
from predrel_ros.reliability.trust_evidence import FEATURES
from predrel_ros.sources.dataset import open_dataset
from predrel_ros.tools.benchmarks.core import scripted_scene

UNK = metrics.UNK
STREAMS = [("contact", 1, 2), ("static", 2, 3), ("grasp", 1, 2), ("release", 1, 2)]
LABELS = {"contact": ("N", "T", "UNK"), "static": ("none", "In", "Sup", "UNK"), "grasp": ("N", "T", "UNK"),
          "release": ("N", "T", "UNK")}


def estimate(key, value, confidence=1.0, frame=0):
    name, subject, obj = key
    return PredicateEstimate(name, subject, obj, value, confidence, frame_index=frame)


def close(a, b):
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, abs=1e-9)


@st.composite
def sequences(draw):
    frames = []
    for _ in range(draw(st.integers(1, 40))):
        evaluated, references = [], []
        for key in STREAMS:
            labels = LABELS[key[0]]
            if draw(st.booleans()):
                evaluated.append((key, draw(st.sampled_from(labels)), draw(st.floats(0, 1))))
            if draw(st.booleans()):
                references.append((key, draw(st.sampled_from(labels)), 1.0))
        frames.append((draw(st.integers(0, 5)), evaluated, references))
    return frames


@settings(max_examples=60, deadline=None)
@given(sequences(), st.integers(2, 12))
def test_report_equals_offline_metrics_on_the_last_window(frames, window):
    # both sides name the entities alike here (no association): the metrics themselves are tested
    monitor = ReliabilityMonitor(MonitorConfig(reference_mode=CLEAN_TWIN, window=window, associate=False),
                                 TrustConfig(min_frames=1))
    history = {key: [] for key in STREAMS}       # per stream: (frame, y, c, y_ref, c_ref)
    for t, (severity, evaluated, references) in enumerate(frames):
        monitor.add_reference(t, [estimate(k, v, c, t) for k, v, c in references])
        assert monitor.add_evaluated(t, [estimate(k, v, c, t) for k, v, c in evaluated], "occlusion", severity)
        for key in STREAMS:
            mine = next(((v, c) for k, v, c in evaluated if k == key), None)
            ref = next(((v, c) for k, v, c in references if k == key), None)
            if mine is None and ref is None:
                continue
            y, c = (UNK, 0.0) if mine is None else (metrics_code(key, mine[0]), mine[1])
            y_ref, c_ref = (UNK, 0.0) if ref is None else (metrics_code(key, ref[0]), ref[1])
            history[key].append((t, y, c, y_ref, c_ref))
    last = len(frames) - 1
    report = monitor.report()
    windows = {}
    for key, rows in history.items():
        recent = [row for row in rows if row[0] > last - window]     # the window: the last `window` frames
        if recent:
            windows[key] = np.array(recent, dtype=np.float64)
    assert {(r.predicate, r.subject, r.object) for r in report.predicates if not r.pooled} == set(windows)
    for key, rows in windows.items():
        record = report.record(*key)
        _, y, c, y_ref, c_ref = rows.T
        assert record.samples == len(rows)
        assert close(record.prs, metrics.prs(y, y_ref, c))
        assert close(record.agreement, metrics.prs(y, y_ref, np.ones_like(c)))
        assert close(record.cws, metrics.cws(c, c_ref))
        assert close(record.tpc_s, metrics.tpc_s(y))
        assert close(record.tpc, metrics.tpc(y, y_ref))
        assert close(record.mean_confidence, c.mean())
        assert math.isnan(record.dis) and math.isnan(record.rule_violation_rate)
    for name in {key[0] for key in windows}:
        rows = np.concatenate([windows[key] for key in windows if key[0] == name])
        record = report.record(name)
        _, y, c, y_ref, c_ref = rows.T
        assert record.subject == record.object == POOLED and record.samples == len(rows)
        assert close(record.prs, metrics.prs(y, y_ref, c))                    # pooled = over all streams' frames
        assert close(record.agreement, metrics.prs(y, y_ref, np.ones_like(c)))
        assert close(record.cws, metrics.cws(c, c_ref))
        assert close(record.mean_confidence, c.mean())
        # PDS: PRS per severity over the last `window` frames of the stream's predicate
        scores = {}
        for severity in range(6):
            picked = [pair for t, (s, evaluated, references) in enumerate(frames)
                      if t > last - window and s == severity
                      for key in STREAMS if key[0] == name
                      for pair in [pair_of(key, evaluated, references)] if pair[0] is not None]
            if picked:
                value = metrics.prs(*(np.array(column) for column in zip(*picked)))
                if not math.isnan(value):
                    scores[severity] = value
        assert close(record.pds, metrics.pds(scores) if len(scores) >= 2 else math.nan)


def metrics_code(key, label):
    return estimate(key, label).code


def pair_of(key, evaluated, references):
    """(y, y_ref, c) of one stream on one frame as the reference pairing makes it (Nones when absent)."""
    mine = next(((v, c) for k, v, c in evaluated if k == key), None)
    ref = next((v for k, v, _ in references if k == key), None)
    if mine is None and ref is None:
        return None, None, None
    y, c = (UNK, 0.0) if mine is None else (metrics_code(key, mine[0]), mine[1])
    return y, UNK if ref is None else metrics_code(key, ref), c


def test_either_arrival_order_gives_the_same_report():
    def run(delay):
        monitor = ReliabilityMonitor(MonitorConfig(reference_mode=CLEAN_TWIN, window=6, associate=False))
        pending = []
        for t in range(20):
            value = "T" if (t // 3) % 2 else "N"
            pending.append((t, [estimate(STREAMS[0], value, 1.0, t)]))
            monitor.add_evaluated(t, [estimate(STREAMS[0], value if t % 5 else "UNK", 0.7, t)])
            if len(pending) > delay:
                monitor.add_reference(*pending.pop(0))
        for frame in pending:
            monitor.add_reference(*frame)
        return monitor.report()
    in_step, late = run(0), run(4)
    assert in_step.predicates == late.predicates and in_step.frame_index == late.frame_index == 19
    assert late.counters["matched"] == 20 and late.counters["unmatched_reference"] == 0


def test_stale_until_min_frames_and_groups_take_their_worst_predicate():
    monitor = ReliabilityMonitor(MonitorConfig(reference_mode=SELF, window=20, skip_replaced_tracks=False),
                                 TrustConfig(min_frames=8))
    for t in range(4):
        monitor.add_evaluated(t, [estimate(("contact", 1, 2), "T", 0.9, t)])
    report = monitor.report()
    assert report.record("contact").trust == STALE and report.record("contact").reason == "not enough frames (4 < 8)"
    for t in range(4, 10):
        monitor.add_evaluated(t, [estimate(("contact", 1, 2), "T" if t % 2 else "N", 0.9, t),
                                  estimate(("grasp", 1, 2), "N", 0.9, t), estimate(("release", 1, 2), "N", 0.9, t)])
    report = monitor.report()
    assert report.record("contact").trust == ERROR                       # flickers every frame
    assert report.record("grasp").trust == STALE                         # 6 frames < 8
    derived = report.group("derived")
    assert derived.trust == STALE and derived.subject == POOLED
    assert report.group("contact").trust == ERROR and report.group("contact").reason.startswith("contact: tpc_s")
    assert worst_level([STALE, OK, WARN]) == WARN and worst_level([STALE]) == STALE and worst_level([]) == STALE
    trust = report.trust()
    assert trust["contact"].level == ERROR and trust["derived"].level == STALE
    assert math.isnan(report.record("contact").prs) and math.isnan(report.record("contact").pds)


def test_violation_rate_is_the_logic_monitors_and_judged_only_with_enough_checks():
    monitor = ReliabilityMonitor(MonitorConfig(reference_mode=SELF, window=10, min_rule_checks=3,
                                               skip_replaced_tracks=False), TrustConfig(min_frames=1))
    rules = LogicMonitor(rate_window=10)
    for t in range(12):
        frame = [estimate(("release", 1, 2), "T" if t in (3, 9) else "N", 0.9, t),
                 estimate(("grasp", 1, 2), "N", 0.9, t)]
        monitor.add_evaluated(t, frame)
        rules.update(t, frame)
    record = monitor.report().record("release")
    assert record.rule_violation_rate == rules.compute()["release"] == 1.0      # both releases lack a grasp
    assert "violation" not in record.reason                                    # 2 checks < 3: not judged
    monitor.add_evaluated(12, [estimate(("release", 1, 2), "T", 0.9, 12), estimate(("grasp", 1, 2), "N", 0.9, 12)])
    record = monitor.report().record("release")
    assert record.trust == ERROR and "violation_excess 1.00 > 0.15 (error)" in record.reason.split("; ")
    assert monitor.report().group("derived").rule_violation_rate == 1.0


def test_ground_truth_streams_the_pipeline_never_produced_are_out_of_scope():
    monitor = ReliabilityMonitor(MonitorConfig(reference_mode=GROUND_TRUTH, window=10, associate=False))
    for t in range(6):
        evaluated = [estimate(("contact", 1, 2), "T", 0.8, t)] if t < 3 else []     # then the pipeline loses it
        references = [estimate(("contact", 1, 2), "T", 1.0, t), estimate(("static", 3, 1), "Ab", 1.0, t)]
        monitor.add_evaluated(t, evaluated)
        monitor.add_reference(t, references)
    report = monitor.report()
    assert report.record("static", 3, 1) is None
    assert report.counters["reference_out_of_scope"] == 6
    assert report.record("contact", 1, 2).prs == pytest.approx(0.8 * 3 / 6)      # missed frames disagree


def test_a_frame_the_pipeline_dropped_disagrees_as_in_predrel_eval():
    monitor = ReliabilityMonitor(MonitorConfig(reference_mode=CLEAN_TWIN, window=10, associate=False))
    for t in range(4):
        monitor.add_reference(t, [estimate(("contact", 1, 2), "T", 1.0, t)])
        if t != 1:                                  # the degraded pipeline dropped frame 1
            monitor.add_evaluated(t, [estimate(("contact", 1, 2), "T", 1.0, t)])
    report = monitor.report()
    assert report.record("contact").agreement == pytest.approx(3 / 4) and report.frame_index == 3
    assert report.counters["incomplete"] == 1 and report.counters["unmatched_reference"] == 0


def test_ground_truth_scope_is_what_the_extractor_evaluates_on_the_true_entities():
    """A pair the pipeline never produced counts once the extractor evaluates it on the ground-truth
    entities: a hand and a cube it never detected are missed, not out of scope."""
    hand = Entity(id=1, label="hand", role="right_hand", box=np.array([10, 10, 30, 30], float))
    cube = Entity(id=2, label="cube", role="manipulated_object", box=np.array([28, 10, 48, 30], float))
    scope = {e.canonical_key for e in PredicateExtractor().update(0, [hand, cube])}
    monitor = ReliabilityMonitor(MonitorConfig(reference_mode=GROUND_TRUTH, window=10))
    references = [estimate(key, "UNK" if key[0] != "contact" else "T", 1.0, 0) for key in sorted(scope)]
    references.append(estimate(("contact", 7, 8), "T", 1.0, 0))    # a pair the extractor does not know
    monitor.add_reference(0, references)
    monitor.add_reference_entities(0, [hand, cube])
    monitor.add_evaluated_entities(0, [])
    assert monitor.add_evaluated(0, [])                             # the pipeline saw nothing
    report = monitor.report()
    assert report.record("contact").agreement == 0.0
    assert report.counters["reference_out_of_scope"] == 1


def test_malformed_frames_change_nothing_and_order_is_enforced():
    monitor = ReliabilityMonitor(MonitorConfig(reference_mode=SELF, window=10, restart_after=3,
                                               skip_replaced_tracks=False))
    monitor.add_evaluated(0, [estimate(("contact", 1, 2), "T", 0.9)])
    with pytest.raises(ValueError, match=r"holds contact\(1, 2\) twice"):
        monitor.add_evaluated(1, [estimate(("contact", 1, 2), "T"), estimate(("contact", 2, 1), "N")])
    with pytest.raises(ValueError, match="frame_index"):
        monitor.add_evaluated(-1, [])
    with pytest.raises(ValueError, match="severity"):
        monitor.add_evaluated(1, [], "blur", 9)
    with pytest.raises(ValueError, match="self mode.*takes no reference frames"):
        monitor.add_reference(1, [])
    with pytest.raises(ValueError, match="takes no evaluated entities frames"):
        monitor.add_evaluated_entities(1, [])
    assert monitor.add_evaluated(5, [estimate(("contact", 1, 2), "T", 0.9)])
    assert not monitor.add_evaluated(5, []) and not monitor.add_evaluated(2, [])
    assert monitor.counters == {"processed": 2, "out_of_order": 2, "restarts": 0}
    assert monitor.add_evaluated(1, [estimate(("static", 1, 2), "Ab", 0.9)])      # third old frame: restart
    report = monitor.report()
    assert report.counters["restarts"] == 1 and report.frame_index == 1
    assert [r.predicate for r in report.predicates] == ["static", "static"]     # the old window is gone
    with pytest.raises(ValueError, match="reference_mode"):
        MonitorConfig(reference_mode="twin")
    with pytest.raises(ValueError, match="window"):
        MonitorConfig(window=0)


def test_streams_can_be_left_out_and_report_serialises():
    monitor = ReliabilityMonitor(MonitorConfig(reference_mode=CLEAN_TWIN, window=5, associate=False))
    monitor.add_reference(0, [estimate(("contact", 1, 2), "T")])
    monitor.add_evaluated(0, [estimate(("contact", 1, 2), "T", 0.5)], "blur", 2, tag="header-0")
    report = monitor.report(streams=False)
    assert [(r.predicate, r.subject) for r in report.predicates] == [("contact", POOLED)]
    assert report.tag == "header-0" and report.degradation_kind == "blur" and report.degradation_severity == 2
    data = report.to_dict()
    assert data["predicates"][0]["prs"] == 0.5 and data["predicates"][0]["pds"] is None
    assert data["counters"]["matched"] == 1


# --------------------------------------------------------------- acceptance: severe occlusion and back


@pytest.fixture(scope="module")
def episodes(controlled_dataset):
    return open_dataset(controlled_dataset).episodes()


@pytest.mark.parametrize("mode", [CLEAN_TWIN, SELF, GROUND_TRUTH])
def test_trust_drops_under_severe_occlusion_and_recovers_when_it_stops(episodes, mode):
    target, others = episodes[0], episodes[1:]
    profile = oracle_profile(others)
    n = len(target)
    run = occlusion_run(target, loops=5, occluded=(2,), severity=5)   # loops 0, 1 clean; 2 occluded; 3, 4 clean
    monitor = ReliabilityMonitor(MonitorConfig(reference_mode=mode, window=30), profile=profile)
    clean_extractor, degraded_extractor = PredicateExtractor(), PredicateExtractor()
    levels = {}
    for frame in run:
        clean = clean_extractor.update(frame.frame_index, frame.clean)
        degraded = degraded_extractor.update(frame.frame_index, frame.degraded)
        if mode == CLEAN_TWIN:
            monitor.add_reference(frame.frame_index, clean)
        elif mode == GROUND_TRUTH:
            monitor.add_reference(frame.frame_index, frame.references)
        if mode != SELF:
            monitor.add_reference_entities(frame.frame_index, frame.clean)
        monitor.add_evaluated(frame.frame_index, degraded, frame.kind, frame.severity)
        assert monitor.add_evaluated_entities(frame.frame_index, frame.degraded)
        if frame.frame_index in (2 * n - 1, 3 * n - 1, 5 * n - 1):
            levels[frame.frame_index] = {g.predicate: g.trust for g in monitor.report().groups}
    before, during, after = levels[2 * n - 1], levels[3 * n - 1], levels[5 * n - 1]
    assert all(level in (WARN, ERROR) for level in during.values()), during
    assert after == before                      # the window holds the same clean frames again
    if mode != GROUND_TRUTH:                    # against ground truth the clean extraction is not perfect
        assert set(before.values()) == {OK}, before
    else:                                       # ... but occlusion makes every group that was not yet ERROR worse
        assert set(during.values()) == {ERROR}
        assert sum(before[group] != ERROR for group in before) >= 2, before


def test_profile_makes_clean_flicker_acceptable_but_not_worse_flicker():
    profile = CleanProfile({"dynamic": PredicateBaseline(confidence=0.8, tpc_s=0.8, unk_rate=0.0,
                                                         violation_rate=0.0)})
    monitor = ReliabilityMonitor(MonitorConfig(reference_mode=SELF, window=11, skip_replaced_tracks=False),
                                 profile=profile)
    for t in range(11):                       # changes on 2 of 10 frame pairs: tpc_s 0.8, as on clean data
        monitor.add_evaluated(t, [estimate(("dynamic", 1, 2), "MT" if t in (4, 5, 6) else "S", 0.8, t)])
    assert monitor.report().record("dynamic").trust == OK
    for t in range(11, 22):                   # every frame: tpc_s 0, a drop of 0.8
        monitor.add_evaluated(t, [estimate(("dynamic", 1, 2), "MT" if t % 2 else "S", 0.8, t)])
    record = monitor.report().record("dynamic")
    assert record.trust == ERROR and record.reason == "tpc_s_drop 0.80 > 0.15 (error)"


# ------------------------------------------------------------------ entities: association, identity switches


def box_entity(track_id, label, x, visibility=1.0):
    return Entity(id=track_id, label=label, role="manipulated_object", box=np.array([x, 10, x + 20, 30], float),
                  visibility=visibility)


def test_clean_twin_streams_are_keyed_by_the_associated_reference_entities():
    """The twins number the same objects differently (the degraded tracker lost a track once); the
    predicates still meet, a false detection's predicates are left out, a missed object disagrees."""
    monitor = ReliabilityMonitor(MonitorConfig(reference_mode=CLEAN_TWIN, window=10), TrustConfig(min_frames=1))
    reference_entities = [box_entity(1, "cube", 0), box_entity(2, "bowl", 50), box_entity(3, "cube", 100)]
    for t in range(4):
        # degraded: cube 1 is track 7, bowl 2 is track 9, cube 3 was missed, track 12 is a false bowl
        evaluated_entities = [box_entity(7, "cube", 1), box_entity(9, "bowl", 51), box_entity(12, "bowl", 200)]
        references = [estimate(("static", 1, 2), "In", 0.9, t), estimate(("static", 3, 2), "Ab", 0.9, t)]
        evaluated = [estimate(("static", 7, 9), "In", 0.6, t), estimate(("static", 12, 9), "Ab", 0.6, t)]
        assert not monitor.add_evaluated(t, evaluated, "occlusion", 3)
        assert not monitor.add_reference_entities(t, reference_entities)
        assert not monitor.add_reference(t, references)
        assert monitor.add_evaluated_entities(t, evaluated_entities)         # the fourth part completes it
    report = monitor.report()
    assert {(r.subject, r.object) for r in report.predicates if not r.pooled} == {(1, 2), (3, 2)}
    kept, missed = report.record("static", 1, 2), report.record("static", 3, 2)
    assert kept.agreement == 1.0 and kept.prs == pytest.approx(0.6)
    assert missed.agreement == 0.0                                          # missed: UNK against Ab
    assert report.record("static").agreement == 0.5 and report.record("static").trust == ERROR
    assert report.counters["unassociated_estimates"] == 4                   # static(12, 9) on 4 frames
    assert report.counters["matched"] == 4 and report.counters["pending_evaluated_entities"] == 0


def test_identical_twins_with_their_own_ids_are_trusted_whatever_their_confidence():
    monitor = ReliabilityMonitor(MonitorConfig(reference_mode=CLEAN_TWIN, window=12))
    for t in range(12):
        value = "T" if t % 6 < 3 else "N"
        monitor.add_reference(t, [estimate(("contact", 1, 2), value, 0.55, t)])
        monitor.add_reference_entities(t, [box_entity(1, "hand", 0), box_entity(2, "cube", 40)])
        monitor.add_evaluated(t, [estimate(("contact", 5, 4), value, 0.55, t)])
        monitor.add_evaluated_entities(t, [box_entity(4, "cube", 40), box_entity(5, "hand", 0)])
    record = monitor.report().record("contact")
    assert record.trust == OK and record.agreement == 1.0 and record.prs == pytest.approx(0.55)


def test_self_mode_leaves_out_the_streams_of_a_track_found_again_under_a_new_id():
    monitor = ReliabilityMonitor(MonitorConfig(reference_mode=SELF, window=30), TrustConfig(min_frames=1))
    extractor = PredicateExtractor()
    hand = lambda: Entity(id=1, label="hand", role="right_hand", box=np.array([0, 0, 20, 20], float),  # noqa: E731
                          mask=np.pad(np.ones((20, 20), bool), ((0, 40), (0, 60))))
    for t in range(30):
        cube_id = 2 if t < 10 else 3                    # the tracker lost the cube at frame 10, found it as 3
        cube = Entity(id=cube_id, label="cube", role="manipulated_object", box=np.array([19, 0, 39, 20], float),
                      mask=np.pad(np.ones((20, 20), bool), ((0, 40), (19, 41))))
        estimates = extractor.update(t, [hand(), cube])
        monitor.add_evaluated(t, estimates)
        monitor.add_evaluated_entities(t, [hand(), cube])
    report = monitor.report()
    assert report.counters["replaced_track_estimates"] > 0
    assert report.record("contact", 1, 2) is not None                      # its frames before the switch age out
    contact = report.record("contact")
    assert contact.trust == OK, contact.reason                             # the UNK of the old id left out


# ------------------------------------------------------------------ evidence and trust model (self mode)

SIZE = (160, 120)


def scripted_frames(count=30):
    scene = scripted_scene(count, *SIZE)
    extractor = PredicateExtractor()
    return [(t, entities, extractor.update(t, entities)) for t, entities in enumerate(scene)]


def flat_model(bias, window=20, groups=("contact", "static", "dynamic", "derived")):
    profile = EvidenceProfile.fit([dict.fromkeys(FEATURES, 0.0)])
    group = GroupModel([np.zeros(0)] * len(INPUTS), np.zeros(0), bias, np.zeros(len(INPUTS)), warn=0.6, error=0.4,
                      risk_weights=np.zeros(1), risk_bias=0.0, risk_warn=1.0)
    return TrustModel(profile, dict.fromkeys(groups, group), window)


def run_self(monitor, sequence, image_size=SIZE):
    for t, entities, estimates in sequence:
        monitor.add_evaluated_entities(t, entities, image_size=image_size)
        monitor.add_evaluated(t, estimates)
    return monitor


def test_self_mode_gathers_the_evidence_once_the_image_size_is_known():
    sequence = scripted_frames()
    gathered = run_self(ReliabilityMonitor(MonitorConfig(window=20)), sequence)
    features = gathered.evidence_features()
    assert features["count"] == 8.0 and features["delivered_share"] == 1.0 and features["birth_rate"] == 0.0
    assert math.isnan(features["sharpness"])                         # no image measures given
    blind = run_self(ReliabilityMonitor(MonitorConfig(window=20)), sequence, image_size=None)
    assert all(math.isnan(value) for value in blind.evidence_features().values())
    reference = ReliabilityMonitor(MonitorConfig(reference_mode=CLEAN_TWIN, window=20))
    assert all(math.isnan(value) for value in reference.evidence_features().values())


def test_the_trust_model_sets_the_levels_of_its_groups_and_their_predicates():
    sequence = scripted_frames()
    monitor = run_self(ReliabilityMonitor(MonitorConfig(window=20), trust_model=flat_model(-2.0, groups=("contact",))),
                  sequence)
    report = monitor.report(streams=False)
    contact = report.group("contact")
    assert contact.trust == ERROR and contact.reason.startswith("expected agreement 0.12 < 0.40 (error)")
    assert contact.expected_agreement == pytest.approx(1 / (1 + math.exp(2.0)))
    assert report.record("contact").trust == ERROR and report.trust()["contact"].level == ERROR
    static = report.group("static")                                  # not modelled: the assessor's level
    assert not static.reason.startswith("expected agreement")
    trusted = run_self(ReliabilityMonitor(MonitorConfig(window=20), trust_model=flat_model(2.0)), sequence).report()
    assert {g.trust for g in trusted.groups} <= {OK, STALE} and trusted.group("contact").trust == OK


def test_stale_stays_stale_and_the_model_must_fit_the_monitor():
    monitor = run_self(ReliabilityMonitor(MonitorConfig(window=20), trust_model=flat_model(-2.0)), scripted_frames(5))
    assert monitor.report().group("contact").trust == STALE
    with pytest.raises(ValueError, match="fitted over 20-frame windows"):
        ReliabilityMonitor(MonitorConfig(window=30), trust_model=flat_model(0.0))
    with pytest.raises(ValueError, match="needs self mode with the entities"):
        ReliabilityMonitor(MonitorConfig(reference_mode=SELF, skip_replaced_tracks=False, window=20),
                           trust_model=flat_model(0.0))


def test_a_group_without_predicates_is_judged_on_the_evidence_alone_once_the_evidence_covers_min_frames():
    no_contact = [(t, entities, [e for e in estimates if vocabulary.group_of(e.name) != "contact"])
                  for t, entities, estimates in scripted_frames()]
    early = run_self(ReliabilityMonitor(MonitorConfig(window=20), TrustConfig(min_frames=10)), no_contact[:9])
    assert early.report(streams=False).group("contact") is None and "contact" not in early.group_signals()
    plain = run_self(ReliabilityMonitor(MonitorConfig(window=20), TrustConfig(min_frames=10)), no_contact)
    contact = plain.report(streams=False).group("contact")            # no model: nothing to judge it by
    assert contact.trust == STALE and contact.reason == "no predicate in the window" and contact.samples == 20
    signals = plain.group_signals()["contact"]
    assert signals["unk_rate"] == 1.0 and math.isnan(signals["confidence"]) and math.isnan(signals["violation_rate"])
    modelled = run_self(ReliabilityMonitor(MonitorConfig(window=20), TrustConfig(min_frames=10),
                                           trust_model=flat_model(-2.0)), no_contact).report(streams=False)
    contact = modelled.group("contact")
    assert contact.trust == ERROR and contact.reason.startswith("expected agreement 0.12 < 0.40 (error)")
    assert modelled.trust()["contact"].level == ERROR
    assert modelled.group("static").trust == ERROR                     # the groups with predicates as before


def test_a_group_whose_predicates_are_all_young_is_judged_on_the_evidence_as_one_without_any():
    """A hand found late: its contact streams are younger than min_frames, the evidence is not; the
    group keeps the model's level instead of turning STALE until the streams are old enough."""
    def contact_from(start, count=30):
        return [(t, entities, [e for e in estimates if t >= start or vocabulary.group_of(e.name) != "contact"])
                for t, entities, estimates in scripted_frames(count)]

    config = TrustConfig(min_frames=10)
    plain = run_self(ReliabilityMonitor(MonitorConfig(window=20), config), contact_from(25))
    assert plain.report(streams=False).group("contact").trust == STALE            # no model: too few frames
    monitor = run_self(ReliabilityMonitor(MonitorConfig(window=20), config, trust_model=flat_model(-2.0)),
                       contact_from(25))
    assert monitor.evidence_covers_min_frames()
    report = monitor.report(streams=False)
    contact = report.group("contact")
    assert contact.trust == ERROR and contact.reason.startswith("expected agreement 0.12 < 0.40 (error)")
    assert report.record("contact").trust == STALE              # the predicate itself: still too few frames
    early = run_self(ReliabilityMonitor(MonitorConfig(window=20), config, trust_model=flat_model(-2.0)),
                     contact_from(6, count=9))
    assert not early.evidence_covers_min_frames()                 # 9 frames of evidence
    assert early.report(streams=False).group("contact").trust == STALE
