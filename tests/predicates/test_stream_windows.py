"""The ring-buffer windows give what a deque per stream, trimmed to the window, gives."""
from collections import deque

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from predrel_ros.predicates.stream_windows import StreamWindows

KEYS = [("contact", 1, 2), ("static", 2, 1), ("dynamic", 1, 3), ("active_hand", 1, -1)]


@settings(max_examples=60, deadline=None)
@given(window=st.integers(1, 6), steps=st.lists(st.tuples(
    st.integers(1, 4),                                              # frames skipped before this one
    st.lists(st.tuples(st.sampled_from(range(len(KEYS))), st.integers(-1, 3)), max_size=4),   # (stream, code)
    st.sets(st.sampled_from(range(len(KEYS))), max_size=2)), min_size=1, max_size=25))       # streams forgotten
def test_windows_equal_deques_trimmed_to_the_window(window, steps):
    windows = StreamWindows(window, capacity=1)                      # capacity 1: the rows grow
    reference: dict[tuple, deque] = {}
    frame = 0
    for skip, writes, forgotten in steps:
        frame += skip
        start = frame - window + 1
        writes = list({stream: code for stream, code in writes}.items())          # one value per stream and frame
        if writes:
            keys = [KEYS[stream] for stream, _ in writes]
            codes = np.array([code for _, code in writes])
            rows = windows.rows(keys)
            windows.push(rows, frame, codes)
            for key, code in zip(keys, codes.tolist()):
                values = reference.setdefault(key, deque())
                values.append((frame, code))
                while values[0][0] < start:
                    values.popleft()
            expected = [sum(c == code for _, c in reference[key]) / len(reference[key])
                        for key, code in zip(keys, codes.tolist())]
            assert windows.agreement(rows, codes, start).tolist() == expected
            expected_t = [sum(c == 1 for _, c in reference[key]) / len(reference[key]) for key in keys]
            assert windows.shares(rows, 1, start).tolist() == expected_t
        gone = {KEYS[stream] for stream in forgotten}
        windows.forget(gone.__contains__)
        for key in gone:
            reference.pop(key, None)
        assert len(windows) == len(reference) and all(key in windows for key in reference)


def test_a_forgotten_stream_starts_empty_when_it_comes_back():
    windows = StreamWindows(3)
    key = KEYS[0]
    windows.push(windows.rows([key]), 10, np.array([1]))
    windows.forget(lambda k: k == key)
    rows = windows.rows([key])
    windows.push(rows, 11, np.array([0]))
    assert windows.agreement(rows, np.array([0]), 9).tolist() == [1.0]     # frame 10's value is gone


def test_window_must_be_positive():
    with pytest.raises(ValueError, match="window"):
        StreamWindows(0)


def test_frame_indices_beyond_int64_are_taken():
    """A sequence may start at any frame_index (the message field is uint64)."""
    windows = StreamWindows(3)
    first = 2 ** 64 - 10
    rows = windows.rows([KEYS[0], KEYS[1]])
    for step, codes in enumerate([[1, 0], [1, 1], [0, 1], [0, 1]]):
        windows.push(rows, first + step, np.array(codes))
    start = first + 3 - 3 + 1
    assert windows.agreement(rows, np.array([0, 1]), start).tolist() == [2 / 3, 1.0]
    assert windows.shares(rows, 1, start).tolist() == [1 / 3, 1.0]
