import json

import numpy as np

from predrel_ros.core.entities import CONTAINER, MANIPULATED_OBJECT, Entity
from predrel_ros.perception.entity_json import frame_from_json, frame_to_json
from predrel_ros.perception.overlay import LOST_COLOUR, draw_entities, id_colour


def entities():
    mask = np.zeros((60, 80), bool)
    mask[10:20, 30:45] = True
    cube = Entity(id=4, label="cube", role=MANIPULATED_OBJECT, box=[30, 10, 45, 20], mask=mask, score=0.9,
                  visibility=0.8, track_quality=0.7, mask_quality=0.95, point3d=[0.1, -0.05, 0.8],
                  centroid=[37, 14.5, 0.8], frame_index=3,
                  attributes={"track_state": "tracked", "class_id": np.int64(0), "track_quality": {"value": 0.7}})
    bowl = Entity(id=9, label="bowl", role=CONTAINER, box=[50, 30, 70, 50], score=0.0, visibility=0.0,
                  frame_index=3, attributes={"track_state": "lost"})
    return [cube, bowl]


def test_entities_survive_the_json_round_trip():
    document = json.loads(json.dumps(frame_to_json(entities(), 3, 80, 60, stamp_ns=12345)))
    assert document["frame_index"] == 3 and document["image_width"] == 80 and document["stamp_ns"] == 12345
    assert document["entities"][0]["mask"]["width"] == 15
    back = frame_from_json(document)
    for original, copy in zip(entities(), back):
        assert (copy.id, copy.label, copy.role, copy.frame_index) == (original.id, original.label, original.role, 3)
        np.testing.assert_allclose(copy.box, original.box)
        assert (copy.mask is None) == (original.mask is None)
        if original.mask is not None:
            np.testing.assert_array_equal(copy.mask, original.mask)
            np.testing.assert_allclose(copy.point3d, original.point3d)
        assert (copy.score, copy.visibility, copy.track_quality) == (original.score, original.visibility,
                                                                     original.track_quality)
    assert back[0].attributes["class_id"] == 0


def test_overlay_tints_masks_by_id_and_greys_lost_tracks():
    image = np.zeros((60, 80, 3), np.uint8)
    drawn = draw_entities(image, entities())
    assert image.sum() == 0  # the input is not modified
    inside = drawn[15, 37].astype(int)
    assert np.allclose(inside, np.array(id_colour(4)) * 0.45, atol=1)
    right_edge = [tuple(int(c) for c in drawn[y, 70]) for y in range(32, 49)]
    assert LOST_COLOUR in right_edge and (0, 0, 0) in right_edge  # a grey dashed box for the lost bowl
    assert id_colour(4) == id_colour(4) and id_colour(4) != id_colour(5)
