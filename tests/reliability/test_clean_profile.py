import math

import numpy as np
import pytest

from predrel_ros.core.entities import MANIPULATED_OBJECT, RIGHT_HAND, Entity
from predrel_ros.predicates import PredicateExtractor
from predrel_ros.reliability.clean_profile import CleanFrame, build_clean_profile
from predrel_ros.reliability.monitor import SELF, MonitorConfig, ReliabilityMonitor
from predrel_ros.reliability.trust import TrustConfig


def rect(track_id, role, x, y):
    mask = np.zeros((120, 160), bool)
    mask[y:y + 10, x:x + 10] = True
    return Entity(id=track_id, label=role, role=role, box=[x, y, x + 9, y + 9], mask=mask)


def scene(t, hand_id=1, cube_id=2):
    return [rect(hand_id, RIGHT_HAND, 40 + t, 40), rect(cube_id, MANIPULATED_OBJECT, 40 + t, 50)]


def test_baselines_are_the_worst_clean_window():
    extractor = PredicateExtractor()
    frames = []
    for t in range(20):
        estimates = extractor.update(t, scene(t))
        frames.append((t, estimates, estimates))           # a perfect reference: every estimate agrees
    profile = build_clean_profile(frames, rolling_window=10, min_frames=5)
    assert (profile.window, profile.quantile) == (10, 1.0)
    contact = profile.baselines["contact"]
    assert contact.tpc_s == 1.0 and contact.unk_rate == 0.0 and contact.agreement == 1.0
    assert contact.calibration.samples == 20
    filled = [a for a, n in zip(contact.calibration.agreement, contact.calibration.counts) if n]
    assert filled == [1.0] * len(filled)
    # dynamic: UNK on the first two frames (too few samples); the worst window of 5+ frames holds both
    assert profile.baselines["dynamic"].unk_rate == pytest.approx(2 / 5)
    assert set(profile.calibration_maps()) >= {"contact", "static"}
    assert math.isnan(contact.violation_rate)                 # no rule was checked often enough


def test_baselines_equal_the_monitors_windows():
    """The envelope is exactly what the live monitor shows on the same frames."""
    extractor = PredicateExtractor()
    frames = [CleanFrame(t, extractor.update(t, scene(t if t % 7 else t + 5))) for t in range(40)]
    profile = build_clean_profile(frames, rolling_window=12, min_frames=10)
    monitor = ReliabilityMonitor(MonitorConfig(reference_mode=SELF, window=12, skip_replaced_tracks=False),
                                 TrustConfig(min_frames=10))
    lowest_tpc_s, lowest_confidence = {}, {}
    for frame in frames:
        monitor.add_evaluated(frame.frame_index, frame.estimates)
        for name, window in monitor.window_signals().items():
            if window["longest_stream"] >= 10:
                lowest_tpc_s[name] = min(lowest_tpc_s.get(name, 1.0), window["tpc_s"])
                lowest_confidence[name] = min(lowest_confidence.get(name, 1.0), window["confidence"])
    for name, baseline in profile.baselines.items():
        assert baseline.tpc_s == pytest.approx(lowest_tpc_s[name]), name
        assert baseline.confidence == pytest.approx(lowest_confidence[name]), name
    lenient = build_clean_profile(frames, rolling_window=12, min_frames=10, quantile=0.75)
    assert lenient.quantile == 0.75
    assert all(lenient.baselines[n].tpc_s >= profile.baselines[n].tpc_s for n in profile.baselines)


def test_perception_ids_are_associated_with_the_ground_truth_ids():
    """The pipeline numbers the hand 7 and the cube 9; ground truth 1 and 2: the calibration and
    the agreement compare the same objects."""
    truth_extractor, own_extractor = PredicateExtractor(), PredicateExtractor()
    frames = []
    for t in range(15):
        truth, own = scene(t), scene(t, hand_id=7, cube_id=9)
        frames.append(CleanFrame(t, own_extractor.update(t, own), truth_extractor.update(t, truth), own, truth))
    contact = build_clean_profile(frames, rolling_window=10, min_frames=5).baselines["contact"]
    assert contact.calibration.samples == 15 and contact.calibration.agreement_rate == 1.0
    assert contact.agreement == 1.0


def test_a_track_found_again_under_a_new_id_does_not_count_as_missing():
    extractor = PredicateExtractor()
    frames = []
    for t in range(30):
        entities = scene(t, cube_id=2 if t < 12 else 3)      # the tracker renumbered the cube at frame 12
        frames.append(CleanFrame(t, extractor.update(t, entities), None, entities))
    assert build_clean_profile(frames, rolling_window=10, min_frames=5).baselines["contact"].unk_rate == 0.0
    without_entities = [CleanFrame(f.frame_index, f.estimates) for f in frames]
    assert build_clean_profile(without_entities, rolling_window=10, min_frames=5).baselines["contact"].unk_rate > 0.3
