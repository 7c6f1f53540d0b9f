import numpy as np
import pytest

from predrel_ros.core.entities import MANIPULATED_OBJECT, RIGHT_HAND, SURFACE, Entity
from predrel_ros.core.frame import CameraIntrinsics
from predrel_ros.predicates.boundary_depth import boundary_depth_gap_m, boundary_separation_m
from predrel_ros.predicates.config import PredicateConfig
from predrel_ros.predicates.extractor import PredicateExtractor
from predrel_ros.predicates.geometry import EntityGeometry

HEIGHT, WIDTH = 120, 160
HAND, OBJ, TABLE = 1, 2, 3
CAMERA = CameraIntrinsics(WIDTH, HEIGHT, fx=200.0, fy=200.0, cx=79.5, cy=59.5)


def rect(track_id, role, x, y, w, h):
    mask = np.zeros((HEIGHT, WIDTH), bool)
    mask[y:y + h, x:x + w] = True
    return Entity(id=track_id, label=role, role=role, box=[x, y, x + w - 1, y + h - 1], mask=mask)


def scene(depth_hand, depth_obj):
    """A hand right of an object, masks adjacent (columns 59 | 60), each at its own depth (m)."""
    hand, obj = rect(HAND, RIGHT_HAND, 60, 40, 20, 20), rect(OBJ, MANIPULATED_OBJECT, 40, 40, 20, 20)
    depth = np.full((HEIGHT, WIDTH), 2.0, np.float32)
    depth[hand.mask], depth[obj.mask] = depth_hand, depth_obj
    return hand, obj, depth


def boundary(a, b, depth, radius=2.0):
    return boundary_depth_gap_m(EntityGeometry(a), EntityGeometry(b), depth, radius, proximity_within_m=0.01)


def gap(a, b, depth, radius=2.0):
    found = boundary(a, b, depth, radius)
    return None if found is None else found.gap_m


def contact(entities, depth):
    values = {e.key: e.value for e in PredicateExtractor().update(0, entities, depth_m=depth)}
    return values


def test_touching_in_depth_is_contact_and_one_in_front_of_the_other_is_not():
    hand, obj, depth = scene(0.80, 0.805)
    assert gap(hand, obj, depth) == pytest.approx(0.005, abs=1e-6)
    assert contact([hand, obj], depth)[("contact", HAND, OBJ)] == "T"
    hand, obj, depth = scene(0.60, 0.80)               # the hand 20 cm in front: masks touch, bodies do not
    assert gap(hand, obj, depth) == pytest.approx(0.20, abs=1e-6)
    assert contact([hand, obj], depth)[("contact", HAND, OBJ)] == "N"


def test_a_surface_receding_behind_the_object_touches_it_and_a_lifted_object_does_not():
    table = rect(TABLE, SURFACE, 0, 80, WIDTH, 40)
    rows = np.arange(HEIGHT, dtype=np.float32)[:, None]
    depth = np.broadcast_to(1.5 - 0.003 * (rows - 80), (HEIGHT, WIDTH)).astype(np.float32).copy()  # nearer below
    standing = rect(OBJ, MANIPULATED_OBJECT, 70, 60, 20, 20)         # bottom row 79, table from row 80
    depth[standing.mask] = 1.5                                          # the foot where row 80's table is
    assert gap(standing, table, depth) < 0.01
    assert contact([standing, table], depth)[("contact", OBJ, TABLE)] == "T"
    depth[standing.mask] = 1.30                                         # lifted, 20 cm nearer than the table there
    assert gap(standing, table, depth) > 0.1
    assert contact([standing, table], depth)[("contact", OBJ, TABLE)] == "N"


def test_a_hand_inside_a_box_lies_within_its_depths_but_touches_none_of_them():
    """The box's rim is in front of the hand and its far wall behind (dev seed 1403 `ep0001_insert`):
    the gap to that range is 0, but no box depth next to the hand comes within 3 cm of the hand's."""
    from predrel_ros.core.entities import CONTAINER
    box = rect(4, CONTAINER, 30, 30, 80, 60)
    hand = rect(HAND, RIGHT_HAND, 55, 10, 30, 40)       # reaching in from above: half of it in the box's image box
    box.mask[hand.mask] = False
    depth = np.full((HEIGHT, WIDTH), 2.0, np.float32)
    wall = np.zeros((HEIGHT, WIDTH), bool)
    wall[:, ::2] = True                                # every other column of the box: the far wall, 4 cm behind
    depth[box.mask], depth[box.mask & wall] = 0.80, 0.88   # the others: the rim, 4 cm in front of the hand
    depth[hand.mask] = 0.84
    found = boundary(hand, box, depth)
    assert found.gap_m == pytest.approx(0.0, abs=1e-6)
    assert found.proximity_m == pytest.approx(0.04, abs=1e-4)
    assert contact([hand, box], depth)[("contact", HAND, 4)] == "N"
    depth[hand.mask] = 0.875                           # against the far wall: contact again
    assert boundary(hand, box, depth).proximity_m < 0.01
    assert contact([hand, box], depth)[("contact", HAND, 4)] == "T"


