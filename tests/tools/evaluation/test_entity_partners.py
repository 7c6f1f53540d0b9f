"""Why a reference entity has no partner (tools/evaluation/entity_partners.py)."""
import numpy as np
import pytest

from predrel_ros.core.entities import Entity
from predrel_ros.reliability.association import associate
from predrel_ros.tools.evaluation.entity_partners import as_record, entity_table, nested, partner_outcomes


def _entity(id_, label, role, box):
    return Entity(id_, label, role, np.array(box, float))


def test_each_reference_entity_is_matched_seen_under_another_class_or_missed():
    reference = [_entity(1, "hand", "right_hand", (0, 0, 20, 20)),
                 _entity(2, "cube", "manipulated_object", (40, 40, 60, 60)),
                 _entity(3, "cube", "distractor", (100, 100, 120, 120)),
                 _entity(4, "table", "surface", (0, 150, 320, 240))]
    evaluated = [_entity(11, "hand", "right_hand", (1, 1, 21, 21)),
                 _entity(12, "cylinder", "manipulated_object", (41, 40, 61, 60)),   # the cube, named wrongly
                 _entity(13, "table", "surface", (0, 152, 320, 240))]
    mapping = associate(evaluated, reference, 0.3)
    counts = partner_outcomes(evaluated, reference, mapping, 0.3)
    assert counts == {("right_hand", "matched"): 1, ("manipulated_object", "other_class"): 1,
                      ("distractor", "missed"): 1, ("surface", "matched"): 1}
    assert partner_outcomes([], reference[:2], {}, 0.3) == {("right_hand", "missed"): 1,
                                                            ("manipulated_object", "missed"): 1}


def test_a_detection_of_the_same_class_standing_for_two_objects_leaves_one_missed():
    reference = [_entity(1, "cube", "target", (40, 40, 60, 60)),
                 _entity(2, "cube", "manipulated_object", (40, 22, 60, 42))]
    evaluated = [_entity(9, "cube", "manipulated_object", (40, 24, 60, 60))]     # the stack as one box
    counts = partner_outcomes(evaluated, reference, associate(evaluated, reference, 0.3), 0.3)
    assert sum(v for (_, outcome), v in counts.items() if outcome == "missed") == 1
    assert sum(v for (_, outcome), v in counts.items() if outcome == "matched") == 1


def test_the_record_pools_episodes_into_shares_per_role_and_over_all():
    first = nested({("surface", "matched"): 3, ("distractor", "missed"): 1})
    second = nested({("distractor", "other_class"): 2, ("distractor", "matched"): 2})
    assert first == {"surface": {"matched": 3, "other_class": 0, "missed": 0},
                     "distractor": {"matched": 0, "other_class": 0, "missed": 1}}
    record = as_record([first, second])
    assert list(record) == ["distractor", "surface", "all"]
    assert record["distractor"] == {"n": 5, "matched": pytest.approx(0.4), "other_class": pytest.approx(0.4),
                                    "missed": pytest.approx(0.2)}
    assert record["all"]["n"] == 8 and record["all"]["matched"] == pytest.approx(5 / 8)
    assert as_record([]) == {}


def test_the_table_has_a_row_per_role_in_the_records_order():
    record = as_record([nested({("surface", "matched"): 3, ("distractor", "other_class"): 1})])
    rows = [line for line in entity_table(record).splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert rows == ["| distractor | 1 | 0.000 | 1.000 | 0.000 |", "| surface | 3 | 1.000 | 0.000 | 0.000 |",
                    "| all | 4 | 0.750 | 0.250 | 0.000 |"]
