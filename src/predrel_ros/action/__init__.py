"""Downstream manipulation-primitive recognition over the confidence-weighted predicate state
(paper 3.6, 4.6): approach, grasp, transport, place, insert, remove, release, idle.

Modules: `encoding` (Psi_t as a fixed-length vector, temporal window, masking), `model` (the
classifier and its model file), `training` (fit on train, select on val), `streams` (predicate
streams of dataset episodes from oracle or perceived entities, clean or degraded), `evaluation`
(offline accuracy / macro-F1 / true-class probabilities for Table 13 and DIS), `metrics`,
`trust_gate` (ActionConfig and when an estimate is trusted), `recognizer` (the live, per-frame
ActionRecognizer). The CLI is `predrel_ros.tools.cli.action` (`predrel action`).
"""
from predrel_ros.action.encoding import (
                                             FRAME_SLOTS,
                                             PAIR_KINDS,
                                             TemporalSpec,
                                             TemporalWindow,
                                             encode_frame,
                                             encode_sequence,
                                             expand_masked,
                                             feature_names,
)
from predrel_ros.action.evaluation import Evaluation, StreamPrediction, evaluate_streams, held_scores, predict_stream
from predrel_ros.action.model import DEFAULT_MODEL, PrimitiveModel
from predrel_ros.action.recognizer import ActionRecognizer, ActionResult
from predrel_ros.action.streams import EpisodeStream, dataset_streams, episode_stream, make_source
from predrel_ros.action.trust_gate import ActionConfig, trust_decision
from predrel_ros.core.frame import PRIMITIVE_LABELS

__all__ = ["DEFAULT_MODEL", "FRAME_SLOTS", "PAIR_KINDS", "PRIMITIVE_LABELS", "ActionConfig", "ActionRecognizer",
           "ActionResult", "EpisodeStream", "Evaluation", "PrimitiveModel", "StreamPrediction", "TemporalSpec",
           "TemporalWindow", "dataset_streams", "encode_frame", "encode_sequence", "episode_stream",
           "evaluate_streams", "expand_masked", "feature_names", "held_scores", "make_source", "predict_stream",
           "trust_decision"]
