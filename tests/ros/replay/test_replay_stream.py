"""Replay numbering, looping and pacing, without ROS."""
import numpy as np
import pytest

from predrel_ros.core.errors import UserError
from predrel_ros.core.frame import Frame
from predrel_ros.ros.replay.replay_stream import DEFAULT_PERIOD_NS, Pacer, replay_frames

RGB = np.zeros((2, 2, 3), np.uint8)


def source(stamps_ms):
    return lambda: iter([Frame(index=i, stamp_ns=int(ms * 1e6), rgb=RGB) for i, ms in enumerate(stamps_ms)])


def test_one_pass_numbers_frames_from_the_start_offset():
    played = list(replay_frames(source([1000, 1040, 1080, 1120]), start_offset_s=0.05))
    assert [(r.frame_index, r.time_ns, r.frame.index) for r in played] == [(0, 0, 2), (1, 40_000_000, 3)]


def test_loops_keep_indices_and_times_increasing():
    stream = replay_frames(source([0, 100, 200]), max_frames=2, loop=True)
    played = [next(stream) for _ in range(6)]
    assert [r.frame_index for r in played] == list(range(6))
    assert [r.frame.index for r in played] == [0, 1] * 3
    assert [r.loop for r in played] == [0, 0, 1, 1, 2, 2]
    # a pass lasts its frames plus one frame period (100 ms), so times never repeat
    assert [r.time_ns // 1_000_000 for r in played] == [0, 100, 200, 300, 400, 500]
    single = replay_frames(source([5]), loop=True)
    assert [next(single).time_ns for _ in range(3)] == [0, DEFAULT_PERIOD_NS, 2 * DEFAULT_PERIOD_NS]


def test_passes_end_a_loop():
    played = list(replay_frames(source([0, 100, 200]), loop=True, passes=2))
    assert [r.frame_index for r in played] == list(range(6)) and played[-1].loop == 1
    assert len(list(replay_frames(source([0, 100, 200]), loop=False, passes=2))) == 3
    with pytest.raises(ValueError):
        list(replay_frames(source([0]), passes=-1))


def test_empty_or_backwards_sources_are_refused():
    with pytest.raises(UserError, match="no frames after start_offset_s=5"):
        list(replay_frames(source([0, 100]), start_offset_s=5.0))
    with pytest.raises(UserError, match="goes back in time"):
        list(replay_frames(source([0, 100, 50])))
    with pytest.raises(ValueError):
        list(replay_frames(source([0]), max_frames=-1))


class FakeTime:
    def __init__(self):
        self.now = 10.0
        self.sleeps = []

    def clock(self):
        return self.now

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds


def test_pacer_holds_frames_to_source_time_over_rate_and_reanchors_on_rate_change():
    fake = FakeTime()
    pacer = Pacer(2.0, fake.clock, fake.sleep)
    assert pacer.wait(0) == 0.0 and fake.now == 10.0
    pacer.wait(1_000_000_000)  # 1 s of source time at rate 2: due 0.5 s later
    assert fake.now == pytest.approx(10.5)
    fake.now += 0.75  # processing took long: the next frame is late, no sleep
    assert pacer.wait(1_500_000_000) == pytest.approx(0.5)
    pacer.set_rate(1.0)
    pacer.wait(2_000_000_000)  # re-anchored: due at once
    assert fake.now == pytest.approx(11.25)
    pacer.wait(2_200_000_000)
    assert fake.now == pytest.approx(11.45)
    with pytest.raises(ValueError):
        Pacer(0.0)


def test_pacer_wait_returns_when_stopped():
    fake = FakeTime()
    pacer = Pacer(1.0, fake.clock, fake.sleep)
    pacer.wait(0)
    assert pacer.wait(60_000_000_000, stop=lambda: len(fake.sleeps) >= 3) == 0.0
    assert len(fake.sleeps) == 3
