import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from predrel_ros.predicates.estimate import PredicateEstimate
from predrel_ros.reliability import metrics
from predrel_ros.reliability.rolling import RollingReliability

UNK = metrics.UNK

frames = st.lists(st.tuples(st.integers(-1, 3), st.floats(0, 1), st.integers(-1, 3), st.floats(0, 1)),
                  min_size=1, max_size=80)


def close(a, b):
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, abs=1e-9)


KEY = ("contact", 1, 2)


@settings(max_examples=150, deadline=None)
@given(frames, st.lists(st.booleans(), min_size=80, max_size=80), st.integers(1, 12),
       st.one_of(st.none(), st.floats(0.5, 3)), st.integers(0, 3))
def test_rolling_equals_offline_on_the_last_window(updates, absent, window, alpha, tol):
    """A stream's values equal the offline metrics of its updates in the last `window` frames, also
    when it is not updated on every frame (absent frames: another stream alone)."""
    rolling = RollingReliability(window, mode="reference", alpha=alpha, tol=tol,
                                 calibration={"contact": lambda c: c * c})
    kept = []                                        # (frame, update) of the stream
    frame = 0
    for update in updates:
        while absent[frame % len(absent)] and frame < 3 * len(updates):     # frames without the stream
            rolling.update_paired(frame, [(("static", 1, 2), 1, 0.5, 1, 0.5)])
            frame += 1
        rolling.update_paired(frame, [(KEY, *update)])
        kept.append((frame, update))
        last = [u for f, u in kept if f > frame - window]
        y_deg = np.array([u[0] for u in last])
        c_deg = np.array([u[1] for u in last])
        ref = np.array([u[2] for u in last])
        c_ref_arr = np.array([u[3] for u in last])
        values = rolling.compute()[KEY]
        assert values["frames"] == len(last)
        assert close(values["prs"], metrics.prs(y_deg, ref, c_deg, alpha))
        assert close(values["cws"], metrics.cws(c_deg, c_ref_arr))
        assert close(values["tpc_s"], metrics.tpc_s(y_deg))
        assert close(values["tpc"], metrics.tpc(y_deg, ref, tol))
        assert close(values["confidence"], c_deg.mean())
        assert close(values["unk_rate"], np.mean(y_deg == UNK))
        assert close(values["expected_agreement"], np.mean(c_deg ** 2))
        frame += 1


def test_self_mode_stream_has_no_reference_metrics():
    rolling = RollingReliability(4, mode="self")
    for frame, value in enumerate(("T", "T", "N", "N", "T")):
        rolling.update(frame, [estimate("contact", 1, 2, value, 0.5, frame)])
    values = rolling.compute()[KEY]
    assert math.isnan(values["prs"]) and math.isnan(values["cws"]) and math.isnan(values["tpc"])
    assert values["tpc_s"] == pytest.approx(1 - 2 / 3) and values["frames"] == 4
    rolling.reset()
    assert rolling.compute() == {} and len(rolling) == 0


def test_a_malformed_frame_changes_nothing():
    rolling = RollingReliability(4, mode="reference")
    rolling.update_paired(0, [(KEY, 1, 0.5, 1, 1.0)])
    before = rolling.compute()
    with pytest.raises(ValueError, match="confidences"):
        rolling.update_paired(1, [(KEY, 1, 0.5, 1, 2.0)])
    with pytest.raises(ValueError, match="twice"):
        rolling.update_paired(1, [(KEY, 1, 0.5, 1, 1.0), (KEY, 0, 0.5, 1, 1.0)])
    after = rolling.compute()
    assert after.keys() == before.keys() and all(close(after[KEY][k], v) for k, v in before[KEY].items())
    assert rolling.last_frame == 0
    rolling.update_paired(1, [(KEY, 0, 0.5, 1, 1.0)])               # frame 1 is still free
    assert rolling.compute()[KEY]["frames"] == 2


def test_many_streams_come_and_go_and_the_rows_are_reused():
    """More streams than the arrays start with, each alive for a few frames: every live stream has
    exactly its own frames, those gone are dropped, the rows stay bounded."""
    rolling = RollingReliability(3, mode="self")
    for frame in range(300):
        alive = range(frame // 2, frame // 2 + 90)                      # 90 streams, two new ones every 2 frames
        rolling.update(frame, [estimate("contact", 0, obj, "T" if (obj + frame) % 3 else "N", 0.5, frame)
                               for obj in alive])
        if frame % 50 == 49:
            values = rolling.compute()
            expected = {("contact", 0, obj) for obj in range((frame - 2) // 2, frame // 2 + 90)}
            assert set(values) == expected
            for (_, _, obj), stream in values.items():
                seen = [f for f in range(frame - 2, frame + 1) if f // 2 <= obj < f // 2 + 90]
                assert stream["frames"] == len(seen)
    assert rolling._frame.shape[0] <= 256


def estimate(name, s, o, value, confidence=1.0, frame=0):
    return PredicateEstimate(name, s, o, value, confidence, frame_index=frame)


def test_registry_matches_orientation_and_fills_missing_sides():
    registry = RollingReliability(window=3, mode="reference")
    # reference gives contact(2, 1), the extractor contact(1, 2): the same unordered stream
    registry.update(0, [estimate("contact", 1, 2, "T", 0.8)], [estimate("contact", 2, 1, "T")])
    # the extractor misses the stream: UNK with confidence 0 against the reference
    registry.update(1, [], [estimate("contact", 2, 1, "T")])
    # no reference for a stream: excluded from PRS
    registry.update(2, [estimate("contact", 1, 2, "N", 0.6), estimate("static", 1, 2, "Ab", 0.5)], [])
    values = registry.compute()
    contact = values[("contact", 1, 2)]
    assert contact["prs"] == pytest.approx((0.8 + 0.0) / 2)
    assert contact["frames"] == 3
    assert math.isnan(values[("static", 1, 2)]["prs"])
    pooled = registry.by_predicate()
    assert pooled["contact"]["prs"] == pytest.approx(0.4)
    assert pooled["contact"]["confidence"] == pytest.approx((0.8 + 0.0 + 0.6) / 3)
    # streams not updated for a whole window are dropped
    for frame in range(3, 6):
        registry.update(frame, [estimate("contact", 1, 2, "N", 0.6)], [])
    assert set(registry.compute()) == {("contact", 1, 2)}


def test_registry_refuses_wrong_mode_usage_and_order():
    registry = RollingReliability(window=3, mode="self")
    registry.update(5, [estimate("contact", 1, 2, "T")])
    with pytest.raises(ValueError, match="increasing"):
        registry.update(5, [])
    with pytest.raises(ValueError, match="takes no references"):
        registry.update(6, [], [])
    with pytest.raises(ValueError, match="needs the reference"):
        RollingReliability(mode="reference").update(0, [])
    with pytest.raises(ValueError, match="mode"):
        RollingReliability(mode="twin")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["T", "N", "UNK"]), min_size=2, max_size=2), min_size=1, max_size=30),
       st.integers(2, 8))
