import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from predrel_ros.core.entities import Entity
from predrel_ros.reliability.association import associate


def entity(id_, label, box, role="manipulated_object"):
    return Entity(id=id_, label=label, role=role, box=np.array(box, float))


boxes = st.lists(st.tuples(st.integers(0, 200), st.integers(0, 200), st.integers(5, 60), st.integers(5, 60)),
                 min_size=1, max_size=6)


@settings(max_examples=50, deadline=None)
@given(boxes, st.randoms(use_true_random=False))
def test_a_relabelled_shuffled_copy_maps_back_to_its_originals(items, rng):
    reference = [entity(i + 1, "cube", (x, y, x + w, y + h)) for i, (x, y, w, h) in enumerate(items)]
    unique = {tuple(e.box) for e in reference}
    if len(unique) != len(reference):
        return
    evaluated = [entity(100 + e.id, "cube", e.box) for e in reference]
    rng.shuffle(evaluated)
    assert associate(evaluated, reference) == {100 + e.id: e.id for e in reference}


def test_classes_gate_the_match_unless_the_vocabularies_are_disjoint():
    reference = [entity(1, "cube", (0, 0, 10, 10)), entity(2, "bowl", (50, 50, 80, 80))]
    assert associate([entity(7, "bowl", (0, 0, 10, 10))], reference) == {}
    assert associate([entity(7, "cup", (1, 0, 10, 10))], reference) == {7: 1}      # no shared class name
    assert associate([entity(7, "cube", (8, 8, 18, 18))], reference, min_iou=0.3) == {}   # IoU 4/196
    assert associate([], reference) == {} and associate(reference, []) == {}


def test_renamed_keeps_the_estimates_of_associated_entities_in_the_other_sides_ids():
    from predrel_ros.predicates.estimate import PredicateEstimate
    from predrel_ros.reliability.association import renamed

    estimates = [PredicateEstimate("contact", 7, 9, "T", 0.8, frame_index=3),
                 PredicateEstimate("active_hand", 7, -1, "T", 0.7, frame_index=3),
                 PredicateEstimate("static", 9, 12, "Ab", 0.6, frame_index=3)]       # 12: a false detection
    kept, left_out = renamed(estimates, {7: 1, 9: 2})
    assert [(e.name, e.subject, e.object, e.value, e.confidence, e.frame_index) for e in kept] == [
        ("contact", 1, 2, "T", 0.8, 3), ("active_hand", 1, -1, "T", 0.7, 3)]
    assert kept[0].evidence == estimates[0].evidence and kept[0].group == "contact"
    assert left_out == 1
    assert renamed([], {}) == ([], 0)
