"""The true rolling agreement from the saved sequences, and the reliability monitor's reference mode
equal to it on the same frames (dropped frames and lost streams disagree in both)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from predrel_ros.degradations import CLEAN, Condition
from predrel_ros.predicates.config import PredicateConfig
from predrel_ros.reliability.monitor import MonitorConfig, ReliabilityMonitor
from predrel_ros.reliability.trust import GROUND_TRUTH
from predrel_ros.tools.evaluation.config import NO_ACTION, EvaluationConfig
from predrel_ros.tools.evaluation.data import load_episode, resolve_data
from predrel_ros.tools.evaluation.front_ends import OracleFrontEnd, Timer
from predrel_ros.tools.evaluation.rolling_agreement import rolling_agreement
from predrel_ros.tools.evaluation.sequences import EpisodeSequences
from predrel_ros.tools.evaluation.sweep import run_sweep

WINDOW = 30
CONDITIONS = (CLEAN, Condition("frame_drop", 3), Condition("occlusion", 3), Condition("occlusion", 5))


@pytest.fixture(scope="module")
def swept(controlled_dataset, predicate_file, tmp_path_factory):
    out = tmp_path_factory.mktemp("eval") / "oracle"
    config = EvaluationConfig(perception="oracle", predicate_config=predicate_file, kinds=("frame_drop", "occlusion"),
                              severities=(3, 5), action_model=NO_ACTION, test_split="train", max_episodes=1)
    summary = run_sweep(config, controlled_dataset, out, progress=False, log=lambda _: None)
    return config, out, summary


def test_rolling_agreement_counts_known_frames_of_the_window():
    keys = [("contact", 1, 2), ("static", 1, 2)]
    y = np.array([[[1, 1, -1, 0], [2, 2, 2, 2]]], dtype=np.int8)
    y_ref = np.array([[1, 0, 1, 0], [2, -1, -1, 3]], dtype=np.int8)
    zeros = np.zeros((2, 4), np.float32)
    sequences = EpisodeSequences("e", "", keys, [CLEAN], y, zeros[None], y[0:1] >= 0, np.ones((1, 4), bool),
                                 y_ref, zeros, zeros, "gt")
    result = rolling_agreement(sequences, 0, window=2)
    np.testing.assert_allclose(result["contact"], [1.0, 0.5, 0.0, 0.5])   # frame 2: dropped (UNK) disagrees
    np.testing.assert_allclose(result["static"], [1.0, 1.0, math.nan, 0.0])
    with pytest.raises(ValueError, match="window"):
        rolling_agreement(sequences, 0, window=0)


def _frames(episode, condition, seed):
    """(frame_index, delivered entities or None for a dropped frame, the depth image and camera of
    the frame they show) of one condition, as the replay graph gives them to the degraded pipeline."""
    front = OracleFrontEnd()
    clean = front.run(episode, CLEAN, seed, None, Timer())
    run = clean if condition == CLEAN else front.run(episode, condition, seed, clean, Timer())
    delivered = {t: (entities, episode.frames[content].depth, episode.frames[content].camera)
                 for (t, content), entities in zip(run.delivered, run.entities)}
    return [(t, *delivered.get(t, (None, None, None))) for t in range(episode.num_frames)]


@pytest.mark.parametrize("condition", CONDITIONS, ids=str)
def test_ground_truth_mode_equals_the_offline_rolling_agreement(swept, controlled_dataset, condition):
    from predrel_ros.predicates.extractor import PredicateExtractor

    config, out, summary = swept
    source = resolve_data(controlled_dataset, config.test_split).split(config.test_split)[0]
    episode = load_episode(source, images=True)   # contact reads the depth image, as the evaluator does
    sequences = EpisodeSequences.load(out / "sequences" / f"{episode.name}.npz")
    truth = rolling_agreement(sequences, sequences.condition_index(condition), WINDOW)
    predicates = PredicateConfig.load(config.predicate_config, section="predicates")
    monitor = ReliabilityMonitor(MonitorConfig(reference_mode=GROUND_TRUTH, window=WINDOW), predicates=predicates)
    extractor = PredicateExtractor(predicates)
    compared = dropped = 0
    for t, entities, depth_m, camera in _frames(episode, condition, config.seed + source.index):
        monitor.add_reference(t, episode.frames[t].predicates)
        monitor.add_reference_entities(t, episode.gt_entities[t])
        if entities is None:
            dropped += 1
            continue
        monitor.add_evaluated_entities(t, entities)
        assert monitor.add_evaluated(t, extractor.update(t, entities, depth_m=depth_m, camera=camera), condition.kind,
                                     condition.severity)
        groups = {record.predicate: record.agreement for record in monitor.report(streams=False).groups}
        for group, values in truth.items():
            expected = values[t]
            assert (math.isnan(expected) and math.isnan(groups.get(group, math.nan))) \
                or groups.get(group) == pytest.approx(expected, abs=1e-12), (t, group, groups.get(group), expected)
            compared += 1
    assert compared > 100
    assert (dropped > 0) == (condition.kind == "frame_drop")
    if dropped:
        assert monitor.snapshot_counters()["incomplete"] == dropped
