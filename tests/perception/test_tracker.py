import logging

import numpy as np
import pytest

from predrel_ros.perception.detections import Detections
from predrel_ros.perception.kalman import BoxKalmanFilter, xyah_to_xyxy, xyxy_to_xyah
from predrel_ros.perception.track_quality import TrackHistory, TrackQualityConfig
from predrel_ros.perception.tracker import ByteTracker, TrackerConfig


def dets(*rows):
    """rows of (x1, y1, x2, y2, score, class)."""
    data = np.array(rows, dtype=np.float64).reshape(-1, 6)
    return Detections(data[:, :4], data[:, 4], data[:, 5].astype(int))


def box_at(x, y, w=20, h=30):
    return [x, y, x + w, y + h]


def ids_by_detection(objects):
    return {o.detection: o.track_id for o in objects if o.detection is not None}


def test_boxes_round_trip_through_the_kalman_parameterisation():
    box = np.array([10.0, 20.0, 40.0, 80.0])
    np.testing.assert_allclose(xyah_to_xyxy(xyxy_to_xyah(box)), box)


def test_kalman_learns_constant_velocity_and_predicts_over_gaps():
    kf = BoxKalmanFilter()
    mean, cov = kf.initiate(xyxy_to_xyah(box_at(0, 0)))
    for t in range(1, 20):
        mean, cov = kf.predict(mean, cov)
        mean, cov = kf.update(mean, cov, xyxy_to_xyah(box_at(3 * t, 0)))
    predicted, _ = kf.predict(mean, cov, steps=5)
    assert predicted[0] == pytest.approx(10 + 3 * 24, abs=0.5)  # centre x of box_at(3 * 24, 0)


def test_ids_persist_on_clean_linear_motion_and_quality_reaches_one():
    tracker = ByteTracker()
    for t in range(20):
        objects = tracker.update(t, dets(box_at(5 + 4 * t, 50) + [0.9, 0], box_at(200 - 3 * t, 100) + [0.8, 1]))
    assert sorted(o.track_id for o in objects) == [1, 2]
    assert all(o.detection is not None for o in objects)
    assert all(o.quality.value == pytest.approx(1.0, abs=1e-9) for o in objects)


def test_first_frame_confirms_later_tracks_need_a_second_hit():
    tracker = ByteTracker()
    assert len(tracker.update(0, dets(box_at(10, 10) + [0.9, 0]))) == 1
    first = tracker.update(1, dets(box_at(10, 10) + [0.9, 0], box_at(100, 100) + [0.9, 0]))
    assert [o.track_id for o in first] == [1]  # the new object is tentative
    second = tracker.update(2, dets(box_at(10, 10) + [0.9, 0], box_at(100, 100) + [0.9, 0]))
    assert sorted(o.track_id for o in second) == [1, 2]
    assert next(o for o in second if o.track_id == 2).quality.maturity == pytest.approx(2 / 3)


def test_a_one_frame_spurious_detection_never_becomes_a_track():
    tracker = ByteTracker()
    tracker.update(0, dets(box_at(10, 10) + [0.9, 0]))
    tracker.update(1, dets(box_at(10, 10) + [0.9, 0], box_at(200, 150) + [0.95, 0]))
    objects = tracker.update(2, dets(box_at(10, 10) + [0.9, 0]))
    assert [o.track_id for o in objects] == [1]


def test_low_score_detections_keep_a_track_alive():
    tracker = ByteTracker()
    for t in range(5):
        tracker.update(t, dets(box_at(10 + 2 * t, 10) + [0.9, 0]))
    for t in range(5, 10):  # blurred: the detector is unsure
        objects = tracker.update(t, dets(box_at(10 + 2 * t, 10) + [0.3, 0]))
        assert ids_by_detection(objects) == {0: 1}
    strict = ByteTracker(TrackerConfig(low_threshold=0.5))
    for t in range(5):
        strict.update(t, dets(box_at(10 + 2 * t, 10) + [0.9, 0]))
    assert ids_by_detection(strict.update(5, dets(box_at(20, 10) + [0.3, 0]))) == {}


def test_classes_never_share_an_id_even_when_boxes_overlap():
    tracker = ByteTracker(class_families=[2, 0])
    for t in range(10):  # a hand (class 1) passes over a cube (class 0)
        objects = tracker.update(t, dets(box_at(100, 100) + [0.9, 0], box_at(60 + 8 * t, 100) + [0.9, 1]))
        by_class = {o.class_id: o.track_id for o in objects if o.detection is not None}
        assert by_class == {0: 1, 1: 2}


