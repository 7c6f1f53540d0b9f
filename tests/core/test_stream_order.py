import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from predrel_ros.core.stream_order import (
    MAX_INDEX_STEP,
    MAX_STAMP_STEP_NS,
    NEXT,
    OUT_OF_ORDER,
    RESTART,
    RESTART_AFTER,
    StreamOrder,
)


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


def take(order: StreamOrder, position: int, stamp_ns: int | None = None) -> str:
    """What a stage does with one frame: skip it, or reset on a restart and take it."""
    verdict = order.check(position, stamp_ns)
    if verdict == RESTART:
        order.reset()
    if verdict != OUT_OF_ORDER:
        order.accept(position, stamp_ns)
    return verdict


@pytest.mark.parametrize("far", [2**64 - 1, 2**63, MAX_INDEX_STEP + 11])
def test_a_far_future_index_is_refused_and_never_becomes_the_reference(far):
    order = StreamOrder()
    for frame in range(10):
        assert take(order, frame) == NEXT
    assert take(order, far) == OUT_OF_ORDER and "ahead" in order.reason
    assert [take(order, frame) for frame in range(10, 20)] == [NEXT] * 10
    assert order.out_of_order == 1 and order.restarts == 0


def test_a_far_future_first_frame_costs_at_most_restart_after_minus_one_frames():
    order = StreamOrder()
    assert take(order, 2**64 - 1) == NEXT                 # nothing to judge the first frame against
    verdicts = [take(order, frame) for frame in range(10)]
    assert verdicts == [OUT_OF_ORDER] * (RESTART_AFTER - 1) + [RESTART] + [NEXT] * (10 - RESTART_AFTER)
    assert order.last == 9 and order.restarts == 1


def test_a_wrapped_index_restarts_the_sequence():
    order = StreamOrder(restart_after=3)
    for frame in range(2**32 - 3, 2**32):
        take(order, frame)
    assert [take(order, frame) for frame in range(4)] == [OUT_OF_ORDER, OUT_OF_ORDER, RESTART, NEXT]


def test_a_repeated_stale_frame_is_not_a_new_sequence():
    order = StreamOrder(restart_after=2)
    take(order, 7)
    assert [order.check(3) for _ in range(50)] == [OUT_OF_ORDER] * 50
    assert order.check(4) == RESTART                      # a second, different old frame


def test_strict_and_immediate_modes():
    strict, immediate = StreamOrder(restart_after=0), StreamOrder(restart_after=1)
    for order in (strict, immediate):
        take(order, 10, 1_000)
    assert strict.check(2**63) == OUT_OF_ORDER and strict.check(0, 2_000) == OUT_OF_ORDER
    assert immediate.check(9) == RESTART


def test_stamps_positions_go_by_the_hour():
    order = StreamOrder.of_stamps()
    take(order, 10**9)
    assert take(order, 10**9 + 1000 * 10**9) == NEXT               # 1000 s ahead: a pause
    far = (2**31 - 1) * 10**9
    assert take(order, far) == OUT_OF_ORDER and order.reason.startswith("stamp ")
    assert take(order, 10**9 + 1001 * 10**9) == NEXT
    assert take(order, 10**9 + 1001 * 10**9) == OUT_OF_ORDER       # an equal stamp is not newer
    assert order.max_step == MAX_STAMP_STEP_NS


def test_an_index_with_stamps_restarts_at_once_when_its_stamp_is_newer():
    order = StreamOrder()
    for index, stamp in [(10, 100), (11, 200)]:
        assert take(order, index, stamp) == NEXT
    assert take(order, 3, 150) == OUT_OF_ORDER            # older by index and by stamp: stale
    assert take(order, 0, 300) == RESTART                 # older index, newer stamp: a new sequence
    assert take(order, 1, 300) == NEXT                    # an equal stamp is no evidence
    assert take(order, 2, 250) == OUT_OF_ORDER            # a newer index with an older stamp
    assert take(order, 3, 300 + MAX_STAMP_STEP_NS + 1) == OUT_OF_ORDER    # a far-future stamp
    assert take(order, 3, 400) == NEXT


def test_an_index_with_stamps_recovers_from_a_far_future_first_stamp():
    order = StreamOrder()
    take(order, 0, (2**31 - 1) * 10**9)
    verdicts = [take(order, index, 10**9 + index) for index in range(1, 10)]
    assert verdicts == [OUT_OF_ORDER] * (RESTART_AFTER - 1) + [RESTART] + [NEXT] * (9 - RESTART_AFTER)


def test_stale_copies_of_one_frame_number_never_restart_the_stream():
    """FrameInfos repeating index 1 with ever newer stamps, all older than the last accepted stamp."""
    order = StreamOrder()
    take(order, 0, 1001 * 10**9)
    assert [take(order, 1, 10**9 + k * 10**6) for k in range(200)] == [OUT_OF_ORDER] * 200
    assert take(order, 7, 2001 * 10**9) == NEXT


values = st.one_of(st.integers(0, 60), st.sampled_from([2**31 - 1, 2**32, 2**63, 2**64 - 1]))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(values, max_size=40), st.integers(0, 50), st.integers(1, 8))
def test_after_any_values_an_ordinary_stream_is_taken_within_restart_after_frames(noise, start, restart_after):
    order = StreamOrder(restart_after)
    for value in noise:
        take(order, value)
    frames = range(10**6 + start, 10**6 + start + restart_after + 5)
    verdicts = [take(order, frame) for frame in frames]
    refused = next(k for k, verdict in enumerate(verdicts) if verdict != OUT_OF_ORDER)
    assert refused <= restart_after - 1
    assert set(verdicts[refused + 1:]) == {NEXT} and order.last == frames[-1]


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.integers(-5, 5), st.integers(-3, 3)), max_size=60), st.integers(0, 6))
def test_taken_frames_are_ordered_within_a_sequence_and_each_verdict_is_counted(steps, restart_after):
    order = StreamOrder(restart_after)
    index, stamp = 100, 10**9
    sequence: list[tuple[int, int]] = []
    verdicts = []
    for index_step, stamp_step in steps:
        index, stamp = index + index_step, stamp + stamp_step
        verdicts.append(take(order, index, stamp))
        if verdicts[-1] == RESTART:
            sequence = []
        if verdicts[-1] != OUT_OF_ORDER:
            assert all(index > i and stamp >= s for i, s in sequence)
            sequence.append((index, stamp))
    assert (order.out_of_order, order.restarts) == (verdicts.count(OUT_OF_ORDER), verdicts.count(RESTART))
    if restart_after == 0:
        assert RESTART not in verdicts
