"""TwinDegrader: frame-by-frame use of degrade_stream gives the same frames as the offline stream."""
import numpy as np

from predrel_ros.degradations import FrameAction, ScheduledDegrader, degrade_stream, parse_schedule
from predrel_ros.ros.replay.twin_degrader import TwinDegrader


def frames(n):
    rng = np.random.default_rng(3)
    return [(i, rng.integers(0, 256, (24, 32, 3), dtype=np.uint8)) for i in range(n)]


def test_push_results_equal_the_offline_stream_and_repeats_carry_their_payload():
    schedule = "segments:0=frame_drop:5,20=blur:3,30=occlusion:4"
    offline = list(degrade_stream(frames(40), ScheduledDegrader(parse_schedule(schedule), seed=9)))
    twin = TwinDegrader(schedule, seed=9)
    pushed = [twin.degrade(i, image, payload=f"payload-{i}") for i, image in frames(40)]
    assert [p.degraded.action for p in pushed] == [o.action for o in offline]
    assert {FrameAction.DROP, FrameAction.REPEAT} <= {o.action for o in offline[:20]}
    for p, o in zip(pushed, offline):
        assert p.degraded.source_index == o.source_index
        assert (p.degraded.image is None) == (o.image is None)
        if o.image is not None:
            np.testing.assert_array_equal(p.degraded.image, o.image)
        assert p.payload == (None if o.source_index is None else f"payload-{o.source_index}")


def test_schedule_change_applies_from_the_given_frame_and_sweeps_start_there():
    twin = TwinDegrader("none", seed=0)
    data = frames(12)
    kinds = [twin.degrade(i, image).degraded.degrader.kind for i, image in data[:5]]
    twin.set_schedule("sweep:blur:2", start_frame=5)
    conditions = [(twin.degrade(i, image).degraded.degrader.kind, twin.degrader.degrader_at(i).severity)
                  for i, image in data[5:]]
    assert kinds == ["none"] * 5
    assert [severity for _, severity in conditions] == [0, 0, 1, 1, 2, 2, 3]
