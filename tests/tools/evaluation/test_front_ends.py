import numpy as np
import pytest

from predrel_ros.degradations import CLEAN, Condition, Degrader, FrameAction, degrade_stream
from predrel_ros.reliability.image_quality import ImageQuality
from predrel_ros.tools.evaluation.data import load_episode, resolve_data
from predrel_ros.tools.evaluation.front_ends import NotApplicable, OracleFrontEnd, Timer, delivery, make_front_end


def test_delivery_matches_the_degraded_stream_of_the_replay():
    frames = [(t, np.full((2, 2, 3), t, np.uint8)) for t in range(120)]
    for severity in (1, 3, 5):
        streamed = [(d.frame_index, d.source_index) for d in degrade_stream(frames, Degrader("frame_drop", severity, 7))
                    if d.action != FrameAction.DROP]
        assert delivery(Condition("frame_drop", severity), 7, 120) == streamed
    assert delivery(Condition("blur", 5), 7, 4) == [(0, 0), (1, 1), (2, 2), (3, 3)]


@pytest.fixture(scope="module")
def episode(controlled_dataset):
    return load_episode(resolve_data(controlled_dataset).split("test")[0], images=True)


def test_oracle_applies_only_what_a_perfect_front_end_would_see(episode):
    oracle, timer = OracleFrontEnd(), Timer()
    clean = oracle.run(episode, CLEAN, 3, None, timer)
    assert [len(e) for e in clean.entities] == [len(e) for e in episode.gt_entities]
    for kind in ("blur", "illumination", "low_resolution"):
        with pytest.raises(NotApplicable):
            oracle.run(episode, Condition(kind, 3), 3, clean, timer)
    occluded = oracle.run(episode, Condition("occlusion", 5), 3, clean, timer)
    assert (sum(e.visibility for f in occluded.entities for e in f)
            < sum(e.visibility for f in clean.entities for e in f))
    dropped = oracle.run(episode, Condition("frame_drop", 5), 3, clean, timer)
    assert len(dropped.delivered) < episode.num_frames
    assert all(entities is episode.gt_entities[source] for (_, source), entities in zip(dropped.delivered,
                                                                                       dropped.entities))
    noisy = oracle.run(episode, Condition("detection_noise", 5), 3, clean, timer)
    assert noisy.delivered == clean.delivered and noisy.entities != clean.entities


def test_perception_from_cached_detections_equals_the_perceiver_on_the_images(episode, constant_model, tmp_path):
    from predrel_ros.perception.config import PerceptionConfig
    from predrel_ros.perception.perceiver import Perceiver

    front = make_front_end(str(constant_model), None, tmp_path)
    timer = Timer()
    blurred = front.run(episode, Condition("blur", 4), 5, None, timer)
    again = make_front_end(str(constant_model), None, tmp_path).run(episode, Condition("blur", 4), 5, None, Timer())
    direct = Perceiver(PerceptionConfig(model=str(constant_model)))
    degrader = Degrader("blur", 4, 5)
    for frame, ours, cached in zip(episode.frames, blurred.entities, again.entities):
        image = degrader.apply_image(frame.rgb, frame.index, None)
        expected = direct.process(image, frame.index, depth=frame.depth, camera=frame.camera, bgr=False)
        for a, b, c in zip(expected, ours, cached):
            assert a.id == b.id == c.id and np.array_equal(a.box, b.box) and np.array_equal(a.mask, c.mask)
            assert a.visibility == b.visibility == c.visibility and a.track_quality == b.track_quality
        assert len(expected) == len(ours) == len(cached)
    assert timer.seconds["detector"] > 0 and front.cache.misses == 1
    # the run carries the measures of the degraded images (the trust phase reads them instead of
    # degrading the images again), from the cache as well
    quality = ImageQuality()
    assert blurred.image_measures == {frame.index: quality.measure(degrader.apply_image(frame.rgb, frame.index, None))
                                      for frame in episode.frames}
    assert again.image_measures == blurred.image_measures
    noisy = front.run(episode, Condition("detection_noise", 3), 5, blurred, timer)
    assert noisy.delivered == blurred.delivered      # noise acts on the given run's entities, no new pass
