import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from predrel_ros.predicates.estimate import PredicateEstimate
from predrel_ros.reliability.calibration import calibration_summary
from predrel_ros.reliability.monitor import SELF, MonitorConfig, ReliabilityMonitor
from predrel_ros.reliability.stream_timing import StreamTiming
from predrel_ros.reliability.trust import CleanProfile, PredicateBaseline


def test_delivered_share_of_the_window():
    timing = StreamTiming(window=4)
    assert math.isnan(timing.delivered_share()) and timing.span() == 0
    for t in (10, 11, 13):                  # frame 12 was dropped
        timing.update(t)
    assert (timing.span(), timing.gaps(), timing.delivered_share()) == (4, 1, 0.75)
    timing.update(17)                       # 14, 15, 16 dropped; the window is 14..17
    assert (timing.gaps(), timing.delivered_share()) == (3, 0.25)
    timing.reset()
    timing.update(3)
    assert timing.delivered_share() == 1.0
    with pytest.raises(ValueError, match="window"):
        StreamTiming(0)


@settings(max_examples=100, deadline=None)
@given(st.sets(st.integers(0, 60), min_size=1), st.integers(1, 20))
def test_share_counts_the_delivered_indices_of_the_window(indices, window):
    timing = StreamTiming(window)
    ordered = sorted(indices)
    for t in ordered:
        timing.update(t)
    newest, first = ordered[-1], ordered[0]
    span = min(window, newest - first + 1)
    assert timing.delivered_share() == pytest.approx(sum(1 for t in ordered if t > newest - span) / span)


def test_the_monitor_expects_a_dropped_frame_to_disagree():
    """Half of the frames dropped: the expected agreement halves, as the true agreement does."""
    calibration = calibration_summary(np.full(20, 0.9), np.ones(20, bool), 10)   # confidence 0.9 -> agreement 1
    profile = CleanProfile({"contact": PredicateBaseline(0.5, 0.5, 1.0, 1.0, calibration=calibration)}, window=20)

    def expected(frames):
        monitor = ReliabilityMonitor(MonitorConfig(reference_mode=SELF, window=20, skip_replaced_tracks=False),
                                     profile=profile)
        for t in frames:
            monitor.add_evaluated(t, [PredicateEstimate("contact", 1, 2, "T", 0.9, frame_index=t)])
        return monitor.group_signals()["contact"]["expected_agreement"], monitor.report().record("contact")

    full, _ = expected(range(40))
    half, record = expected(range(0, 40, 2))
    assert full == pytest.approx(1.0) and half == pytest.approx(0.5)
    assert "expected_agreement" in record.reason
