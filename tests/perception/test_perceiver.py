"""The Perceiver end to end on ONNX models built from known tensors (ONNX Runtime, CPU)."""
import numpy as np
import pytest

from predrel_ros.core.entities import CONTAINER, LEFT_HAND, MANIPULATED_OBJECT, RIGHT_HAND
from predrel_ros.core.errors import UserError
from predrel_ros.perception.config import PerceptionConfig
from predrel_ros.perception.perceiver import Perceiver


def perceiver(model_dir, **overrides):
    data = {"model": str(model_dir), "backend": {"name": "onnxruntime", "device": "cpu", "num_threads": 1}}
    data.update(overrides)
    return Perceiver(PerceptionConfig.from_dict(data))


def frame():
    return np.zeros((240, 320, 3), np.uint8)


def test_entities_of_a_frame(scene_model_dir):
    with perceiver(scene_model_dir) as p:
        entities = p.process(frame(), 0)
        assert p.describe()["backend"] == "onnxruntime" and p.describe()["roles"]["bowl"] == CONTAINER
    by_label = {e.label: e for e in entities}
    cube, bowl, hand = by_label["cube"], by_label["bowl"], by_label["hand"]
    assert (cube.role, bowl.role, hand.role) == (MANIPULATED_OBJECT, CONTAINER, RIGHT_HAND)
    assert sorted(e.id for e in entities) == [1, 2, 3]
    np.testing.assert_allclose(cube.box, [80, 70, 120, 130], atol=1e-4)
    expected = np.zeros((240, 320), bool)
    expected[70:130, 88:112] = True
    np.testing.assert_array_equal(cube.mask, expected)
    assert cube.score == pytest.approx(0.9) and cube.visibility == 1.0
    assert cube.mask_quality == pytest.approx(0.9, abs=1e-3)
    assert cube.track_quality == pytest.approx(1 / 3)  # seen once: not yet an established identity
    assert cube.attributes["track_state"] == "tracked"
    np.testing.assert_allclose(cube.centroid, [99.5, 99.5])
    # no mask evidence for the hand: a box-only detection (an empty mask would make it invisible)
    assert hand.mask is None and hand.visibility == 1.0 and hand.mask_quality < 1.0
    assert cube.point3d is None


def test_ids_persist_and_track_quality_grows(scene_model_dir):
    with perceiver(scene_model_dir) as p:
        for t in range(4):
            entities = p.process(frame(), t)
    assert sorted(e.id for e in entities) == [1, 2, 3]
    assert all(e.track_quality == pytest.approx(1.0) for e in entities)


def test_depth_gives_3d_points_and_a_3d_centroid(scene_model_dir):
    depth = np.zeros((240, 320), np.uint16)
    depth[70:130, 88:112] = 750
    K = [[300.0, 0, 160], [0, 300.0, 120], [0, 0, 1]]
    with perceiver(scene_model_dir) as p:
        cube = next(e for e in p.process(frame(), 0, depth=depth, camera=K) if e.label == "cube")
        with pytest.raises(UserError, match="needs the camera intrinsics"):
            p.process(frame(), 1, depth=depth)
        with pytest.raises(UserError, match="not aligned"):
            p.process(frame(), 2, depth=np.zeros((120, 160), np.uint16), camera=K)
    # mask pixels x 88..111, y 70..129 at 0.75 m: X = (99.5 - 160) * 0.75 / 300, Y = (99.5 - 120) * 0.75 / 300
    np.testing.assert_allclose(cube.point3d, [(99.5 - 160) * 0.0025, (99.5 - 120) * 0.0025, 0.75])
    assert cube.depth == pytest.approx(0.75) and cube.centroid.size == 3


def test_lost_tracks_are_reported_with_zero_visibility_for_a_while(scene_model_dir, yolo):
    with perceiver(scene_model_dir, report_lost_frames=2) as p:
        for t in range(3):
            p.process(frame(), t)
        run = p.backend.run
        bowl_row = [(250, 158, 60, 40, {1: 0.8}, {1: 1.0})]
        only_bowl = {"output0": yolo.output0(bowl_row, 3), "output1": yolo.protos(64, 80, {1: (0, 64, 0, 80)})}
        p.backend.run = lambda batch: only_bowl
        reports = [p.process(frame(), t) for t in range(3, 6)]
        p.backend.run = run
    lost = [e for e in reports[0] if e.attributes["track_state"] == "lost"]
    assert sorted(e.label for e in lost) == ["cube", "hand"]
    assert all(e.visibility == 0.0 and e.score == 0.0 and e.mask is None for e in lost)
    assert sorted(e.label for e in reports[1]) == ["bowl", "cube", "hand"]
    assert [e.label for e in reports[2]] == ["bowl"]  # 3 frames unseen > report_lost_frames


