import argparse

import pytest

from predrel_ros.core.errors import UserError
from predrel_ros.tools.benchmarks import TARGETS, predicates


def _args(**changes) -> argparse.Namespace:
    values = dict(frames=10, repeats=1, width=160, height=120, crowd=40, seed=0, data=None, episodes=2)
    return argparse.Namespace(**{**values, **changes})


def test_predicates_target_is_registered():
    assert TARGETS["predicates"][0] == "predrel_ros.tools.benchmarks.predicates"


def test_the_crowd_has_fixed_scores_and_moves_a_pixel_a_frame():
    frame = predicates.crowd(12, 160, 120, seed=4)
    frames = [frame(t) for t in range(3)]
    assert [len(entities) for entities in frames] == [12, 12, 12]
    assert [e.score for e in frames[0]] == [e.score for e in frames[2]]
    first, later = frames[0][5], frames[2][5]
    assert later.box[0] - first.box[0] in (0, 2) and later.box[1] == first.box[1]


def test_small_run_reports_both_cases_and_the_crowd_beyond_the_bound():
    result = predicates.run(_args())
    scene, crowd = result["scene"], result["crowd"]
    assert scene["without_depth"]["n"] == scene["with_depth"]["n"] == 10
    assert scene["estimates_per_frame"] > 50
    assert crowd["dropped_per_frame"] == 40 - 32             # the shipped config's max_entities
    assert crowd["per_frame"]["median_ms"] > 0 and crowd["goal_ms"] == predicates.CROWD_GOAL_MS
    assert crowd["per_frame"]["cpu"]["n"] == scene["with_depth"]["cpu"]["n"] == 10      # CPU time beside wall time
    with pytest.raises(UserError, match="--frames"):
        predicates.run(_args(frames=2))
    with pytest.raises(UserError, match="--episodes"):
        predicates.run(_args(episodes=0))


def test_a_datasets_episodes_are_timed_with_and_without_depth(controlled_dataset):
    result = predicates.run(_args(data=str(controlled_dataset), episodes=1))
    episodes = result["episodes"]
    assert episodes["episodes"] == 1 and episodes["entities_per_frame"] > 2
    assert episodes["with_depth"]["n"] == episodes["without_depth"]["n"] > 0
    assert episodes["with_depth"]["cpu"]["n"] == episodes["with_depth"]["n"]
    assert all("x" in size for size in episodes["image"])
    assert "episodes" not in predicates.run(_args())


def test_a_folder_that_is_no_dataset_is_refused(tmp_path):
    with pytest.raises(UserError, match="not a dataset folder"):
        predicates.run(_args(data=str(tmp_path)))