def test_a_class_flicker_within_a_family_keeps_one_track_and_the_voted_class():
    tracker = ByteTracker(class_families=[0, 2, 2])   # class 0 a hand, 1 cube and 2 cylinder: objects
    flicker = [1, 1, 2, 1, 2, 1, 1, 2, 2, 1]          # a cube read as a cylinder on 4 of 10 frames
    for t, detected in enumerate(flicker):
        objects = tracker.update(t, dets(box_at(100 + t, 100) + [0.8, detected]))
        assert [(o.track_id, o.class_id) for o in objects] == [(1, 1)]


def test_a_sustained_relabel_takes_over_the_track_after_its_votes():
    tracker = ByteTracker(TrackerConfig(class_memory=5.0), class_families=[2, 2])
    classes = [tracker.update(t, dets(box_at(100, 100) + [0.8, 0 if t < 5 else 1]))[0].class_id for t in range(12)]
    assert classes[:6] == [0] * 6            # one frame of the other class does not outvote five
    assert classes[-1] == 1 and classes.index(1) < 9
    assert {o.track_id for o in tracker.update(12, dets(box_at(100, 100) + [0.8, 1]))} == {1}


def test_a_lost_track_is_never_relabelled_onto_another_object():
    tracker = ByteTracker(class_families=[2, 2])
    for t in range(3):
        tracker.update(t, dets(box_at(100, 100) + [0.8, 0]))
    assert [o.detection for o in tracker.update(3, dets())] == [None]         # the cylinder is hidden
    tracker.update(4, dets(box_at(100, 100) + [0.8, 1]))                       # a cube where it was
    objects = tracker.update(5, dets(box_at(100, 100) + [0.8, 1]))
    assert sorted((o.track_id, o.class_id, o.detection) for o in objects) == [(1, 0, None), (2, 1, 0)]


def test_without_families_or_with_relabel_off_ids_stay_class_consistent():
    for tracker in (ByteTracker(), ByteTracker(TrackerConfig(relabel_cost=None), class_families=[2, 2])):
        tracker.update(0, dets(box_at(100, 100) + [0.8, 0]))
        tracker.update(1, dets(box_at(100, 100) + [0.8, 0]))
        assert [(o.track_id, o.detection) for o in tracker.update(2, dets(box_at(100, 100) + [0.8, 1]))] == [(1, None)]
        objects = tracker.update(3, dets(box_at(100, 100) + [0.8, 1]))   # a new track, confirmed on its second hit
        assert sorted((o.track_id, o.class_id, o.detection) for o in objects) == [(1, 0, None), (2, 1, 0)]


def test_a_same_class_detection_wins_over_a_relabel_of_the_same_overlap():
    tracker = ByteTracker(class_families=[2, 2])
    tracker.update(0, dets(box_at(100, 100) + [0.8, 0]))
    objects = tracker.update(1, dets(box_at(101, 100) + [0.8, 1], box_at(101, 100) + [0.8, 0]))
    assert ids_by_detection(objects) == {1: 1}


def test_dropped_frames_are_predicted_over_and_lower_continuity():
    tracker = ByteTracker()
    frames = list(range(10)) + list(range(14, 20))  # frames 10..13 dropped upstream
    for t in frames:
        objects = tracker.update(t, dets(box_at(10 + 6 * t, 40) + [0.9, 0]))
        assert ids_by_detection(objects) == {0: 1}
    (obj,) = objects
    assert obj.quality.continuity == pytest.approx(16 / 20)


@pytest.mark.parametrize("finds_lost", [False, True])
def test_a_low_score_detection_finds_a_lost_track_only_when_configured(finds_lost):
    """A held object missed for two frames comes back with a low score (partly hidden by the hand):
    ByteTrack's second stage looks at tracked tracks only, so without the option it stays lost and
    its low-score detections never start a track; with it, the lost track takes them."""
    tracker = ByteTracker(TrackerConfig(low_score_finds_lost=finds_lost))
    for t in range(5):
        tracker.update(t, dets(box_at(50, 50) + [0.9, 0]))
    for t in range(5, 7):
        tracker.update(t, dets())
    found = ids_by_detection(tracker.update(7, dets(box_at(50, 50) + [0.35, 0])))
    assert found == ({0: 1} if finds_lost else {})
    far = ids_by_detection(tracker.update(8, dets(box_at(150, 150) + [0.35, 0])))   # not where it was
    assert far == {}


