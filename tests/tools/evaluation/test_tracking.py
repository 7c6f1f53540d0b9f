import numpy as np

from predrel_ros.tools.evaluation.synthetic_tracks import SyntheticSceneConfig, synthetic_episode
from predrel_ros.tools.evaluation.tracking import Condition, conditions, evaluate_sequence, ground_truth_detector

CONFIG = SyntheticSceneConfig(frames=60)


def frames_of(episode):
    return [(t, entities, CONFIG.height, CONFIG.width, None) for t, entities in enumerate(episode)]


def test_synthetic_episodes_are_deterministic_and_well_formed():
    a, b = synthetic_episode(3, CONFIG), synthetic_episode(3, CONFIG)
    assert len(a) == 60 and all(len(f) == 6 for f in a)
    for fa, fb in zip(a, b):
        for ea, eb in zip(fa, fb):
            np.testing.assert_array_equal(ea.box, eb.box)
            assert ea.visibility == eb.visibility
    boxes = np.array([e.box for f in a for e in f])
    assert boxes.min() >= 0 and boxes[:, 2].max() <= 320 and boxes[:, 3].max() <= 240
    assert all(f[0].visibility == 1.0 for f in a)  # the frontmost entity is never covered
    assert min(e.visibility for f in a for e in f) < 1.0  # something gets occluded
    assert not np.array_equal(synthetic_episode(4, CONFIG)[0][0].box, a[0][0].box)


def test_clean_ground_truth_is_tracked_almost_perfectly_and_noise_hurts():
    episode = synthetic_episode(0, CONFIG)
    clean = evaluate_sequence(frames_of(episode), Condition("none", 0), 0, ground_truth_detector)
    noisy = evaluate_sequence(frames_of(episode), Condition("detection_noise", 5), 0, ground_truth_detector)
    assert clean.idf1 > 0.95 and clean.id_switches <= 1
    assert noisy.idf1 < clean.idf1 and noisy.misses > clean.misses


def test_dropped_frames_are_not_scored():
    episode = synthetic_episode(1, CONFIG)
    clean = evaluate_sequence(frames_of(episode), Condition("none", 0), 0, ground_truth_detector)
    dropped = evaluate_sequence(frames_of(episode), Condition("frame_drop", 5), 0, ground_truth_detector)
    assert dropped.frames < clean.frames == 60


def test_conditions_put_clean_first_and_skip_severity_zero_per_kind():
    assert conditions(["detection_noise", "frame_drop"], [0, 2]) == [
        Condition("none", 0), Condition("detection_noise", 2), Condition("frame_drop", 2)]
    assert conditions(["frame_drop"], [3]) == [Condition("frame_drop", 3)]
