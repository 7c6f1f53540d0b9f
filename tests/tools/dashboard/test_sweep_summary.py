import dataclasses
import json

import numpy as np
import pytest

from predrel_ros.core.entities import Entity
from predrel_ros.predicates.estimate import PredicateEstimate
from predrel_ros.tools.dashboard.plot import plot_summary
from predrel_ros.tools.dashboard.sweep_summary import SweepRecorder
from predrel_ros.tools.dashboard.view import ActionView, Condition, GroupTrust, NodeStatus, ReportView

FRAMES_PER_CONDITION = 10
CONDITIONS = [Condition("none", 0)] + [Condition("occlusion", s) for s in range(1, 6)]
#: the degraded pipeline's track ids: the clean twin's + DEGRADED_IDS (the twins track independently)
DEGRADED_IDS = 20
LABELS = {1: "hand", 2: "cube", 3: "cube", 4: "bowl"}


def estimates(frame: int, contact: str, ids: int = 0) -> list[PredicateEstimate]:
    return [PredicateEstimate("contact", 1 + ids, 2 + ids, contact, 0.9, frame_index=frame),
            PredicateEstimate("static", 3 + ids, 4 + ids, "In", 0.8, frame_index=frame)]


def entities(ids: int = 0) -> list[Entity]:
    return [Entity(id=i + ids, label=label, role="manipulated_object", box=np.array([30.0 * i, 0, 30.0 * i + 20, 20]))
            for i, label in LABELS.items()]


@pytest.fixture
def recorder() -> SweepRecorder:
    """At severity s the degraded contact is wrong on the first 2s frames of the condition; from
    severity 3 the reports say ERROR for contact; the action is right when trusted, wrong when not;
    one degraded frame (the last of severity 5) has no clean twin. The degraded pipeline numbers the
    same entities differently."""
    recorder = SweepRecorder()
    frame = 0
    for condition in CONDITIONS:
        for j in range(FRAMES_PER_CONDITION):
            wrong = j < 2 * condition.severity
            last = condition.severity == 5 and j == FRAMES_PER_CONDITION - 1
            if not last:
                recorder.add_predicates("clean", frame, Condition("none", 0), estimates(frame, "T"))
                recorder.add_entities("clean", frame, entities())
            recorder.add_predicates("degraded", frame, condition,
                                    estimates(frame, "N" if wrong else "T", DEGRADED_IDS))
            recorder.add_entities("degraded", frame, entities(DEGRADED_IDS))
            level = "ERROR" if condition.severity >= 3 else "OK"
            recorder.add_report("reliability", ReportView(frame, "clean_twin", condition, {
                "contact": GroupTrust("contact", level), "static": GroupTrust("static", "OK")}))
            recorder.add_ground_truth_action(frame, "grasp")
            trusted = level == "OK"
            recorder.add_action(ActionView(frame, "grasp" if trusted else "idle", 0.7, trusted))
            frame += 1
    recorder.set_node_status(NodeStatus("/degraded/perception", "OK", "", {"image_raw.processed": 59}))
    return recorder


def test_prs_and_agreement_per_group_and_condition_against_the_clean_twin(recorder):
    summary = recorder.summary()
    rows = summary["conditions"]
    assert [(row["kind"], row["severity"]) for row in rows] == [(c.kind, c.severity) for c in CONDITIONS]
    # PRS weighs agreement by the degraded confidence (0.9 for contact, 0.8 for static)
    assert [row["prs"]["contact"] for row in rows] == pytest.approx([0.9 * (1 - 0.2 * s) for s in range(6)])
    assert [row["agreement"]["contact"] for row in rows] == pytest.approx([1 - 0.2 * s for s in range(6)])
    assert all(row["prs"]["static"] == pytest.approx(0.8) for row in rows)
    assert all(row["agreement"]["static"] == 1.0 for row in rows)
    assert all(row["prs"]["dynamic"] is None for row in rows)
    assert rows[-1]["frames"] == {"degraded": 10, "matched": 9, "without_clean_twin": 1, "without_entities": 0}


def test_entities_without_a_partner_on_the_other_side_are_counted_per_frame(recorder):
    """From severity 4 the degraded pipeline also detects an occluder patch as a cube (no clean partner)
    and loses the bowl (a clean entity without a degraded partner)."""
    for index, frame in recorder.frames["degraded"].items():
        if frame.condition.severity >= 4:
            degraded = [e for e in recorder.entities["degraded"][index] if e.label != "bowl"]
            patch = Entity(id=99, label="cube", role="manipulated_object", box=np.array([200.0, 100, 230, 130]))
            recorder.entities["degraded"][index] = degraded + [patch]
    rows = recorder.summary()["conditions"]
    assert rows[0]["entities"] == {"per_frame": 4.0, "extra_per_frame": 0.0, "relabelled_per_frame": 0.0,
                                   "false_per_frame": 0.0, "missed_per_frame": 0.0}
    assert rows[4]["entities"] == rows[5]["entities"] == {"per_frame": 4.0, "extra_per_frame": 1.0,
                                                          "relabelled_per_frame": 0.0, "false_per_frame": 1.0,
                                                          "missed_per_frame": 1.0}
    recorder.associate = False
    assert recorder.summary()["conditions"][0]["entities"] == {}