def test_lost_tracks_are_reported_then_found_again_within_the_buffer():
    tracker = ByteTracker(TrackerConfig(lost_buffer=5))
    for t in range(5):
        tracker.update(t, dets(box_at(50, 50) + [0.9, 0]))
    for t in range(5, 9):  # occluded for 4 frames
        objects = tracker.update(t, dets())
        assert [(o.track_id, o.detection, o.frames_since_seen) for o in objects] == [(1, None, t - 4)]
    assert ids_by_detection(tracker.update(9, dets(box_at(50, 50) + [0.9, 0]))) == {0: 1}
    for t in range(10, 20):
        tracker.update(t, dets())
    tracker.update(20, dets(box_at(50, 50) + [0.9, 0]))
    assert ids_by_detection(tracker.update(21, dets(box_at(50, 50) + [0.9, 0]))) == {0: 2}


def test_a_jump_is_a_suspected_switch_that_lowers_quality():
    tracker = ByteTracker()
    for t in range(10):
        tracker.update(t, dets(box_at(100, 100, 40, 40) + [0.9, 0]))
    (jumped,) = tracker.update(10, dets(box_at(125, 100, 40, 40) + [0.9, 0]))  # IoU 0.23
    assert jumped.track_id == 1
    assert jumped.quality.switches == 0.5
    assert jumped.quality.smoothness < 0.7  # one 0.625-height jerk among 9 smooth ones
    assert jumped.quality.value < 0.3


def test_recovery_keeps_the_id_of_a_small_box_that_jumps_without_overlap():
    # a partly occluded 8 px object whose visible box jumps 10 px: no IoU left, centre within 1.25 sides
    def run(config):
        tracker = ByteTracker(config)
        for t in range(5):
            tracker.update(t, dets([40, 40, 48, 48, 0.9, 0], [200, 100, 230, 130, 0.9, 1]))
        tracker.update(5, dets([50, 40, 58, 48, 0.9, 0], [200, 100, 230, 130, 0.9, 1]))
        return ids_by_detection(tracker.update(6, dets([50, 40, 58, 48, 0.9, 0], [200, 100, 230, 130, 0.9, 1])))
    assert run(TrackerConfig(recovery_distance=1.5)) == {0: 1, 1: 2}
    assert run(TrackerConfig(recovery_distance=0.0)) == {0: 3, 1: 2}  # ByteTrack alone: a new id
    assert run(TrackerConfig(recovery_distance=1.0)) == {0: 3, 1: 2}  # beyond the gate


def test_a_frame_index_going_back_starts_a_new_sequence(caplog):
    tracker = ByteTracker()
    for t in range(3):
        tracker.update(t, dets(box_at(10, 10) + [0.9, 0]))
    caplog.set_level(logging.WARNING)
    objects = tracker.update(0, dets(box_at(10, 10) + [0.9, 0]))
    assert [o.track_id for o in objects] == [1] and "new sequence" in caplog.text
    assert tracker.tracks[0].history.hits == 1


def test_a_frame_index_far_ahead_starts_a_new_sequence_too(caplog):
    tracker = ByteTracker()
    for t in range(3):
        tracker.update(t, dets(box_at(10, 10) + [0.9, 0]))
    caplog.set_level(logging.WARNING)
    objects = tracker.update(2**63, dets(box_at(10, 10) + [0.9, 0]))     # no 2**63-frame Kalman step
    assert [o.track_id for o in objects] == [1] and "ahead" in caplog.text and "new sequence" in caplog.text
    assert tracker.update(2**63 + 1, dets(box_at(10, 10) + [0.9, 0]))[0].track_id == 1


def test_track_history_by_hand():
    history = TrackHistory(TrackQualityConfig(window=10, mature_after=4, smoothness_scale=0.1), frame_index=0)
    history.observe(0, np.array([0, 0, 10, 10]), None)
    history.observe(1, np.array([1, 0, 11, 10]), 1.0)
    history.observe(2, np.array([3, 0, 13, 10]), 20.0)  # suspected switch (> 13.28)
    quality = history.quality(3)  # frame 3 not observed
    assert quality.continuity == pytest.approx(3 / 4)
    assert quality.maturity == pytest.approx(3 / 4)
    assert quality.switches == pytest.approx(1 / 2)
    # centres x 5, 6, 8: second difference 1 px over a height of 10 -> jerk 0.1 -> smoothness 1/2
    assert quality.smoothness == pytest.approx(1 / 2)
    assert quality.value == pytest.approx(0.75 * 0.75 * 0.5 * 0.5)
    later = history.quality(20)  # everything observed has left the 10-frame window
    assert later.continuity == 0.0 and later.switches == 1.0


@pytest.mark.parametrize("kwargs, message", [({"high_threshold": 1.2}, "high_threshold"),
                                             ({"low_threshold": 0.7}, "must not exceed"),
                                             ({"lost_buffer": -1}, "lost_buffer"),
                                             ({"relabel_cost": 1.5}, "relabel_cost"),
                                             ({"class_memory": 0.5}, "class_memory")])
def test_tracker_config_is_validated(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TrackerConfig(**kwargs)
