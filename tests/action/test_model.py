"""The classifier and its model file: inference, reliance, save/load round trip, refusals."""
from __future__ import annotations

import json

import numpy as np
import pytest

from predrel_ros.action.encoding import FRAME_SLOTS, TemporalSpec, feature_predicates
from predrel_ros.action.model import DEFAULT_MODEL, NO_CONFIDENCE_MODEL, Layer, PrimitiveModel
from predrel_ros.core.errors import UserError
from predrel_ros.core.frame import PRIMITIVE_LABELS

TEMPORAL = TemporalSpec(lags=(0, 2), recent_max=0, max_hold=1)
N_FEATURES = 2 * len(FRAME_SLOTS)


def random_model(hidden: int, seed: int = 0) -> PrimitiveModel:
    rng = np.random.default_rng(seed)
    classes = len(PRIMITIVE_LABELS)
    if hidden:
        layers = [Layer(rng.normal(size=(N_FEATURES, hidden)), rng.normal(size=hidden)),
                  Layer(rng.normal(size=(hidden, classes)), rng.normal(size=classes))]
    else:
        layers = [Layer(rng.normal(size=(N_FEATURES, classes)), rng.normal(size=classes))]
    return PrimitiveModel(PRIMITIVE_LABELS, TEMPORAL, True, layers, baseline=rng.uniform(size=N_FEATURES),
                          training={"source": "oracle"})


def test_probabilities_are_a_softmax_of_the_layers():
    model = random_model(hidden=4)
    x = np.random.default_rng(1).uniform(size=(3, N_FEATURES))
    first, second = model.layers
    logits = np.tanh(x @ first.weights + first.bias) @ second.weights + second.bias
    expected = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(model.probabilities(x), expected)
    np.testing.assert_allclose(model.probabilities(x[0]), expected[0])
    with pytest.raises(ValueError, match=f"expected {N_FEATURES} features"):
        model.logits(np.zeros(5))


def test_linear_reliance_is_the_exact_margin_decomposition_per_predicate():
    model = random_model(hidden=0)
    x = np.random.default_rng(2).uniform(size=N_FEATURES)
    logits = model.logits(x)
    winner, runner_up = np.argsort(logits)[::-1][:2]
    w = model.layers[0].weights
    contributions = (w[:, winner] - w[:, runner_up]) * (x - model.baseline)
    # the contributions add up to the margin minus the baseline's margin
    assert contributions.sum() == pytest.approx((logits[winner] - logits[runner_up])
                                                - (model.logits(model.baseline)[winner]
                                                   - model.logits(model.baseline)[runner_up]))
    positive = np.maximum(contributions, 0)
    predicates = np.array(feature_predicates(TEMPORAL))
    expected = {name: positive[predicates == name].sum() / positive.sum() for name in set(predicates)}
    reliance = model.reliance(x, int(winner))
    assert sum(reliance.values()) == pytest.approx(1.0)
    for name, share in reliance.items():
        assert share == pytest.approx(expected[name])


def test_reliance_is_empty_at_the_baseline():
    model = random_model(hidden=3)
    assert model.reliance(model.baseline, 0) == {}


@pytest.mark.parametrize("hidden", [0, 5])
def test_save_load_round_trip(tmp_path, hidden):
    model = random_model(hidden)
    path = model.save(tmp_path / "model.json")
    loaded = PrimitiveModel.load(path)
    assert loaded.class_names == model.class_names and loaded.temporal == model.temporal
    assert loaded.hidden == hidden and loaded.confidence_weighted and loaded.training == {"source": "oracle"}
    x = np.random.default_rng(3).uniform(size=(4, N_FEATURES))
    np.testing.assert_allclose(loaded.probabilities(x), model.probabilities(x), rtol=1e-5, atol=1e-6)
    # saving the loaded model gives the same bytes
    assert loaded.save(tmp_path / "again.json").read_bytes() == path.read_bytes()


def edit(path, change):
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def test_refuses_a_truncated_file(tmp_path):
    path = random_model(0).save(tmp_path / "model.json")
    path.write_text(path.read_text()[:500])
    with pytest.raises(UserError, match="not valid JSON.*corrupted"):
        PrimitiveModel.load(path)


def test_refuses_an_edited_parameter(tmp_path):
    path = random_model(0).save(tmp_path / "model.json")
    edit(path, lambda data: data["layers"][0]["bias"].__setitem__(0, 123.0))
    with pytest.raises(UserError, match="digest mismatch"):
        PrimitiveModel.load(path)


def test_refuses_other_formats_newer_versions_and_missing_files(tmp_path):
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"format": "something-else"}))
    with pytest.raises(UserError, match="not a predrel-action-model file"):
        PrimitiveModel.load(path)
    newer = random_model(0).to_dict()
    newer["format_version"] = 99
    path.write_text(json.dumps(newer))
    with pytest.raises(UserError, match="format version 99 is newer"):
        PrimitiveModel.load(path)
    with pytest.raises(UserError, match="cannot read action model"):
        PrimitiveModel.load(tmp_path / "missing.json")


def resign(data: dict) -> None:
    """Re-sign after an edit, so that the checks after the digest are reached."""
    from predrel_ros.action import model as model_module
    data.pop("digest")
    data["digest"] = model_module._digest(data)


def _drop_last_slot(data):
    data["encoding"]["frame_slots"] = data["encoding"]["frame_slots"][:-1]


def _drop_last_class(data):
    data["class_names"] = data["class_names"][:-1]


def _lag_without_zero(data):
    data["encoding"]["temporal"]["lags"] = [2]


@pytest.mark.parametrize("change, message", [
    (_drop_last_slot, "different predicate encoding"),
    (_drop_last_class, "invalid model .*8 outputs for 7 classes"),
    (_lag_without_zero, "invalid model .*lags must start at 0"),
])
def test_refuses_a_different_encoding_and_inconsistent_content(tmp_path, change, message):
    path = random_model(0).save(tmp_path / "model.json")

    def change_and_resign(data):
        change(data)
        resign(data)
    edit(path, change_and_resign)
    with pytest.raises(UserError, match=message):
        PrimitiveModel.load(path)


def test_constructor_checks():
    model = random_model(0)
    with pytest.raises(ValueError, match="distinct"):
        PrimitiveModel(("a", "a"), TEMPORAL, True, model.layers, model.baseline)
    with pytest.raises(ValueError, match="do not fit"):
        PrimitiveModel(PRIMITIVE_LABELS, TemporalSpec(lags=(0,), recent_max=0), True, model.layers, model.baseline)
    bad = [Layer(np.full((N_FEATURES, 8), np.nan), np.zeros(8))]
    with pytest.raises(ValueError, match="non-finite"):
        PrimitiveModel(PRIMITIVE_LABELS, TEMPORAL, True, bad, model.baseline)


def test_packaged_models_load_and_name_the_primitives():
    model = PrimitiveModel.load(DEFAULT_MODEL)
    no_confidence = PrimitiveModel.load(NO_CONFIDENCE_MODEL)
    for packaged in (model, no_confidence):
        assert packaged.class_names == PRIMITIVE_LABELS
        assert packaged.training["source"] in ("oracle", "perception")
        assert packaged.training["test"]["accuracy"] > 0.5
    assert model.confidence_weighted and not no_confidence.confidence_weighted
