import pytest
from hypothesis import given, settings, strategies as st

from predrel_ros.reliability.matching import EVALUATED, REFERENCE, FrameMatcher


def test_pairs_in_either_arrival_order():
    matcher = FrameMatcher(capacity=4)
    assert matcher.add(EVALUATED, 0, "e0") is None
    assert matcher.add(REFERENCE, 0, "r0") == (0, "e0", "r0")
    assert matcher.add(REFERENCE, 1, "r1") is None
    assert matcher.add(EVALUATED, 1, "e1") == (1, "e1", "r1")
    assert matcher.snapshot() == {"matched": 2, "unmatched_evaluated": 0, "late_evaluated": 0,
                                  "duplicate_evaluated": 0, "unmatched_reference": 0, "late_reference": 0,
                                  "duplicate_reference": 0, "pending_evaluated": 0, "pending_reference": 0}


def test_a_frame_one_side_lost_is_unmatched_once_a_newer_pair_completes():
    matcher = FrameMatcher(capacity=8)
    matcher.add(REFERENCE, 5, "r5")          # the degraded pipeline dropped frame 5
    matcher.add(REFERENCE, 6, "r6")
    assert matcher.add(EVALUATED, 6, "e6") == (6, "e6", "r6")
    assert matcher.counters["unmatched_reference"] == 1
    assert matcher.add(EVALUATED, 5, "e5") is None    # too late: frame 6 is already in the window
    assert matcher.counters["late_evaluated"] == 1


def test_full_buffer_drops_the_oldest_and_duplicates_keep_the_first():
    matcher = FrameMatcher(capacity=2)
    for frame in (1, 2, 3):                   # the reference pipeline is silent
        matcher.add(EVALUATED, frame, f"e{frame}")
    assert matcher.counters["unmatched_evaluated"] == 1 and matcher.pending(EVALUATED) == 2
    matcher.add(EVALUATED, 3, "again")
    assert matcher.counters["duplicate_evaluated"] == 1
    assert matcher.add(REFERENCE, 3, "r3") == (3, "e3", "r3")
    assert matcher.counters["unmatched_evaluated"] == 2      # frame 2 can no longer be matched
    matcher.add(REFERENCE, 9, "r9")
    matcher.reset()                           # a new sequence: waiting frames are unmatched
    assert matcher.counters["unmatched_reference"] == 1 and matcher.last_matched is None
    with pytest.raises(ValueError, match="capacity"):
        FrameMatcher(0)
    with pytest.raises(ValueError, match="side"):
        matcher.add("left", 0, None)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([EVALUATED, REFERENCE]), st.integers(0, 30)), max_size=120),
       st.integers(1, 6))
def test_every_frame_is_accounted_for_once(arrivals, capacity):
    matcher = FrameMatcher(capacity)
    matched = []
    for side, frame in arrivals:
        pair = matcher.add(side, frame, (side, frame))
        if pair is not None:
            matched.append(pair[0])
            assert pair[1] == (EVALUATED, pair[0]) and pair[2] == (REFERENCE, pair[0])
    assert matched == sorted(set(matched)) == matched          # strictly increasing
    snapshot = matcher.snapshot()
    for side in (EVALUATED, REFERENCE):
        given_count = sum(1 for s, _ in arrivals if s == side)
        accounted = sum(snapshot[f"{state}_{side}"] for state in ("unmatched", "late", "duplicate", "pending"))
        assert accounted + snapshot["matched"] == given_count
        assert snapshot[f"pending_{side}"] <= capacity