def test_depth_holes_and_one_bad_edge_pixel_do_not_decide():
    hand, obj, depth = scene(0.80, 0.80)
    depth[:, 55:65] = np.nan                           # no valid depth near the boundary
    assert gap(hand, obj, depth) is None
    hand, obj, depth = scene(0.60, 0.80)
    depth[45, 59] = 0.60                               # the object's edge pixel carries the hand's depth
    assert gap(hand, obj, depth) > 0.1


def test_far_apart_masks_have_no_boundary_and_bad_depth_shapes_are_refused():
    hand, obj = rect(HAND, RIGHT_HAND, 120, 40, 20, 20), rect(OBJ, MANIPULATED_OBJECT, 10, 40, 20, 20)
    assert gap(hand, obj, np.ones((HEIGHT, WIDTH), np.float32)) is None
    with pytest.raises(ValueError, match="depth_m"):
        PredicateExtractor().update(0, [hand, obj], depth_m=np.ones((10, 10)))


def test_an_object_inside_a_container_keeps_the_image_contact_its_walls_hide_in_depth():
    from predrel_ros.core.entities import CONTAINER
    bowl = rect(4, CONTAINER, 40, 40, 60, 40)
    bowl.mask[45:75, 50:90] = False                    # the opening, where the object is seen
    obj = rect(OBJ, MANIPULATED_OBJECT, 50, 45, 40, 30)
    depth = np.full((HEIGHT, WIDTH), 2.0, np.float32)
    depth[bowl.mask], depth[obj.mask] = 0.80, 0.90     # the front wall 10 cm nearer than the object
    assert gap(obj, bowl, depth) > 0.05
    assert contact([obj, bowl], depth)[("contact", OBJ, 4)] == "T"


def test_an_object_held_behind_the_hand_keeps_the_image_contact():
    hand = rect(HAND, RIGHT_HAND, 40, 20, 50, 60)
    hand.mask[60:80, 60:72] = False                    # the object shows below the fingers
    obj = rect(OBJ, MANIPULATED_OBJECT, 60, 60, 12, 20)
    depth = np.full((HEIGHT, WIDTH), 2.0, np.float32)
    depth[hand.mask], depth[obj.mask] = 0.70, 0.73     # the visible object 3 cm behind the hand
    assert gap(hand, obj, depth) > 0.02
    assert contact([hand, obj], depth)[("contact", HAND, OBJ)] == "T"
    beside = rect(OBJ, MANIPULATED_OBJECT, 90, 30, 20, 20)       # outside the hand's box: depth decides
    depth[beside.mask] = 0.73
    assert contact([hand, beside], depth)[("contact", HAND, OBJ)] == "N"


def held_scene(object_depth):
    """An object held behind a hand: it shows below the fingers, inside the hand's image box."""
    hand = rect(HAND, RIGHT_HAND, 40, 20, 50, 60)
    hand.mask[60:80, 60:72] = False
    obj = rect(OBJ, MANIPULATED_OBJECT, 60, 60, 12, 20)
    depth = np.full((HEIGHT, WIDTH), 2.0, np.float32)
    depth[hand.mask], depth[obj.mask] = 0.70, object_depth
    return hand, obj, depth


def test_boundary_separation_is_the_3d_distance_where_the_masks_meet():
    hand, obj, depth = held_scene(0.71)
    separation = boundary_separation_m(EntityGeometry(obj), EntityGeometry(hand), depth, CAMERA, 4.0)
    # 1 cm behind, the nearest hand samples 3 px aside (both edges eroded by one pixel): 3 * 0.7 / 200 m
    # across, hypot(0.0105, 0.01) = 0.0145 m at the nearest, a little more at the quantile
    assert 0.0145 <= separation <= 0.016
    depth[:, :] = np.nan
    assert boundary_separation_m(EntityGeometry(obj), EntityGeometry(hand), depth, CAMERA, 4.0) is None