def test_role_map_in_config_wins_and_side_labels_are_hand_roles(make_yoloseg_onnx, tmp_path, yolo):
    rows = [(100, 108, 40, 60, {0: 0.9}, {}), (250, 108, 40, 60, {1: 0.9}, {})]
    make_yoloseg_onnx(yolo.output0(rows, 2), yolo.protos(64, 80, {}), names={0: "left_hand", 1: "mug"})
    with perceiver(tmp_path, role_map={"mug": "tool"}) as p:
        roles = {e.label: e.role for e in p.process(frame(), 0)}
    assert roles == {"left_hand": LEFT_HAND, "mug": "tool"}  # names from the ONNX metadata


def test_an_object_read_as_another_class_keeps_its_track_and_voted_label(make_yoloseg_onnx, tmp_path, yolo):
    """The tracker's class families: cube and cylinder are objects, the hand is not."""
    def rows(object_class):
        return [(100, 108, 40, 60, {object_class: 0.9}, {}), (110, 108, 40, 60, {2: 0.9}, {})]
    make_yoloseg_onnx(yolo.output0(rows(0), 3), yolo.protos(64, 80, {}), names={0: "cube", 1: "cylinder", 2: "hand"})
    with perceiver(tmp_path) as p:
        assert [p._family(label) for label in p.labels] == [2, 2, 0]
        seen = []
        for t, object_class in enumerate([0, 0, 1, 0, 1, 0, 0]):
            outputs = {"output0": yolo.output0(rows(object_class), 3), "output1": yolo.protos(64, 80, {})}
            p.backend.run = lambda batch, outputs=outputs: outputs
            seen.append(sorted((e.id, e.label) for e in p.process(frame(), t)))
    assert seen == [[(1, "cube"), (2, "hand")]] * 7


def test_boxes_only_when_masks_are_off(scene_model_dir):
    with perceiver(scene_model_dir, masks=False) as p:
        assert all(e.mask is None for e in p.process(frame(), 0))


def test_static_input_size_conflicts_are_named(make_yoloseg_onnx, tmp_path, yolo):
    make_yoloseg_onnx(yolo.output0([(320, 320, 40, 40, {0: 0.9}, {})], 1), yolo.protos(160, 160, {}),
                      input_shape=(1, 3, 640, 640))
    (tmp_path / "labels.txt").write_text("cube\n")
    with perceiver(tmp_path, input_size=[320, 320]) as p:
        with pytest.raises(UserError, match="fixed input of \\[640, 640\\]"):
            p.process(frame(), 0)
    with perceiver(tmp_path) as p:
        (cube,) = p.process(np.zeros((480, 640, 3), np.uint8), 0)
    np.testing.assert_allclose(cube.box, [300, 220, 340, 260], atol=1e-4)  # 80 px letterbox padding


def test_user_errors(scene_model_dir, tmp_path):
    (scene_model_dir / "labels.txt").write_text("cube\nbowl\n")
    with perceiver(scene_model_dir) as p:
        with pytest.raises(UserError, match="does not fit 2 classes"):
            p.process(frame(), 0)
        with pytest.raises(UserError, match="uint8"):
            p.process(frame().astype(np.float32), 0)
    (scene_model_dir / "labels.txt").unlink()
    with pytest.raises(UserError, match="no class names"):
        perceiver(scene_model_dir)
    with pytest.raises(UserError, match="does not exist"):
        perceiver(tmp_path / "nowhere")


def test_a_missing_default_model_says_so(monkeypatch, tmp_path):
    absent = tmp_path / "models" / "default"
    monkeypatch.setattr("predrel_ros.perception.perceiver.DEFAULT_MODEL_DIR", absent)
    with pytest.raises(UserError, match="default model is not installed"):
        Perceiver(PerceptionConfig(model=str(absent)))


def test_config_from_yaml_names_bad_fields(tmp_path):
    path = tmp_path / "perception.yaml"
    path.write_text("perception:\n  decoder:\n    score_threshold: 0.4\n  tracker:\n    lost_buffer: 12\n")
    config = PerceptionConfig.load(path, section="perception")
    assert config.decoder.score_threshold == 0.4 and config.tracker.lost_buffer == 12
    path.write_text("decoder:\n  scor_threshold: 0.4\n")
    with pytest.raises(UserError, match="decoder: unknown key"):
        PerceptionConfig.load(path)
    path.write_text("role_map:\n  cup: chair\n")
    with pytest.raises(UserError, match="unknown role 'chair'"):
        PerceptionConfig.load(path)
    path.write_text("input_size: [240, 320]\n")
    with pytest.raises(UserError, match="multiples of 32"):
        PerceptionConfig.load(path)