def test_a_lost_track_still_reported_is_no_detection(recorder):
    """The occluder patch of severity 4-5 is detected on the even frames only and reported lost
    (visibility 0, its last box) on the odd ones: only the frames it is seen on count as false
    detections."""
    for index, frame in recorder.frames["degraded"].items():
        if frame.condition.severity >= 4:
            patch = Entity(id=99, label="cube", role="manipulated_object", box=np.array([200.0, 100, 230, 130]),
                           visibility=1.0 if index % 2 == 0 else 0.0)
            recorder.entities["degraded"][index] = [*recorder.entities["degraded"][index], patch]
    rows = recorder.summary()["conditions"]
    shares = []
    for row, condition in zip(rows[4:], CONDITIONS[4:]):
        frames = [i for i, f in recorder.frames["degraded"].items()
                  if f.condition == condition and i in recorder.frames["clean"]]
        shares.append(sum(i % 2 == 0 for i in frames) / len(frames))
        assert row["entities"]["false_per_frame"] == pytest.approx(shares[-1], abs=1e-4)
        assert row["entities"]["per_frame"] == pytest.approx(4 + shares[-1], abs=1e-4)
    assert 0 < min(shares) and max(shares) < 1


def test_an_object_the_degraded_side_names_wrongly_is_relabelled_not_false(recorder):
    """From severity 4 the degraded pipeline reads the bowl as a box: an extra entity (no clean
    partner of its class) that a clean entity of another class covers, so not a false detection."""
    for index, frame in recorder.frames["degraded"].items():
        if frame.condition.severity >= 4:
            recorder.entities["degraded"][index] = [dataclasses.replace(e, label="box") if e.label == "bowl" else e
                                                    for e in recorder.entities["degraded"][index]]
    rows = recorder.summary()["conditions"]
    assert rows[5]["entities"] == {"per_frame": 4.0, "extra_per_frame": 1.0, "relabelled_per_frame": 1.0,
                                   "false_per_frame": 0.0, "missed_per_frame": 1.0}


def test_without_association_only_shared_ids_meet(recorder):
    recorder.associate = False
    rows = recorder.summary()["conditions"]
    assert all(row["agreement"]["contact"] == 0.0 for row in rows)     # every clean stream missed
    assert rows[-1]["frames"] == {"degraded": 10, "matched": 9, "without_clean_twin": 1}


def test_frames_without_both_sides_entities_are_not_compared(recorder):
    del recorder.entities["degraded"][0]
    assert recorder.summary()["conditions"][0]["frames"] == {"degraded": 10, "matched": 9, "without_clean_twin": 0,
                                                             "without_entities": 1}


def test_trust_counts_and_action_accuracy_per_condition(recorder):
    rows = recorder.summary()["conditions"]
    assert rows[1]["trust"]["reliability"]["contact"] == {"OK": 10, "WARN": 0, "ERROR": 0, "STALE": 0}
    assert rows[4]["trust"]["reliability"]["contact"] == {"OK": 0, "WARN": 0, "ERROR": 10, "STALE": 0}
    assert rows[0]["action"] == {"frames": 10, "with_ground_truth": 10, "accuracy": 1.0, "trusted_fraction": 1.0,
                                 "accuracy_trusted": 1.0, "accuracy_untrusted": None}
    assert rows[5]["action"]["accuracy"] == 0.0 and rows[5]["action"]["trusted_fraction"] == 0.0
    assert rows[5]["action"]["accuracy_untrusted"] == 0.0 and rows[5]["action"]["accuracy_trusted"] is None


def test_accounting_timeline_and_limits(recorder):
    summary = recorder.summary()
    assert summary["frame_accounting"]["nodes"] == {"/degraded/perception": {"image_raw.processed": 59}}
    assert summary["frame_accounting"]["dashboard"] == {
        "clean_predicate_frames": 59, "degraded_predicate_frames": 60, "matched": 59, "actions": 60,
        "ground_truth_actions": 60, "reports": 60,
        "first_frames": {"clean_predicate": 0, "degraded_predicate": 0, "action": 0, "ground_truth_action": 0}}
    assert summary["timeline"][35] == {"label": "reliability", "frame_index": 35, "condition": "occlusion:3",
                                       "trust": {"contact": "ERROR", "static": "OK"}}
    assert summary["agreement_limits"] == {"warn": 0.8, "error": 0.6}
    json.dumps(summary)  # plain JSON


def test_first_frames_bound_what_a_late_listener_missed():
    late = SweepRecorder()
    for frame in (7, 5, 9):
        late.add_ground_truth_action(frame, "grasp")
    assert late.frame_accounting()["dashboard"]["first_frames"] == {
        "clean_predicate": None, "degraded_predicate": None, "action": None, "ground_truth_action": 5}


def test_an_empty_recorder_summarises_to_nothing():
    summary = SweepRecorder().summary()
    assert summary["conditions"] == [] and summary["timeline"] == []
    with pytest.raises(ValueError, match="side must be one of"):
        SweepRecorder().add_predicates("twin", 0, Condition("none", 0), [])
    with pytest.raises(ValueError, match="side must be one of"):
        SweepRecorder().add_entities("twin", 0, [])


def test_the_plot_is_written(recorder, tmp_path):
    path = plot_summary(recorder.summary(), tmp_path / "plots" / "sweep.png", title="test sweep")
    assert path.stat().st_size > 10_000 and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
