import pytest

from predrel_ros.ros.inputs.stamp_table import OutOfOrder, StampTable


def test_stamp_table_matches_refuses_old_stamps_and_expires():
    now = [0.0]
    table = StampTable(capacity=3, clock=lambda: now[0])
    assert table.add(10, "a") == [] and table.add(20, "b") == []
    with pytest.raises(OutOfOrder):
        table.add(20, "again")
    with pytest.raises(OutOfOrder):
        table.add(5, "old")
    assert table.pop(10) == "a" and table.pop(10) is None
    now[0] = 1.0
    table.add(30, "c")
    assert table.add(40, "d") == []
    assert table.add(50, "e") == ["b"]  # capacity 3: the oldest leaves
    assert table.pop_older(40) == ["c"]
    now[0] = 2.5
    table.add(60, "f")
    assert table.expire(1.0) == ["d", "e"]
    assert 60 in table and table.drain() == ["f"] and len(table) == 0
    assert table.newest_stamp == 60


def test_a_far_future_stamp_is_refused_and_a_restarted_stream_gives_back_the_old_sequence():
    from predrel_ros.core.stream_order import RESTART_AFTER

    table = StampTable(capacity=10)
    table.add(10**9, "a")
    with pytest.raises(OutOfOrder, match="ahead"):
        table.add((2**31 - 1) * 10**9, "bogus")               # header stamp sec = 2**31-1
    table.add(2 * 10**9, "b")
    for k in range(RESTART_AFTER - 1):                       # a bag played again from its start
        with pytest.raises(OutOfOrder):
            table.add(k, "old")
    assert table.add(RESTART_AFTER - 1, "first again") == ["a", "b"] and table.order.restarts == 1
    assert "restarted" in table.order.reason and table.add(RESTART_AFTER, "next") == []


def test_a_table_by_frame_index_takes_the_stamp_as_the_clock():
    table = StampTable(by_frame_index=True)
    table.add(1001 * 10**9, "far ahead", frame_index=0)
    for k in range(20):                                      # one stale frame number again and again
        with pytest.raises(OutOfOrder):
            table.add(10**9 + k, "stale", frame_index=1)
    table.add(2001 * 10**9, "next", frame_index=7)
    assert table.add(2002 * 10**9, "renumbered", frame_index=0) == [] and table.order.restarts == 1
    with pytest.raises(ValueError, match="frame_index"):
        table.add(2003 * 10**9, "no index")
