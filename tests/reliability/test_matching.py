import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from predrel_ros.reliability.matching import (
    EVALUATED,
    EVALUATED_ENTITIES,
    REFERENCE,
    REFERENCE_ENTITIES,
    FrameIndexMatcher,
)


def pair(matched):
    """(frame_index, evaluated item, reference item) of a two-part frame."""
    if matched is None:
        return None
    index, parts = matched
    return index, parts[EVALUATED], parts[REFERENCE]


def test_pairs_in_either_arrival_order():
    matcher = FrameIndexMatcher(capacity=4)
    assert matcher.add(EVALUATED, 0, "e0") is None
    assert pair(matcher.add(REFERENCE, 0, "r0")) == (0, "e0", "r0")
    assert matcher.add(REFERENCE, 1, "r1") is None
    assert pair(matcher.add(EVALUATED, 1, "e1")) == (1, "e1", "r1")
    assert matcher.snapshot() == {"matched": 2, "unmatched_evaluated": 0, "late_evaluated": 0,
                                  "duplicate_evaluated": 0, "unmatched_reference": 0, "late_reference": 0,
                                  "duplicate_reference": 0, "pending_evaluated": 0, "pending_reference": 0}


def test_a_frame_one_side_lost_is_unmatched_once_a_newer_pair_completes():
    matcher = FrameIndexMatcher(capacity=8)
    matcher.add(REFERENCE, 5, "r5")          # the degraded pipeline dropped frame 5
    matcher.add(REFERENCE, 6, "r6")
    assert pair(matcher.add(EVALUATED, 6, "e6")) == (6, "e6", "r6")
    assert matcher.counters["unmatched_reference"] == 1
    assert matcher.add(EVALUATED, 5, "e5") is None    # too late: frame 6 is already in the window
    assert matcher.counters["late_evaluated"] == 1


def test_full_buffer_drops_the_oldest_and_duplicates_keep_the_first():
    matcher = FrameIndexMatcher(capacity=2)
    for frame in (1, 2, 3):                   # the reference pipeline is silent
        matcher.add(EVALUATED, frame, f"e{frame}")
    assert matcher.counters["unmatched_evaluated"] == 1 and matcher.pending(EVALUATED) == 2
    matcher.add(EVALUATED, 3, "again")
    assert matcher.counters["duplicate_evaluated"] == 1
    assert pair(matcher.add(REFERENCE, 3, "r3")) == (3, "e3", "r3")
    assert matcher.counters["unmatched_evaluated"] == 2      # frame 2 can no longer be matched
    matcher.add(REFERENCE, 9, "r9")
    matcher.reset()                           # a new sequence: waiting frames are unmatched
    assert matcher.counters["unmatched_reference"] == 1 and matcher.last_matched is None
    with pytest.raises(ValueError, match="capacity"):
        FrameIndexMatcher(capacity=0)
    with pytest.raises(ValueError, match="part"):
        matcher.add("left", 0, None)
    with pytest.raises(ValueError, match="two distinct parts"):
        FrameIndexMatcher((EVALUATED, EVALUATED))


def test_a_part_far_ahead_of_the_last_matched_frame_is_late_and_never_waits():
    matcher = FrameIndexMatcher(capacity=4)
    matcher.add(EVALUATED, 3, "e3")
    matcher.add(REFERENCE, 3, "r3")
    assert matcher.add(REFERENCE, 2**64 - 1, "far") is None
    assert matcher.counters["late_reference"] == 1 and matcher.pending(REFERENCE) == 0
    matcher.add(EVALUATED, 4, "e4")
    assert pair(matcher.add(REFERENCE, 4, "r4")) == (4, "e4", "r4")


