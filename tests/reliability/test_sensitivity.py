import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from predrel_ros.reliability import metrics
from predrel_ros.reliability.sensitivity import RollingSensitivity, by_group, by_predicate, by_stream

KEYS = [("contact", 1, 2), ("static", 2, 3), ("grasp", 1, 2)]

frame = st.tuples(st.sampled_from(["occlusion", "blur"]), st.integers(0, 5),
                  st.lists(st.tuples(st.sampled_from(KEYS), st.integers(-1, 1), st.floats(0, 1), st.integers(-1, 1)),
                           max_size=3, unique_by=lambda row: row[0]))


@settings(max_examples=150, deadline=None)
@given(st.lists(frame, min_size=1, max_size=25), st.integers(1, 10), st.sampled_from(["endpoint", "mean_step"]))
def test_pds_equals_offline_pds_over_the_window(frames, window, mode):
    rolling = RollingSensitivity(window, mode)
    for kind, severity, rows in frames:
        rolling.update(kind, severity, [(key, y, c, y_ref, 1.0) for key, y, c, y_ref in rows])
    last = frames[-window:]
    kind = last[-1][0]
    for pool_of in (by_stream, by_predicate, by_group):
        expected = {}
        for pool in {pool_of(key) for _, _, rows in last for key, *_ in rows}:
            scores = {}
            for severity in range(6):
                rows = [row for k, s, frame_rows in last if s == severity and (k == kind or s == 0)
                        for row in frame_rows if pool_of(row[0]) == pool]
                value = metrics.prs(np.array([r[1] for r in rows]), np.array([r[3] for r in rows]),
                                    np.array([r[2] for r in rows])) if rows else math.nan
                if not math.isnan(value):
                    scores[severity] = value
            expected[pool] = metrics.pds(scores, mode) if len(scores) >= 2 else math.nan
        got = rolling.compute(pool_of)
        for pool, value in expected.items():
            if math.isnan(value):
                assert math.isnan(got.get(pool, math.nan))
            else:
                assert got[pool] == pytest.approx(value, abs=1e-12)


def test_sweep_gives_the_slope_of_prs_over_severity():
    rolling = RollingSensitivity(window=12)
    key = ("contact", 1, 2)
    for severity in range(6):                 # PRS 1.0, 0.9, ..., 0.5: two frames each
        for _ in range(2):
            rolling.update("occlusion", severity, [(key, 1, 1.0 - 0.1 * severity, 1, 1.0)])
    assert rolling.compute()[key] == pytest.approx(0.1)
    assert rolling.prs_by_severity(by_predicate)["contact"][5] == pytest.approx(0.5)
    rolling.update("blur", 3, [(key, 1, 0.2, 1, 1.0)])     # another kind: only its frames and clean ones count
    assert rolling.prs_by_severity()[key] == {0: 1.0, 3: pytest.approx(0.2)}
    rolling.reset()
    assert rolling.compute() == {}
    with pytest.raises(ValueError, match="severity"):
        rolling.update("blur", 6, [])
