import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from predrel_ros.ros.inputs.synchroniser import ApproximateTimeSynchroniser

INPUTS = ("image", "depth", "info")


def make(slop_ns=10, queue_size=4):
    matched, dropped = [], []
    sync = ApproximateTimeSynchroniser(INPUTS, slop_ns, queue_size, matched.append,
                                       lambda name, item: dropped.append((name, item)))
    return sync, matched, dropped


def test_sets_with_stamps_within_the_slop_are_matched_in_input_order():
    sync, matched, dropped = make()
    sync.add("depth", 100, "d100")
    sync.add("image", 103, "i103")
    assert matched == []
    sync.add("info", 95, "c95")
    assert matched == [["i103", "d100", "c95"]] and dropped == []
    assert sync.pending() == {"image": 0, "depth": 0, "info": 0}


def test_messages_without_partner_are_dropped_and_reported():
    sync, matched, dropped = make()
    sync.add("image", 100, "i100")  # its depth never comes
    sync.add("image", 200, "i200")
    sync.add("depth", 200, "d200")
    sync.add("info", 201, "c201")
    assert matched == [["i200", "d200", "c201"]]
    assert dropped == [("image", "i100")]
    sync.add("depth", 150, "late")  # older than the last matched set
    assert dropped[-1] == ("depth", "late")


def test_queue_overflow_drops_the_oldest():
    sync, matched, dropped = make(queue_size=2)
    for stamp in (1, 2, 3):
        sync.add("image", stamp * 100, f"i{stamp}")
    assert dropped == [("image", "i1")] and sync.pending()["image"] == 2
    sync.add("image", 50, "i0.5")  # older than the full queue: it leaves at once
    assert dropped[-1] == ("image", "i0.5") and sync.pending()["image"] == 2
    assert sorted(item for _, item in sync.drain()) == ["i2", "i3"]


def test_invalid_setups_are_refused():
    with pytest.raises(ValueError):
        ApproximateTimeSynchroniser(("a",), 1, 1, print, print)
    with pytest.raises(ValueError):
        ApproximateTimeSynchroniser(("a", "b"), -1, 1, print, print)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(INPUTS), st.integers(0, 40)), max_size=60), st.integers(0, 3),
       st.integers(1, 5))
def test_every_message_is_matched_dropped_or_pending_exactly_once(arrivals, slop, queue_size):
    sync, matched, dropped = make(slop, queue_size)
    for serial, (name, tick) in enumerate(arrivals):
        sync.add(name, tick * 10, (name, serial))
    pending = sync.drain()
    out = [item for group in matched for item in group] + [item for _, item in dropped] + [item for _, item in pending]
    assert sorted(out) == sorted((name, serial) for serial, (name, _) in enumerate(arrivals))
    for group in matched:
        stamps = [arrivals[serial][1] * 10 for _, serial in group]
        assert [name for name, _ in group] == list(INPUTS)
        assert max(stamps) - min(stamps) <= 2 * slop * 10


def test_a_far_future_set_never_blocks_and_a_restarted_clock_is_followed():
    from predrel_ros.core.stream_order import RESTART_AFTER

    restarts = []
    matched, dropped = [], []
    sync = ApproximateTimeSynchroniser(INPUTS, 10, 4, matched.append, lambda name, item: dropped.append(item),
                                       restarts.append)

    def frame(stamp):
        for name in INPUTS:
            sync.add(name, stamp, f"{name}{stamp}")
    frame(1000)
    frame((2**31 - 1) * 10**9)                       # a bogus stamp on every input: dropped at once
    frame(2000)
    assert [group[0] for group in matched] == ["image1000", "image2000"] and len(dropped) == 3
    for stamp in range(RESTART_AFTER + 2):           # the clock went back (a bag played again)
        frame(stamp * 100)
    assert restarts and "restarted" in restarts[0]
    taken = range(RESTART_AFTER - 1, RESTART_AFTER + 2)     # the restart_after-th old frame starts anew
    assert [group[0] for group in matched[2:]] == [f"image{k * 100}" for k in taken]
