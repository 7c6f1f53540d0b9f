import numpy as np
import pytest

from predrel_ros.core.entities import MANIPULATED_OBJECT, RIGHT_HAND, Entity
from predrel_ros.predicates.confidence import CalibratedConfidence
from predrel_ros.predicates.config import PredicateConfig
from predrel_ros.predicates.estimate import PredicateEstimate
from predrel_ros.predicates.selection import (
    agreement,
    fit_calibrated_confidence,
    select_confidence_weights,
    select_thresholds,
)


def rect(track_id, role, x, y, w=20, h=20):
    mask = np.zeros((240, 320), bool)
    mask[y:y + h, x:x + w] = True
    return Entity(id=track_id, label=role, role=role, box=[x, y, x + w - 1, y + h - 1], mask=mask)


def validation_sequence(gaps, reference_contact_gap=2):
    """Hand and object with the given free gaps (frame px at 320x240); the reference says contact
    when the gap is at most `reference_contact_gap` px, i.e. 4 reference px."""
    frames = []
    for t, gap in enumerate(gaps):
        entities = [rect(1, RIGHT_HAND, 100, 50), rect(2, MANIPULATED_OBJECT, 120 + gap, 50)]
        value = "T" if gap <= reference_contact_gap else "N"
        frames.append((t, entities, [PredicateEstimate("contact", 1, 2, value, frame_index=t)]))
    return frames


def test_threshold_selection_recovers_the_reference_contact_distance():
    sequences = [validation_sequence([0, 1, 2, 3, 4, 2, 2, 5, 0, 3]), validation_sequence([2, 2, 3, 6, 1])]
    grid = {"contact.distance.value": (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0)}
    result = select_thresholds(sequences, grid)
    # gaps of 2 px (4 reference px) must be T, gaps of 3 px (6 reference px) N
    assert 4.0 <= result.config.contact.distance.value < 6.0
    assert result.agreement_before["contact"] < 1.0
    assert result.agreement_after["contact"] == 1.0
    assert result.scores["contact.distance.value"][3.0] == pytest.approx(result.agreement_before["contact"])
    # only the selected field changed
    assert result.config.replace("contact.distance.value", 3.0) == PredicateConfig()


def test_selection_refuses_bad_input():
    with pytest.raises(ValueError, match="no config field"):
        select_thresholds([validation_sequence([0])], {"contact.radius": (1.0,)})
    with pytest.raises(ValueError, match="at least one"):
        select_thresholds([])


def test_weights_and_calibrated_confidence_from_validation_data():
    rng = np.random.default_rng(3)
    sequences = [validation_sequence(rng.integers(0, 6, size=40).tolist())]
    config = select_confidence_weights(PredicateConfig(), sequences, min_samples=10)
    weights = config.confidence.weights["contact"]
    assert sum(weights.values()) == pytest.approx(1.0)
    assert config.confidence.weights["static"] == PredicateConfig().confidence.weights["static"]  # no reference
    model = fit_calibrated_confidence(PredicateConfig(), sequences, min_samples=10)
    assert isinstance(model, CalibratedConfidence) and "contact" in model.coefficients
    assert agreement(PredicateConfig(), sequences)["contact"] < 1.0
