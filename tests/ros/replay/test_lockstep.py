"""The lockstep window of the replay: frames in flight until their pace message, or a timeout."""
import pytest

from predrel_ros.ros.replay.lockstep import InFlightWindow


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_full_at_the_limit_and_free_again_when_a_pace_message_covers_the_frames():
    window = InFlightWindow(limit=2, timeout_s=5.0, clock=Clock())
    assert not window.full()
    window.sent(3)
    window.sent(4)
    assert window.full() and window.in_flight == 2
    window.done_through(3)
    assert not window.full() and window.in_flight == 1
    window.done_through(10)  # a later frame's message: every earlier frame is through too
    assert window.in_flight == 0


def test_an_old_pace_message_frees_nothing():
    window = InFlightWindow(limit=1, timeout_s=5.0, clock=Clock())
    window.sent(7)
    window.done_through(6)
    assert window.full()


def test_frames_without_their_pace_message_expire_after_the_timeout():
    clock = Clock()
    window = InFlightWindow(limit=2, timeout_s=1.0, clock=clock)
    window.sent(0)
    clock.now = 0.6
    window.sent(1)
    clock.now = 1.2
    assert window.expire() == 1 and window.in_flight == 1  # frame 0 is gone, frame 1 still in time
    clock.now = 1.7
    assert window.expire() == 1 and window.in_flight == 0
    assert window.expire() == 0


@pytest.mark.parametrize("limit, timeout", [(0, 1.0), (2, 0.0)])
def test_bad_settings_are_refused(limit, timeout):
    with pytest.raises(ValueError, match="lockstep"):
        InFlightWindow(limit, timeout)
