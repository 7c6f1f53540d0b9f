import pytest

from predrel_ros.core.stream_order import NEXT, OUT_OF_ORDER, RESTART, StreamOrder


def test_old_frames_are_refused_until_the_stream_has_clearly_restarted():
    order = StreamOrder(restart_after=3)
    for frame in (0, 1, 5):
        assert order.check(frame) == NEXT
        order.accept(frame)
    assert order.check(5) == OUT_OF_ORDER                 # a repeated index
    assert order.check(6) == NEXT                         # a newer frame taken clears the count
    order.accept(6)
    assert [order.check(frame) for frame in (0, 1)] == [OUT_OF_ORDER, OUT_OF_ORDER]
    assert order.check(2) == RESTART                      # third old frame in a row: a new sequence
    order.reset()
    order.accept(2)
    assert order.check(3) == NEXT


def test_restart_detection_can_be_switched_off():
    order = StreamOrder(restart_after=0)
    order.accept(10)
    assert all(order.check(frame) == OUT_OF_ORDER for frame in list(range(11)) * 10)
    with pytest.raises(ValueError, match="restart_after"):
        StreamOrder(-1)