def test_pooled_tpc_s_counts_changes_within_streams(sequence, window):
    registry = RollingReliability(window=window, mode="self")
    for frame, (a, b) in enumerate(sequence):
        registry.update(frame, [estimate("contact", 1, 2, a), estimate("contact", 1, 3, b)])
    last = sequence[-window:]
    changes = sum(before[k] != after[k] for before, after in zip(last, last[1:]) for k in (0, 1))
    pairs = 2 * (len(last) - 1)
    expected = 1.0 if pairs == 0 else 1 - changes / pairs
    assert registry.by_predicate()["contact"]["tpc_s"] == pytest.approx(expected)


def test_a_stream_that_stops_ages_out_frame_by_frame():
    registry = RollingReliability(window=4, mode="self")
    for frame in range(4):
        registry.update(frame, [estimate("contact", 1, 2, "UNK", 0.0, frame),
                                estimate("static", 1, 2, "Ab", 0.9, frame)])
    assert registry.by_predicate()["contact"]["unk_rate"] == 1.0
    # the contact stream ends (its entity is gone): its old frames leave the window one per frame
    for frame, left in ((4, 3), (5, 2), (6, 1)):
        registry.update(frame, [estimate("static", 1, 2, "Ab", 0.9, frame)])
        assert registry.compute()[("contact", 1, 2)]["frames"] == left
        assert registry.compute()[("static", 1, 2)]["frames"] == 4
    registry.update(7, [estimate("static", 1, 2, "Ab", 0.9, 7)])
    assert set(registry.compute()) == {("static", 1, 2)}


def test_the_agreement_rate_is_prs_without_the_confidence_weight():
    rolling = RollingReliability(5, mode="reference")
    for frame, (y, c, y_ref) in enumerate(((1, 0.6, 1), (0, 0.6, 1), (1, 0.5, 1), (1, 0.9, UNK))):
        rolling.update_paired(frame, [(KEY, y, c, y_ref, 1.0)])
    values = rolling.compute()[KEY]
    assert values["agreement"] == pytest.approx(2 / 3) and values["prs"] == pytest.approx(1.1 / 3)
    self_mode = RollingReliability(5, mode="self")
    self_mode.update(0, [estimate("contact", 1, 2, "T", 0.5)])
    assert math.isnan(self_mode.compute()[KEY]["agreement"])


def test_the_kept_poolings_are_those_of_the_current_window_and_fresh_copies():
    """by_predicate / by_group are computed once per update and kept; each call gets its own dicts,
    equal to a fresh `pooled`, TPC NaN when not asked for, and the next update recomputes them."""
    from predrel_ros.predicates import vocabulary

    registry = RollingReliability(window=4, mode="reference")
    values = ["T", "N", "T", "T", "N", "N"]
    for frame, value in enumerate(values):
        registry.update(frame, [estimate("contact", 1, 2, value, 0.3 + 0.1 * frame),
                                estimate("static", 1, 2, "Ab", 0.5)],
                        [estimate("contact", 1, 2, "T"), estimate("static", 1, 2, "Ab" if frame % 2 else "Be")])
        for with_tpc in (True, False, True):
            names, groups = registry.by_predicate(with_tpc), registry.by_group(with_tpc)
            fresh_names = registry.pooled(lambda name: name, with_tpc)
            fresh_groups = registry.pooled(vocabulary.group_of, with_tpc)
            for got, want in ((names, fresh_names), (groups, fresh_groups)):
                assert got.keys() == want.keys()
                for pool in want:
                    assert got[pool].keys() == want[pool].keys()
                    assert all(close(got[pool][k], want[pool][k]) for k in want[pool])
            assert math.isnan(names["contact"]["tpc"]) != with_tpc
            names["contact"]["prs"] = -1.0                  # a caller scaling its copy changes no other
            assert registry.by_predicate(with_tpc)["contact"]["prs"] == fresh_names["contact"]["prs"]


def test_frame_indices_up_to_the_messages_64_bits():
    rolling = RollingReliability(3, mode="self")
    last = 2 ** 64 - 1
    for frame in (0, 1, 2 ** 62 + 5, 2 ** 62 + 6, last - 1, last):
        rolling.update(frame, [estimate("contact", 1, 2, "T" if frame % 2 else "N", 0.5, frame)])
        values = rolling.compute()[KEY]
        assert values["frames"] == (2 if frame in (1, 2 ** 62 + 6, last) else 1)
    assert values["tpc_s"] == 0.0
