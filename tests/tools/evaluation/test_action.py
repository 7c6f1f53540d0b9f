import numpy as np

from predrel_ros.action.encoding import TemporalSpec
from predrel_ros.action.evaluation import predict_stream
from predrel_ros.action.streams import EpisodeStream
from predrel_ros.action.training import Hyperparameters, fit_model
from predrel_ros.core.frame import PRIMITIVE_LABELS
from predrel_ros.predicates import PredicateExtractor
from predrel_ros.sources.dataset import open_dataset
from predrel_ros.tools.evaluation import action


def stream_of(episode, keep=lambda t: True):
    extractor = PredicateExtractor()
    frames = [(f.index, extractor.update(f.index, f.entities)) for f in episode.frames(images=False) if keep(f.index)]
    return EpisodeStream(episode.meta.name, "", frames, episode.primitives())


def test_masked_and_unmasked_predictions_equal_predict_stream(controlled_dataset):
    dataset = open_dataset(controlled_dataset)
    train = [stream_of(e) for e in dataset.episodes("train")]
    hyper = Hyperparameters(TemporalSpec(lags=(0, 3), recent_max=6, max_hold=2), hidden=4)
    full = fit_model(train, hyper, PRIMITIVE_LABELS)
    no_confidence = fit_model(train, hyper, PRIMITIVE_LABELS, confidence_weighted=False)
    models = action.ActionModels(full, no_confidence, None, "test")
    test = stream_of(dataset.episodes("test")[0], keep=lambda t: t % 4 != 1)    # frames dropped
    y_true = action.class_indices(test.labels, PRIMITIVE_LABELS)
    outcome = action.predict_condition(models, test.frames, y_true)
    shortcut = action.predict_condition(models, test.frames, y_true, known_values_confident=True)
    for variant, model, masked in ([(action.FULL, full, ()), (action.NO_CONFIDENCE, no_confidence, ())]
                                   + [(action.mask_variant(n), full, tuple(names))
                                      for n, names in action.MASKS.items()]):
        expected = predict_stream(model, test, masked=masked)
        y_pred, p_true = outcome[variant]
        assert np.array_equal(y_pred, expected.y_pred), variant
        assert np.allclose(p_true, expected.p_true, equal_nan=True), variant
        assert np.array_equal(shortcut[variant][0], y_pred) and np.array_equal(shortcut[variant][1], p_true,
                                                                               equal_nan=True)
