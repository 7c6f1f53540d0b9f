import argparse

import pytest

from predrel_ros.core.errors import UserError
from predrel_ros.tools.benchmarks import TARGETS, predicates


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
    result = predicates.run(argparse.Namespace(frames=10, repeats=1, width=160, height=120, crowd=40, seed=0))
    scene, crowd = result["scene"], result["crowd"]
    assert scene["without_depth"]["n"] == scene["with_depth"]["n"] == 10
    assert scene["estimates_per_frame"] > 50
    assert crowd["dropped_per_frame"] == 40 - 32             # the shipped config's max_entities
    assert crowd["per_frame"]["median_ms"] > 0 and crowd["goal_ms"] == predicates.CROWD_GOAL_MS
    assert crowd["per_frame"]["cpu"]["n"] == scene["with_depth"]["cpu"]["n"] == 10      # CPU time beside wall time
    with pytest.raises(UserError, match="--frames"):
        predicates.run(argparse.Namespace(frames=2, repeats=1, width=160, height=120, crowd=40, seed=0))
