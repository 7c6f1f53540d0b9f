"""Fixtures of the downstream tests: a hand-made linear model, hand-built estimates, the tiny dataset."""
from __future__ import annotations

import numpy as np
import pytest
from controlled_dataset import controlled_dataset  # noqa: F401  (the shared tiny dataset)

from predrel_ros.action.encoding import FRAME_SLOTS, HAND_OBJECT, TemporalSpec
from predrel_ros.action.model import Layer, PrimitiveModel
from predrel_ros.core.frame import PRIMITIVE_LABELS
from predrel_ros.predicates.estimate import PredicateEstimate

SLOT = {slot: i for i, slot in enumerate(FRAME_SLOTS)}
INDEX = {name: i for i, name in enumerate(PRIMITIVE_LABELS)}


def make_hand_model(temporal: TemporalSpec = TemporalSpec(lags=(0,), recent_max=0, max_hold=0)) -> PrimitiveModel:
    """Linear: hand-object contact T says grasp, dynamic GC approach, release T release; else idle."""
    n = len(FRAME_SLOTS) * len(temporal.blocks)
    weights = np.zeros((n, len(PRIMITIVE_LABELS)))
    weights[SLOT[(HAND_OBJECT, "contact", "T")], INDEX["grasp"]] = 6.0
    weights[SLOT[(HAND_OBJECT, "dynamic", "GC")], INDEX["approach"]] = 6.0
    weights[SLOT[(HAND_OBJECT, "release", "T")], INDEX["release"]] = 6.0
    bias = np.zeros(len(PRIMITIVE_LABELS))
    bias[INDEX["idle"]] = 1.0
    return PrimitiveModel(PRIMITIVE_LABELS, temporal, True, [Layer(weights, bias)], baseline=np.zeros(n))


def make_pair(contact: str, dynamic: str, c: float = 1.0, frame: int = 0, release: str = "N"
              ) -> list[PredicateEstimate]:
    """The five estimates the extractor emits for hand 1 and object 2."""
    return [PredicateEstimate("contact", 1, 2, contact, c, frame_index=frame),
            PredicateEstimate("static", 1, 2, "Ar", c, frame_index=frame),
            PredicateEstimate("dynamic", 1, 2, dynamic, c, frame_index=frame),
            PredicateEstimate("grasp", 1, 2, "N", c, frame_index=frame),
            PredicateEstimate("release", 1, 2, release, c, frame_index=frame)]


@pytest.fixture
def hand_model():
    """hand_model(temporal=...) -> the linear PrimitiveModel of make_hand_model."""
    return make_hand_model


@pytest.fixture
def pair():
    """pair(contact, dynamic, c=1.0, frame=0, release="N") -> hand-object estimates."""
    return make_pair
