import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from predrel_ros.reliability.evidence_profile import DEVIATIONS, SCORE_SHIFT, EvidenceProfile
from predrel_ros.reliability.trust_evidence import FEATURES, SCORE_SHARES


def windows(count=200, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(count):
        row = dict.fromkeys(FEATURES, math.nan)
        row.update(sharpness=float(rng.uniform(1.0, 2.0)), birth_rate=0.0, count=float(rng.integers(3, 6)))
        row.update(zip(SCORE_SHARES, [0.0, 0.0, 0.1, 0.3, 0.6]))
        rows.append(row)
    return rows


def test_deviation_is_zero_inside_the_clean_range_and_in_range_widths_outside():
    profile = EvidenceProfile.fit(windows())
    low, high = profile.low["sharpness"], profile.high["sharpness"]
    assert 1.0 < low < 1.15 and 1.85 < high < 2.0
    width = high - low
    deviations = profile.deviations({"sharpness": 1.5, "count": 4.0})
    assert tuple(deviations) == DEVIATIONS and deviations["sharpness"] == 0.0 and deviations["count"] == 0.0
    assert profile.deviations({"sharpness": low - width})["sharpness"] == pytest.approx(-1.0)
    assert profile.deviations({"sharpness": high + 2 * width})["sharpness"] == pytest.approx(2.0)
    # clean data keeps the birth rate at 0: one birth per 30 frames is measured in units of min_spread
    assert profile.deviations({"birth_rate": 1 / 30})["birth_rate"] == pytest.approx(1 / 30 / 0.02)
    assert math.isnan(deviations["exposure"])          # the profile has no exposure (no image)


def test_score_shift_is_the_total_variation_distance_to_the_clean_histogram():
    profile = EvidenceProfile.fit(windows())
    same = dict(zip(SCORE_SHARES, [0.0, 0.0, 0.1, 0.3, 0.6]))
    foreign = dict(zip(SCORE_SHARES, [0.5, 0.5, 0.0, 0.0, 0.0]))
    assert profile.deviations(same)[SCORE_SHIFT] == pytest.approx(0.0)
    assert profile.deviations(foreign)[SCORE_SHIFT] == pytest.approx(1.0)
    assert math.isnan(profile.deviations({})[SCORE_SHIFT])


def test_round_trip_through_json():
    profile = EvidenceProfile.fit(windows(), percentiles=(10.0, 90.0), min_spread=0.05)
    again = EvidenceProfile.from_dict(json.loads(json.dumps(profile.to_dict())))
    probe = {"sharpness": 0.5, "birth_rate": 0.2, **dict(zip(SCORE_SHARES, [0.2] * 5))}
    assert json.dumps(again.deviations(probe)) == json.dumps(profile.deviations(probe))
    assert (again.percentiles, again.min_spread, again.windows) == ((10.0, 90.0), 0.05, 200)
    with pytest.raises(ValueError, match="format"):
        EvidenceProfile.from_dict({"format": "other"})


def test_bad_settings_and_no_data_are_refused():
    with pytest.raises(ValueError, match="at least one"):
        EvidenceProfile.fit([])
    with pytest.raises(ValueError, match="percentiles"):
        EvidenceProfile.fit(windows(), percentiles=(95.0, 5.0))
    with pytest.raises(ValueError, match="min_spread"):
        EvidenceProfile.fit(windows(), min_spread=0.0)
    with pytest.raises(ValueError, match="relative_spread"):
        EvidenceProfile.fit(windows(), relative_spread=-1.0)


def test_a_narrow_clean_range_is_widened_to_a_share_of_its_median():
    rows = [{"count": 5.0} for _ in range(20)]                     # every clean window saw 5 entities
    profile = EvidenceProfile.fit(rows, relative_spread=0.1)
    assert profile.deviations({"count": 6.0})["count"] == pytest.approx(2.0)     # (6 - 5) / (0.1 * 5)


@settings(max_examples=100, deadline=None)
@given(st.floats(-10, 10), st.floats(-10, 10))
def test_deviation_is_monotone_in_the_value(a, b):
    profile = EvidenceProfile.fit(windows(50, seed=1))
    low, high = sorted((a, b))
    assert profile.deviations({"sharpness": low})["sharpness"] <= profile.deviations({"sharpness": high})["sharpness"]
