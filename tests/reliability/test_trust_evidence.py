import json
import math

import numpy as np
import pytest

from predrel_ros.core.entities import MANIPULATED_OBJECT, Entity
from predrel_ros.reliability.image_quality import SIGNALS as IMAGE_SIGNALS
from predrel_ros.reliability.trust_evidence import FEATURES, TrustEvidence

SIZE = (320, 240)


def cube(track, x, score=0.9):
    return Entity(id=track, label="cube", role=MANIPULATED_OBJECT, box=[x, 100, x + 20, 120], score=score)


def test_scene_and_detection_features_are_window_means():
    evidence = TrustEvidence(window=4)
    evidence.update(0, [cube(1, 100)], image_size=SIZE)
    evidence.update(1, [cube(1, 100), cube(2, 200, score=0.3)])       # a birth in the middle of the image
    evidence.update(2, [cube(1, 100)])                                # 2 vanishes there
    features = evidence.features()
    assert tuple(features) == FEATURES
    assert features["birth_rate"] == pytest.approx(2 / 3) and features["unexplained_birth_rate"] == pytest.approx(2 / 3)
    assert features["unexplained_disappearance_rate"] == pytest.approx(1 / 3)
    assert features["missing_share"] == pytest.approx((0 + 0 + 0.5) / 3)
    assert features["count"] == pytest.approx(4 / 3) and features["score_mean"] == pytest.approx((0.9 + 0.6 + 0.9) / 3)
    assert features["score_share_4"] == pytest.approx(3 / 4) and features["score_share_1"] == pytest.approx(1 / 4)
    assert features["delivered_share"] == 1.0 and features["gaps"] == 0.0
    assert all(math.isnan(features[name]) for name in IMAGE_SIGNALS)     # no image came


def test_the_window_forgets_old_frames_and_counts_gaps():
    evidence = TrustEvidence(window=4)
    evidence.update(0, [cube(1, 100)], image_size=SIZE)
    evidence.update(1, [cube(1, 100), cube(2, 200)])
    evidence.update(5, [cube(1, 100), cube(2, 200)])                  # 2..4 dropped; the window is 2..5
    features = evidence.features()
    assert features["birth_rate"] == 0.0 and features["count"] == 2.0
    assert features["delivered_share"] == 0.25 and features["gaps"] == 3.0


def test_image_features_come_from_the_frames_that_had_an_image():
    evidence = TrustEvidence(window=10)
    image = np.full((240, 320, 3), 128, np.uint8)
    evidence.update(0, [], image=image)
    evidence.update(1, [])                                            # the image size stays known
    features = evidence.features()
    assert features["exposure"] == pytest.approx(128 / 255) and features["contrast"] == 0.0
    assert math.isnan(features["score_mean"]) and math.isnan(features["score_share_0"])


def test_before_any_frame_everything_is_nan_and_an_image_size_is_needed():
    evidence = TrustEvidence()
    assert all(math.isnan(value) for value in evidence.features().values())
    with pytest.raises(ValueError, match="image_size"):
        evidence.update(0, [cube(1, 100)])
    with pytest.raises(ValueError, match="window"):
        TrustEvidence(window=0)


def test_reset_starts_a_new_sequence():
    evidence = TrustEvidence(window=5)
    evidence.update(0, [cube(1, 100)], image_size=SIZE)
    evidence.reset()
    evidence.update(0, [cube(1, 100)], image_size=SIZE)
    assert evidence.features()["birth_rate"] == 1.0


def test_image_measures_can_be_given_instead_of_the_image():
    image = np.random.default_rng(0).integers(0, 256, (240, 320, 3), dtype=np.uint8)
    measured, given = TrustEvidence(window=5), TrustEvidence(window=5)
    measured.update(0, [cube(1, 100)], image=image)
    given.update(0, [cube(1, 100)], image_size=SIZE, quality=measured.image.measure(image))
    assert json.dumps(measured.features()) == json.dumps(given.features())      # NaN where undefined
    with pytest.raises(ValueError, match="not both"):
        given.update(1, [], image=image, quality={})