def test_without_a_model_depth_gives_the_table_and_tracked_objects():
    from tabletop_depth import region, tabletop_depth

    from predrel_ros.core.entities import SURFACE

    depth, K = tabletop_depth({"block": (region(40, 150, 80, 190), 0.05)})
    config = PerceptionConfig.from_dict({"model": "none", "depth_objects": {"enabled": True}})
    with Perceiver(config) as p:
        assert p.describe()["backend"] == "none" and p.labels == ["surface", "container", "object"]
        for t in range(3):
            entities = p.process(frame(), t, depth=depth, camera=K)
        with pytest.raises(UserError, match="depth image"):
            p.process(frame(), 3)
    by_role = {e.role: e for e in entities}
    assert set(by_role) == {SURFACE, MANIPULATED_OBJECT} and sorted(e.id for e in entities) == [1, 2]
    block = by_role[MANIPULATED_OBJECT]
    assert block.label == "object" and block.track_quality == pytest.approx(1.0)
    np.testing.assert_allclose(block.box, [40, 150, 80, 190], atol=1)
    assert block.point3d[2] == pytest.approx(np.nanmedian(depth[150:190, 40:80]), abs=0.01)


def test_without_a_model_the_colour_image_tells_stacked_blocks_apart():
    """The perceiver hands its (BGR) frame to the depth objects: a block covering the top of another
    one of another colour is its own object."""
    from tabletop_depth import standing_block, tabletop_depth

    lower = standing_block(100, 150, 190, 30, 0, 0.0, 0.06)
    upper = standing_block(100, 150, 160, 30, 12, 0.06, 0.06)
    depth, K = tabletop_depth({"lower": lower, "upper": upper})
    image = np.full((240, 320, 3), 90, np.uint8)
    image[lower[0]], image[upper[0]] = (30, 40, 170), (160, 50, 30)  # BGR: red below, blue above
    config = PerceptionConfig.from_dict({"model": "none", "depth_objects": {"enabled": True}})
    with Perceiver(config) as p:
        objects = [e for e in p.process(image, 0, depth=depth, camera=K) if e.label == "object"]
        assert len(objects) == 2
        p.reset()
        assert len([e for e in p.process(frame(), 0, depth=depth, camera=K) if e.label == "object"]) == 1
    tops = sorted(e.box[1] for e in objects)
    assert tops == pytest.approx([upper[0].nonzero()[0].min(), lower[0].nonzero()[0].min()], abs=3)


def test_depth_objects_beside_a_model_leave_its_detections_alone(scene_model_dir):
    from tabletop_depth import region, tabletop_depth

    depth, K = tabletop_depth({"cube": (region(80, 70, 120, 130), 0.05), "other": (region(200, 180, 240, 220), 0.05)})
    with perceiver(scene_model_dir, depth_objects={"enabled": True}) as p:
        entities = p.process(frame(), 0, depth=depth, camera=K)
    labels = sorted(e.label for e in entities)
    assert labels.count("cube") == 1 and labels.count("object") == 1 and "surface" in labels


def test_no_model_needs_depth_objects_or_hands():
    with pytest.raises(ValueError, match="model: none needs"):
        PerceptionConfig.from_dict({"model": "none"})


def test_the_shipped_rgbd_config_runs_hands_and_depth_objects_without_a_model():
    from tabletop_depth import region, tabletop_depth

    from predrel_ros.core.package_files import config_file

    depth, K = tabletop_depth({"block": (region(40, 150, 80, 190), 0.05)})
    with Perceiver(PerceptionConfig.load(config_file("perceiver_rgbd.yaml"), "perception")) as p:
        assert p.hands is not None and p.backend is None
        entities = p.process(frame(), 0, depth=depth, camera=K)
    assert sorted(e.label for e in entities) == ["object", "surface"]  # no hands on a black frame


def test_the_shipped_hands_config_finds_hands_with_landmarks_only(scene_model_dir):
    from predrel_ros.core.package_files import config_file

    config = PerceptionConfig.load(config_file("perceiver_hands.yaml"), "perception")
    assert config.hand_landmarks.enabled and config.hand_landmarks.track and not config.hand_landmarks.model_hands
    config = PerceptionConfig.from_dict({**config.to_dict(), "model": str(scene_model_dir)})
    with Perceiver(config) as p:
        assert p.hands is not None and p.labels[-2:] == ["left_hand", "right_hand"]
        labels = {p.labels[i] for i in p.image_detections(frame(), bgr=True).class_ids}
    assert "hand" not in labels and {"cube", "bowl"} <= labels     # the model's hand class is left out
