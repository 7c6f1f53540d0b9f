import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from predrel_ros.core.entities import MANIPULATED_OBJECT, RIGHT_HAND, Entity
from predrel_ros.reliability.scene_memory import SceneMemory

SIZE = (320, 240)


def thing(track, x, y, label="cube", role=MANIPULATED_OBJECT, size=20, visibility=1.0, depth=None):
    centroid = None if depth is None else [x + size / 2, y + size / 2, depth]
    return Entity(id=track, label=label, role=role, box=[x, y, x + size, y + size], visibility=visibility,
                  centroid=centroid)


def hand(track, x, y):
    return thing(track, x, y, label="hand", role=RIGHT_HAND, size=30)


def counts(events):
    return {name: value for name, value in vars(events).items() if value and name != "observed"}


def test_a_steady_scene_has_no_events_after_its_first_frame():
    memory = SceneMemory()
    first = memory.update(0, [thing(1, 100, 100), thing(2, 200, 120)], SIZE)
    assert (first.births, first.unexplained_births, first.observed) == (2, 2, 2)
    for t in range(1, 20):
        assert counts(memory.update(t, [thing(1, 100 + t, 100), thing(2, 200, 120)], SIZE)) == {}


def test_births_at_the_border_or_at_a_hand_are_explained():
    memory = SceneMemory()
    memory.update(0, [hand(9, 150, 100)], SIZE)
    events = memory.update(1, [hand(9, 150, 100), thing(1, 0, 100), thing(2, 170, 125), thing(3, 60, 60)], SIZE)
    assert (events.births, events.unexplained_births) == (3, 1)      # only the one at (60, 60)


def test_an_unexplained_disappearance_stays_missing_until_it_returns_or_is_forgotten():
    memory = SceneMemory(memory=10)
    memory.update(0, [thing(1, 100, 100), thing(2, 0, 100)], SIZE)
    events = memory.update(1, [], SIZE)
    assert (events.disappearances, events.unexplained_disappearances, events.missing) == (2, 1, 1)
    assert memory.update(2, [], SIZE).missing == 1
    back = memory.update(3, [thing(1, 100, 100)], SIZE)
    assert (back.missing, back.births) == (0, 0)
    memory.update(4, [], SIZE)
    assert memory.update(13, [], SIZE).missing == 1
    assert memory.update(14, [], SIZE).missing == 0                  # last observed at 3: forgotten after 10


def test_an_entity_with_visibility_zero_is_not_observed():
    memory = SceneMemory()
    memory.update(0, [thing(1, 100, 100)], SIZE)
    events = memory.update(1, [thing(1, 100, 100, visibility=0.0)], SIZE)
    assert (events.observed, events.unexplained_disappearances, events.missing) == (0, 1, 1)


def test_a_new_track_at_a_vanished_entitys_place_is_reacquired_or_relabelled():
    memory = SceneMemory()
    memory.update(0, [thing(1, 100, 100), thing(2, 200, 100)], SIZE)
    memory.update(1, [], SIZE)
    events = memory.update(2, [thing(7, 102, 100), thing(8, 200, 101, label="cylinder")], SIZE)
    assert counts(events) == {"reacquired": 1, "relabels": 1}


def test_a_track_that_changes_its_label_or_role_is_relabelled():
    memory = SceneMemory()
    memory.update(0, [hand(1, 100, 100)], SIZE)
    assert counts(memory.update(1, [thing(1, 100, 100, label="cylinder", size=30)], SIZE)) == {"relabels": 1}


def test_implausible_jumps_in_the_image_and_in_depth():
    memory = SceneMemory(max_step=0.1, max_depth_step=0.1)
    memory.update(0, [thing(1, 50, 100, depth=1.0), thing(2, 200, 100, depth=1.0)], SIZE)
    events = memory.update(1, [thing(1, 150, 100, depth=1.0), thing(2, 200, 100, depth=1.5)], SIZE)
    assert counts(events) == {"jumps": 2}
    # the same move over 5 frames is plausible (the entity was not observed in between)
    memory.update(2, [], SIZE)
    assert counts(memory.update(6, [thing(1, 200, 100, depth=1.0), thing(2, 200, 100, depth=1.5)], SIZE)) == {}


def test_settings_are_checked():
    with pytest.raises(ValueError, match="border"):
        SceneMemory(border=1.5)
    with pytest.raises(ValueError, match="max_step"):
        SceneMemory(max_step=0.0)
    with pytest.raises(ValueError, match="memory"):
        SceneMemory(memory=0)
    with pytest.raises(ValueError, match="image_size"):
        SceneMemory().update(0, [], (0, 240))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(10, 280), st.integers(10, 200)), min_size=1, max_size=6, unique=True),
       st.randoms(use_true_random=False))
def test_events_do_not_depend_on_the_order_of_the_entities(places, random):
    frames = [[thing(i, x + t, y, label=("cube", "bowl")[i % 2]) for i, (x, y) in enumerate(places)
               if (i + t) % 4] for t in range(12)]
    ordered, shuffled = SceneMemory(), SceneMemory()
    for t, entities in enumerate(frames):
        mixed = list(entities)
        random.shuffle(mixed)
        a, b = ordered.update(t, entities, SIZE), shuffled.update(t, mixed, SIZE)
        assert a == b
        assert 0 <= a.missing <= len(places) and a.unexplained_births <= a.births


def test_close_new_tracks_get_the_same_events_in_either_order():
    """Found by hypothesis in a CI run: three tracks a pixel apart, appearing and vanishing in turn; a
    new track once took another new track of the same frame as its predecessor, by input order."""
    places = [(10, 10), (10, 11), (10, 12)]
    frames = [[thing(i, x + t, y, label=("cube", "bowl")[i % 2]) for i, (x, y) in enumerate(places)
               if (i + t) % 4] for t in range(12)]
    ordered, reversed_order = SceneMemory(), SceneMemory()
    for t, entities in enumerate(frames):
        assert ordered.update(t, entities, SIZE) == reversed_order.update(t, entities[::-1], SIZE)
