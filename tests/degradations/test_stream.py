import numpy as np

from predrel_ros.degradations import Degrader, FrameAction, ScheduledDegrader, degrade_stream, parse_schedule


def _frames(start, count):
    rng = np.random.default_rng(start)
    return [(start + i, rng.integers(0, 256, (12, 16, 3), dtype=np.uint8)) for i in range(count)]


def test_frame_drop_stream_keeps_indices_and_repeats_the_last_delivered_image():
    frames = _frames(100, 200)
    images = dict(frames)
    degrader = Degrader("frame_drop", 5, seed=6)
    out = list(degrade_stream(frames, degrader))
    assert [f.frame_index for f in out] == [i for i, _ in frames]
    assert {f.action for f in out} == set(FrameAction)
    for frame in out:
        decision = degrader.decide_frame(frame.frame_index, stream_start=100)
        assert (frame.action, frame.source_index) == (decision.action, decision.source_index)
        if frame.action == FrameAction.DROP:
            assert frame.image is None
        else:
            np.testing.assert_array_equal(frame.image, images[frame.source_index])


def test_image_kinds_and_schedules_apply_per_frame():
    frames = _frames(0, 12)
    scheduled = ScheduledDegrader(parse_schedule("sweep:blur:2"), seed=1)
    for frame, (index, image) in zip(degrade_stream(frames, scheduled), frames):
        expected = scheduled.degrader_at(index).apply_image(image, index)
        assert frame.degrader.severity == index // 2 % 6
        np.testing.assert_array_equal(frame.image, expected)


def test_occlusion_targets_come_per_frame():
    frames = _frames(0, 3)
    boxes = {0: np.array([[0, 0, 8, 6]]), 1: np.array([[8, 6, 16, 12]]), 2: np.zeros((0, 4))}
    out = list(degrade_stream(frames, Degrader("occlusion", 5, seed=2), targets=boxes.get))
    assert np.any(out[0].image[:6, :8] != frames[0][1][:6, :8])
    np.testing.assert_array_equal(out[0].image[6:, 8:], frames[0][1][6:, 8:])
    np.testing.assert_array_equal(out[2].image, frames[2][1])
