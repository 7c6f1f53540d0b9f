import math

import numpy as np
import pytest

from predrel_ros.core.entities import LEFT_HAND, MANIPULATED_OBJECT, Entity
from predrel_ros.reliability.detection_statistics import SCORE_BINS, DetectionStatistics


def detected(track, score, area_side=None, role=MANIPULATED_OBJECT, visibility=1.0):
    mask = None
    if area_side is not None:
        mask = np.zeros((100, 100), bool)
        mask[:area_side, :area_side] = True
    return Entity(id=track, label="cube", role=role, box=[0, 0, 10, 10], mask=mask, score=score,
                  visibility=visibility)


def test_counts_scores_and_histogram():
    statistics = DetectionStatistics(low_score=0.5)
    frame = statistics.update([detected(1, 0.9, role=LEFT_HAND), detected(2, 0.3), detected(3, 1.0),
                               detected(4, 0.7, visibility=0.0)])
    assert (frame["count"], frame["hands"]) == (3, 1)
    assert frame["score_mean"] == pytest.approx(2.2 / 3) and frame["score_min"] == 0.3
    assert frame["low_score_share"] == pytest.approx(1 / 3)
    assert frame["score_histogram"].tolist() == [0, 1, 0, 0, 2] and len(frame["score_histogram"]) == SCORE_BINS
    assert math.isnan(frame["mask_change"])          # no track seen at the previous update


def test_mask_area_change_per_track():
    statistics = DetectionStatistics()
    statistics.update([detected(1, 0.9, area_side=10), detected(2, 0.9, area_side=20)])
    frame = statistics.update([detected(1, 0.9, area_side=5), detected(2, 0.9, area_side=20), detected(3, 0.9, 4)])
    assert frame["mask_change"] == pytest.approx((0.75 + 0.0) / 2)
    boxes = DetectionStatistics()
    boxes.update([detected(1, 0.9)])
    assert boxes.update([detected(1, 0.9)])["mask_change"] == 0.0     # box areas without masks


def test_mask_fill_of_the_boxes():
    """A mask that lost part of its object to something in front of it fills less of its box (hands,
    whose fill changes with their pose, are left out)."""
    statistics = DetectionStatistics()
    whole, hidden = detected(1, 0.9, area_side=10), detected(2, 0.9, area_side=10)
    hidden.mask[:, :6] = False                                  # 40 of the box's 100 pixels left
    hand = detected(4, 0.9, area_side=3, role=LEFT_HAND)
    assert statistics.update([whole, hidden, detected(3, 0.9), hand])["mask_fill"] == pytest.approx((1.0 + 0.4) / 2)
    assert math.isnan(statistics.update([detected(3, 0.9)])["mask_fill"])      # no mask: no fill


def test_an_empty_frame_has_no_scores():
    frame = DetectionStatistics().update([])
    assert frame["count"] == 0 and math.isnan(frame["score_mean"]) and math.isnan(frame["low_score_share"])
    assert frame["score_histogram"].sum() == 0


def test_settings_are_checked():
    with pytest.raises(ValueError, match="low_score"):
        DetectionStatistics(low_score=2.0)
