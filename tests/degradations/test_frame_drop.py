import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from predrel_ros.degradations import SEVERITIES, Degrader, FrameAction
from predrel_ros.degradations.frame_drop import affected, decide

FRAMES = np.arange(3000)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_affected_frames_are_nested_in_severity_and_their_rate_grows(seed):
    sets = []
    for severity in SEVERITIES:
        rate = Degrader("frame_drop", severity).parameters()["affected_rate"]
        sets.append(affected(seed, FRAMES, rate))
    for lower, higher in zip(sets, sets[1:]):
        assert np.all(higher[lower]) and higher.sum() > lower.sum()
    assert not sets[0].any()


def test_measured_rates_match_the_table():
    frames = np.arange(40_000)
    for severity in range(1, 6):
        parameters = Degrader("frame_drop", severity).parameters()
        measured = affected(11, frames, parameters["affected_rate"]).mean()
        assert measured == pytest.approx(parameters["affected_rate"], abs=0.01)
    actions = [Degrader("frame_drop", 5, seed=11).decide_frame(f).action for f in range(4000)]
    repeats, drops = actions.count(FrameAction.REPEAT), actions.count(FrameAction.DROP)
    assert repeats / (repeats + drops) == pytest.approx(0.5, abs=0.04)


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 5), st.integers(0, 50))
def test_a_repeat_shows_the_last_delivered_frame_and_indices_are_kept(seed, severity, start):
    degrader = Degrader("frame_drop", severity, seed)
    decisions = [degrader.decide_frame(f, stream_start=start) for f in range(start, start + 300)]
    last_delivered = None
    for frame_index, decision in zip(range(start, start + 300), decisions):
        assert decision.frame_index == frame_index
        if decision.action == FrameAction.DELIVER:
            assert decision.source_index == frame_index
            last_delivered = frame_index
        elif decision.action == FrameAction.REPEAT:
            assert decision.source_index == last_delivered is not None
        else:
            assert decision.source_index is None
    shuffled = np.random.default_rng(seed % 1000).permutation(300)
    for i in shuffled[:50]:
        assert degrader.decide_frame(start + int(i), stream_start=start) == decisions[i]


def test_drop_or_repeat_of_a_frame_does_not_change_with_severity():
    lower, higher = Degrader("frame_drop", 2, 5), Degrader("frame_drop", 4, 5)
    for f in range(200, 1200):  # away from the stream start, a repeat always finds a delivered frame
        a, b = lower.decide_frame(f), higher.decide_frame(f)
        if a.action != FrameAction.DELIVER:
            assert b.action == a.action


def test_a_repeat_with_nothing_delivered_before_becomes_a_drop():
    seed = next(s for s in range(1000) if affected(s, 0, 0.6)[0])  # frame 0 affected, so it would repeat
    assert decide(seed, 0, 0.6, 1.0).action == FrameAction.DROP
    with pytest.raises(ValueError, match="before stream_start"):
        decide(seed, 3, 0.6, 1.0, stream_start=4)
