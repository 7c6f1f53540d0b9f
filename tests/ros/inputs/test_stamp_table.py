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
