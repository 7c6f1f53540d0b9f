import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from predrel_ros.tools.evaluation.event_score import EventScore, match_onsets, onsets


def test_onsets_are_the_first_frames_of_true_runs():
    assert onsets(np.array([0, 1, 1, 0, -1, 1, 1, -1, 1])).tolist() == [1, 5, 8]
    assert onsets(np.array([1, 0])).tolist() == [0]
    assert onsets(np.zeros(0, np.int8)).tolist() == []


def test_matching_is_one_to_one_and_closest_first():
    assert sorted(match_onsets(np.array([10, 12]), np.array([11]), 3)) == [1]   # one prediction, one match
    assert sorted(match_onsets(np.array([10, 20]), np.array([13, 19, 30]), 3)) == [-1, 3]
    assert match_onsets(np.array([10]), np.array([14]), 3) == []


def test_score_counts_found_extra_and_median_offset():
    score = EventScore(tolerance=3)
    reference = np.zeros(40, np.int8)
    reference[[10, 30]] = 1
    predicted = np.zeros(40, np.int8)
    predicted[[12, 20, 25]] = 1           # 10 found 2 late; 20 and 25 extra; 30 missed
    score.add(predicted, reference)
    summary = score.summary()
    assert summary["found_within_3"] == 0.5 and summary["extra_per_event"] == 1.0
    assert summary["median_abs_offset"] == 2.0 and summary["true_events"] == 2


@given(st.lists(st.integers(-1, 1), min_size=1, max_size=60))
def test_a_perfect_prediction_finds_every_event_at_offset_zero(codes):
    score = EventScore(tolerance=0)
    score.add(np.array(codes), np.array(codes))
    summary = score.summary()
    if summary["true_events"]:
        assert summary["found_within_0"] == 1.0 and summary["extra_per_event"] == 0.0
        assert summary["median_abs_offset"] == 0.0
