import numpy as np
import pytest

from predrel_ros.core.entities import Entity
from predrel_ros.reliability.identity_switches import IdentitySwitches


def entity(track_id, label, visibility=1.0):
    return Entity(id=track_id, label=label, role="manipulated_object", box=np.array([0, 0, 10, 10], float),
                  visibility=visibility)


def test_a_lost_track_is_replaced_once_a_new_track_of_its_class_is_observed():
    switches = IdentitySwitches(memory=5)
    assert switches.update(0, [entity(1, "cube"), entity(2, "bowl")]) == frozenset()
    assert switches.update(1, [entity(1, "cube", 0.0), entity(2, "bowl")]) == frozenset()   # lost, no successor
    assert switches.update(2, [entity(2, "bowl")]) == frozenset()                            # hidden: still missed
    assert switches.update(3, [entity(2, "bowl"), entity(3, "cube")]) == {1}                 # found again as 3
    assert switches.update(4, [entity(2, "bowl"), entity(3, "cube")]) == {1}
    assert switches.update(10, [entity(2, "bowl"), entity(3, "cube")]) == frozenset()        # forgotten


def test_other_classes_and_tracks_older_than_the_lost_one_replace_nothing():
    switches = IdentitySwitches(memory=15)
    switches.update(0, [entity(1, "cube"), entity(2, "cube"), entity(3, "bowl")])
    # cube 1 is hidden; cube 2 was there all along and a new bowl appears: neither replaces it
    assert switches.update(1, [entity(2, "cube"), entity(3, "bowl"), entity(4, "bowl")]) == frozenset()
    # a track first seen invisible, then observed, counts from its first observation
    switches.update(2, [entity(2, "cube"), entity(5, "cube", 0.0)])
    assert switches.update(3, [entity(2, "cube"), entity(5, "cube")]) == {1}


def test_an_id_that_names_another_class_is_a_new_track_and_bad_settings_are_refused():
    switches = IdentitySwitches()
    switches.update(0, [entity(1, "cube")])
    switches.update(1, [entity(1, "bowl")])          # the id was reused for another object
    assert switches.update(2, [entity(2, "cube")]) == frozenset()   # the old cube record is gone
    switches.reset()
    assert switches.update(3, []) == frozenset()
    with pytest.raises(ValueError, match="memory"):
        IdentitySwitches(memory=0)
    with pytest.raises(ValueError, match="min_visibility"):
        IdentitySwitches(min_visibility=2.0)