def test_a_held_object_is_released_on_the_frame_the_fingers_open():
    """The object stays in the hand's image box while the hand lets go: its 3D separation from the
    hand rises, and contact ends (release T) on that frame; without intrinsics the image contact stays.
    (A rise of more than hold_separation_jump_m, 6 mm, in one frame would read as the view changing.)
    The hand's mask moves by a pixel a frame, too little for its steady position to move, so the 3D rule
    sees no carry: every hold releases here (still_hold_frames None; the gate is tested in test_hold_state)."""
    depths = [0.71] * 8 + [0.717, 0.73]                # frame 8: the separation rises by 5.5 mm
    config = PredicateConfig().replace("grasp.still_hold_frames", None)
    with_camera, without = PredicateExtractor(config), PredicateExtractor(config)
    for t, object_depth in enumerate(depths):
        hand, obj, depth = held_scene(object_depth)
        hand.centroid = obj.centroid = None
        for entity in (hand, obj):                      # carried up together, then still
            entity.box[[1, 3]] -= min(t, 5)
            entity.mask = np.roll(entity.mask, -min(t, 5), axis=0)
            entity.centroid = entity._centroid_from_geometry()
        depth = np.roll(depth, -min(t, 5), axis=0)
        got = {e.key: e.value for e in with_camera.update(t, [hand, obj], depth_m=depth, camera=CAMERA)}
        kept = {e.key: e.value for e in without.update(t, [hand, obj], depth_m=depth)}
        assert kept[("contact", HAND, OBJ)] == "T"
        if t == 7:
            assert got[("grasp", HAND, OBJ)] == "T"
        if t == 8:
            assert (got[("contact", HAND, OBJ)], got[("release", HAND, OBJ)]) == ("N", "T")
    other_size = CameraIntrinsics(320, 240, 400.0, 400.0, 159.5, 119.5)
    with pytest.raises(ValueError, match="camera intrinsics of 320x240 do not match depth_m of 160x120"):
        PredicateExtractor().update(0, [hand, obj], depth_m=depth, camera=other_size)


def test_dynamic_relations_come_from_3d_velocities_with_depth_and_intrinsics():
    """An object receding from a still hand along the optical axis: the image sees no motion (S), the
    depth a distance growing at 0.3 m/s (MA)."""
    with_camera, without = PredicateExtractor(), PredicateExtractor()
    for t in range(6):
        hand, obj = rect(HAND, RIGHT_HAND, 20, 40, 20, 20), rect(OBJ, MANIPULATED_OBJECT, 100, 40, 20, 20)
        depth = np.full((HEIGHT, WIDTH), 2.0, np.float32)
        depth[hand.mask], depth[obj.mask] = 0.80, 0.80 + 0.01 * t        # 1 cm a frame at 30 Hz
        got = {e.key: e.value for e in with_camera.update(t, [hand, obj], depth_m=depth, camera=CAMERA)}
        image_only = {e.key: e.value for e in without.update(t, [hand, obj], depth_m=depth)}
    assert image_only[("dynamic", HAND, OBJ)] == "S"
    assert got[("dynamic", HAND, OBJ)] == "MA"


def carry_then_pause(put_down: bool, frames=range(20)) -> list[str]:
    """contact(hand, object) per frame: the hand carries the object to the right (masks side by side,
    the object 16 mm behind the hand where they meet: within carried_gap_m, beyond boundary_exit_gap_m),
    then both stand still; put_down: a table under the object from the pause on (frames 10-19)."""
    from predrel_ros.core.package_files import config_path
    from predrel_ros.predicates import PredicateConfig

    extractor = PredicateExtractor(PredicateConfig.load(config_path("predicates.yaml"), section="predicates"))
    values = []
    for t in frames:
        shift = 3 * min(t, 10)
        hand = rect(HAND, RIGHT_HAND, 60 + shift, 40, 20, 20)
        obj = rect(OBJ, MANIPULATED_OBJECT, 40 + shift, 40, 20, 20)
        depth = np.full((HEIGHT, WIDTH), 2.0, np.float32)
        depth[hand.mask], depth[obj.mask] = 0.80, 0.816
        entities = [hand, obj]
        if put_down and 10 <= t < 20:
            table = rect(TABLE, SURFACE, 0, 60, WIDTH, 60)
            depth[table.mask] = 0.816
            entities.append(table)
        found = {e.key: e.value for e in extractor.update(t, entities, depth_m=depth, camera=CAMERA)}
        values.append(found[("contact", HAND, OBJ)])
    return values


def test_a_carry_that_pauses_in_the_air_or_is_put_down_keeps_its_contact_while_the_grip_holds():
    """In the air the remembered carry keeps the carried gap; put down (resting on the table) the
    contact keeps the gap where the fingers held it (`boundary_hold`; the fingers opening end it:
    test_extractor)."""
    in_the_air = carry_then_pause(put_down=False)
    assert in_the_air[0] == "N"                        # not yet seen moving together: 16 mm is beyond 1 cm
    assert set(in_the_air[1:]) == {"T"}                # carried, then still from frame 10 on: the grip holds
    assert carry_then_pause(put_down=True) == in_the_air


def test_a_remembered_carry_survives_a_gap_that_forgot_what_the_object_rested_on():
    """Frames 12-39 missing (beyond track_memory, 15): the table the carried object touched last is
    forgotten and gone, and hand and object come back under the same ids."""
    values = carry_then_pause(put_down=True, frames=[*range(12), 40])
    assert values[-1] in ("T", "N")