def test_a_frame_is_complete_only_with_every_part():
    matcher = FrameIndexMatcher((EVALUATED, EVALUATED_ENTITIES, REFERENCE, REFERENCE_ENTITIES))
    assert matcher.add(EVALUATED_ENTITIES, 4, "ee4") is None
    assert matcher.add(EVALUATED, 4, "e4") is None
    assert matcher.add(REFERENCE, 4, "r4") is None
    assert matcher.add(REFERENCE_ENTITIES, 4, "re4") == (4, {EVALUATED: "e4", EVALUATED_ENTITIES: "ee4",
                                                             REFERENCE: "r4", REFERENCE_ENTITIES: "re4"})
    matcher.add(EVALUATED, 5, "e5")               # frame 5 lacks its reference entities ...
    matcher.add(REFERENCE, 5, "r5")
    matcher.add(EVALUATED_ENTITIES, 5, "ee5")
    for part in matcher.parts:                     # ... frame 6 completes: 5 can no longer
        result = matcher.add(part, 6, part)
    assert result[0] == 6
    snapshot = matcher.snapshot()
    assert [snapshot[f"unmatched_{part}"] for part in (EVALUATED, REFERENCE, EVALUATED_ENTITIES,
                                                       REFERENCE_ENTITIES)] == [1, 1, 1, 0]


def test_a_frame_without_its_optional_parts_is_handed_out_once_it_cannot_complete():
    matcher = FrameIndexMatcher(capacity=8, optional=(EVALUATED,))
    matcher.add(REFERENCE, 5, "r5")          # the degraded pipeline dropped frames 5 and 6
    matcher.add(REFERENCE, 6, "r6")
    matcher.add(EVALUATED, 7, "e7")
    assert matcher.take_incomplete() == []
    assert pair(matcher.add(REFERENCE, 7, "r7")) == (7, "e7", "r7")
    assert matcher.take_incomplete() == [(5, {REFERENCE: "r5"}), (6, {REFERENCE: "r6"})]
    assert matcher.take_incomplete() == []
    assert matcher.counters["incomplete"] == 2 and matcher.counters["unmatched_reference"] == 0
    assert matcher.add(EVALUATED, 6, "e6") is None and matcher.counters["late_evaluated"] == 1
    with pytest.raises(ValueError, match="optional"):
        FrameIndexMatcher(optional=(EVALUATED, REFERENCE))


def test_a_full_reference_buffer_hands_out_its_oldest_frame_when_the_evaluated_side_stopped():
    matcher = FrameIndexMatcher(capacity=2, optional=(EVALUATED,))
    for t in range(4):
        assert matcher.add(REFERENCE, t, f"r{t}") is None
    assert [index for index, _ in matcher.take_incomplete()] == [0, 1]
    assert matcher.pending(REFERENCE) == 2 and matcher.last_matched == 1


@pytest.mark.parametrize("optional", [(), (EVALUATED,)])
@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([EVALUATED, REFERENCE, REFERENCE_ENTITIES]), st.integers(0, 30)),
                max_size=120),
       st.integers(1, 6))
def test_every_item_is_accounted_for_once(optional, arrivals, capacity):
    parts = (EVALUATED, REFERENCE, REFERENCE_ENTITIES)
    matcher = FrameIndexMatcher(parts, capacity, optional)
    handed_out = []
    incomplete_items = dict.fromkeys(parts, 0)
    for part, frame in arrivals:
        result = matcher.add(part, frame, (part, frame))
        for index, items in matcher.take_incomplete():
            assert set(items) >= {REFERENCE, REFERENCE_ENTITIES} and EVALUATED not in items
            handed_out.append(index)
            for each in items:
                incomplete_items[each] += 1
        if result is not None:
            handed_out.append(result[0])
            assert result[1] == {each: (each, result[0]) for each in parts}
    assert handed_out == sorted(set(handed_out))     # strictly increasing, incomplete frames included
    snapshot = matcher.snapshot()
    for part in parts:
        given_count = sum(1 for p, _ in arrivals if p == part)
        accounted = sum(snapshot[f"{state}_{part}"] for state in ("unmatched", "late", "duplicate", "pending"))
        assert accounted + snapshot["matched"] + incomplete_items[part] == given_count
        assert snapshot[f"pending_{part}"] <= capacity
