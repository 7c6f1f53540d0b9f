import numpy as np
import pytest

from predrel_ros.core.entities import Entity
from predrel_ros.degradations import Degrader
from predrel_ros.degradations.entity_occlusion import occlude_entities


def block(track_id, x, y, size=10, shape=(60, 80), depth=None):
    mask = np.zeros(shape, bool)
    mask[y:y + size, x:x + size] = True
    centroid = None if depth is None else [x + size / 2 - 0.5, y + size / 2 - 0.5, depth]
    return Entity(id=track_id, label="cube", role="manipulated_object", box=[x, y, x + size, y + size], mask=mask,
                  centroid=centroid)


def test_partly_hidden_entity_shrinks_and_loses_visibility():
    entity = block(1, 10, 10, depth=0.8)
    occluded = np.zeros((60, 80), bool)
    occluded[:, 15:] = True                  # the right half of the block
    [seen] = occlude_entities([entity], occluded)
    assert seen.visibility == pytest.approx(0.5)
    assert seen.box.tolist() == [10, 10, 15, 20]
    assert seen.centroid.tolist() == pytest.approx([12.0, 14.5, 0.8])
    assert entity.mask.sum() == 100 and entity.visibility == 1.0          # the input is untouched


def test_fully_hidden_entities_are_not_detected_and_box_only_ones_lose_visibility():
    hidden, free = block(1, 0, 0), block(2, 40, 40)
    box_only = Entity(id=3, label="bowl", role="container", box=[0, 0, 20, 10])
    occluded = np.zeros((60, 80), bool)
    occluded[:10, :10] = True
    seen = occlude_entities([hidden, free, box_only], occluded)
    assert [e.id for e in seen] == [2, 3]
    assert seen[0].visibility == 1.0 and seen[1].visibility == pytest.approx(0.5)
    with pytest.raises(ValueError, match="does not match"):
        occlude_entities([block(4, 0, 0, shape=(30, 40))], occluded)


def test_higher_severity_hides_more_of_every_entity():
    entities = [block(i, 8 * i, 5 * i, size=12) for i in range(1, 6)]
    visible = []
    for severity in range(6):
        occluded = Degrader("occlusion", severity, seed=7).occluder_mask((60, 80), targets=entities)
        seen = {e.id: e.visibility for e in occlude_entities(entities, occluded)}
        visible.append([seen.get(e.id, 0.0) for e in entities])
    visible = np.array(visible)
    assert (visible[0] == 1.0).all()
    assert (np.diff(visible, axis=0) <= 1e-12).all()       # nested occluders: never more visible
    assert visible[5].mean() < 0.7
