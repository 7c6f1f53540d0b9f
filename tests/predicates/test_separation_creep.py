import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from predrel_ros.predicates.separation_creep import SeparationCreep


def limits(values, judged=True, bound=0.0025, min_steps=1):
    creep = SeparationCreep()
    flags = judged if isinstance(judged, list) else [judged] * len(values)
    return [creep.limit(value, flag, bound, min_steps) for value, flag in zip(values, flags)]


def test_a_rise_is_bounded_from_where_it_began():
    assert limits([0.020, 0.021, 0.022, 0.023]) == pytest.approx([math.inf, 0.0225, 0.0225, 0.0225])


def test_a_fall_a_frame_not_judged_or_no_bound_leave_the_value_unbounded_and_restart_the_rise():
    assert limits([0.020, 0.021, 0.0205, 0.022]) == pytest.approx([math.inf, 0.0225, math.inf, 0.0230])
    assert limits([0.020, 0.021, 0.022, 0.023], judged=[True, True, False, True]) \
        == pytest.approx([math.inf, 0.0225, math.inf, 0.0245])
    assert limits([0.020, 0.021], bound=None) == [math.inf, math.inf]


def test_with_min_steps_a_rise_is_bounded_from_its_second_rising_frame():
    assert limits([0.020, 0.023, 0.024, 0.0235, 0.026], min_steps=2) == pytest.approx(
        [math.inf, math.inf, 0.0225, math.inf, math.inf])


@given(st.lists(st.floats(0.0, 0.05), min_size=1, max_size=40), st.floats(0.0005, 0.01), st.integers(1, 3))
def test_the_limit_is_the_start_of_the_current_rise_plus_the_bound(values, bound, min_steps):
    """Against a direct reading: the value before the run of strict rises that ends at this frame, once
    that run has min_steps rises."""
    for k, limit in enumerate(limits(values, bound=bound, min_steps=min_steps)):
        start = k
        while start > 0 and values[start] > values[start - 1]:
            start -= 1
        assert limit == (math.inf if k - start < min_steps else values[start] + bound)
