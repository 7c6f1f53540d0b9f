import cv2
import numpy as np
import pytest

from predrel_ros.perception import letterbox
from predrel_ros.perception.backends.onnxruntime_backend import OnnxRuntimeBackend
from predrel_ros.perception.yolo_seg import DecoderConfig, YoloSegDecoder, split_outputs


def rect(height, width, r0, r1, c0, c1):
    mask = np.zeros((height, width), bool)
    mask[r0:r1, c0:c1] = True
    return mask


# frame 320x240 -> dynamic input 320x256: scale 1, 8 px of padding on top and bottom,
# i.e. 2 prototype rows; frame pixel (x, y) <- prototype cell (x / 4, y / 4 + 2)
ROWS_320 = [
    (100, 108, 40, 60, {1: 0.9}, {0: 1.0}),          # kept: frame box (80, 70, 120, 130)
    (102, 110, 40, 60, {1: 0.8}, {0: 1.0}),          # same class, IoU 0.87 with the first: suppressed
    (105, 108, 40, 60, {2: 0.7}, {1: 1.0}),          # other class, same place: kept (class-aware NMS)
    (200, 100, 30, 30, {0: 0.2}, {}),                # below the score threshold
    (250.5, 58, 40.4, 20, {0: 0.6, 2: 0.3}, {1: 1.0}),  # kept, class 0, fractional box
    (50, 50, 10, 10, {}, {}),                        # no class
]
REGIONS_320 = {0: (2 + 15, 2 + 35, 22, 28), 1: (0, 64, 0, 80)}


def test_decoder_gives_exact_boxes_classes_and_masks_through_onnxruntime(make_yoloseg_onnx, yolo):
    path = make_yoloseg_onnx(yolo.output0(ROWS_320, 3), yolo.protos(64, 80, REGIONS_320))
    frame = np.zeros((240, 320, 3), np.uint8)
    height, width = letterbox.input_size_for(240, 320)
    assert (height, width) == (256, 320)
    geometry = letterbox.plan(240, 320, height, width)
    assert (geometry.pad_x, geometry.pad_y, geometry.scale) == (0, 8, 1.0)
    with OnnxRuntimeBackend(device="cpu") as backend:
        backend.load(path)
        assert backend.input_shape == (None, 3, None, None)
        outputs = backend.run(letterbox.apply(frame, geometry))
    detections = YoloSegDecoder(3, DecoderConfig(score_threshold=0.25, iou_threshold=0.45)).decode(
        outputs, geometry)

    np.testing.assert_allclose(detections.boxes, [[80, 70, 120, 130], [85, 70, 125, 130],
                                                  [230.3, 40, 270.7, 60]], atol=1e-4)
    np.testing.assert_allclose(detections.scores, [0.9, 0.7, 0.6], atol=1e-6)
    assert detections.class_ids.tolist() == [1, 2, 0]
    # mask 0: prototype region rows 15..35, cols 22..28 of the frame grid -> frame rows 60..140,
    # cols 88..112, kept inside the box rows 70..130, cols 80..120
    np.testing.assert_array_equal(detections.masks[0], rect(240, 320, 70, 130, 88, 112))
    # masks 1 and 2: a prototype that covers everything, so the mask is the box's pixels
    # (pixel c belongs to box [x1, x2) when x1 <= c < x2)
    np.testing.assert_array_equal(detections.masks[1], rect(240, 320, 70, 130, 85, 125))
    np.testing.assert_array_equal(detections.masks[2], rect(240, 320, 40, 60, 231, 271))
    # bilinear upsampling softens the 4-pixel band at the prototype boundary
    assert detections.mask_quality[0] == pytest.approx(0.9, abs=1e-3)
    np.testing.assert_allclose(detections.mask_quality[1:], 1.0, atol=1e-6)


def test_letterboxed_static_input_maps_boxes_and_masks_back_to_the_frame(make_yoloseg_onnx, yolo):
    # frame 640x480 into a static 640x640 input: scale 1, 80 px padding top and bottom = 20 proto rows
    rows = [(320, 80 + 240, 100, 200, {0: 0.95}, {0: 1.0})]  # frame box (270, 140, 370, 340)
    grid = yolo.protos(160, 160, {0: (20 + 50, 20 + 60, 70, 90)})  # frame rows 200..240, cols 280..360
    path = make_yoloseg_onnx(yolo.output0(rows, 1), grid, input_shape=(1, 3, 640, 640))
    geometry = letterbox.plan(480, 640, 640, 640)
    assert (geometry.pad_x, geometry.pad_y) == (0, 80)
    with OnnxRuntimeBackend(device="cpu") as backend:
        backend.load(path)
        assert backend.input_shape == (1, 3, 640, 640)
        outputs = backend.run(letterbox.apply(np.zeros((480, 640, 3), np.uint8), geometry))
    detections = YoloSegDecoder(1).decode(outputs, geometry)
    np.testing.assert_allclose(detections.boxes, [[270, 140, 370, 340]], atol=1e-4)
    # bilinear upsampling rounds the rectangle's corners: a corner pixel sits 0.625 of a cell
    # inside in both directions, so p = 0.625**2 < 0.5
    expected = rect(480, 640, 200, 240, 280, 360)
    expected[[200, 200, 239, 239], [280, 359, 280, 359]] = False
    np.testing.assert_array_equal(detections.masks[0], expected)


def test_downscaled_letterbox_scales_boxes_back(yolo):
    # frame 1280x720 into 640x640: scale 0.5, content 640x360, 140 px padding on top
    geometry = letterbox.plan(720, 1280, 640, 640)
    assert (geometry.scale, geometry.pad_x, geometry.pad_y) == (0.5, 0, 140)
    rows = [(100, 140 + 50, 40, 20, {0: 0.9}, {})]
    detections = YoloSegDecoder(1).decode({"output0": yolo.output0(rows, 1)[:, :5]}, geometry)
    np.testing.assert_allclose(detections.boxes, [[160, 80, 240, 120]])
    assert detections.masks is None


def test_masks_match_a_full_frame_bilinear_resize(yolo):
    """The per-box resampling equals cv2.resize of the whole probability map (no shortcut error)."""
    rng = np.random.default_rng(3)
    grid = rng.normal(size=(1, yolo.num_coefficients, 64, 80)).astype(np.float32)
    rows = [(160, 128, 300, 230, {0: 0.9}, {k: rng.normal() for k in range(yolo.num_coefficients)})]
    geometry = letterbox.plan(240, 320, 256, 320)
    decoder = YoloSegDecoder(1, DecoderConfig(mask_threshold=0.5))
    detections = decoder.decode({"output0": yolo.output0(rows, 1), "output1": grid}, geometry)
    coefficients = yolo.output0(rows, 1)[0, 5:, 0]
    probability = 1 / (1 + np.exp(-np.tensordot(coefficients, grid[0], axes=1)))
    full = cv2.resize(probability[2:62].astype(np.float64), (320, 240), interpolation=cv2.INTER_LINEAR)
    x1, y1, x2, y2 = detections.boxes[0]
    expected = np.zeros((240, 320), bool)
    r0, r1, c0, c1 = int(np.ceil(y1)), int(np.ceil(y2)), int(np.ceil(x1)), int(np.ceil(x2))
    expected[r0:r1, c0:c1] = full[r0:r1, c0:c1] > 0.5
    near_threshold = np.abs(full - 0.5) < 1e-6
    assert np.array_equal(detections.masks[0] | near_threshold, expected | near_threshold)


def test_soft_prototypes_lower_mask_quality(yolo):
    geometry = letterbox.plan(240, 320, 256, 320)
    rows = [(100, 108, 40, 60, {0: 0.9}, {0: 1.0})]
    decoder = YoloSegDecoder(1)
    crisp = decoder.decode({"output0": yolo.output0(rows, 1),
                            "output1": yolo.protos(64, 80, {0: (17, 37, 22, 28)}, 20.0)}, geometry)
    soft = decoder.decode({"output0": yolo.output0(rows, 1),
                           "output1": yolo.protos(64, 80, {0: (17, 37, 22, 28)}, 0.5)}, geometry)
    np.testing.assert_array_equal(crisp.masks, soft.masks)
    assert crisp.mask_quality[0] > 0.85
    assert soft.mask_quality[0] < 0.3


@pytest.mark.parametrize("num_classes", [1, 7, 80])
def test_any_class_count(num_classes, yolo):
    rows = [(50, 50, 20, 20, {num_classes - 1: 0.8}, {}), (150, 50, 20, 20, {0: 0.7}, {})]
    geometry = letterbox.plan(240, 320, 256, 320)
    detections = YoloSegDecoder(num_classes).decode(
        {"output0": yolo.output0(rows, num_classes), "output1": yolo.protos(64, 80, {})}, geometry)
    assert detections.class_ids.tolist() == [num_classes - 1, 0]


def test_max_detections_keeps_the_best(yolo):
    rows = [(20 + 30 * i, 50, 20, 20, {0: 0.3 + 0.05 * i}, {}) for i in range(8)]
    geometry = letterbox.plan(240, 320, 256, 320)
    detections = YoloSegDecoder(1, DecoderConfig(max_detections=3)).decode(
        {"output0": yolo.output0(rows, 1), "output1": yolo.protos(64, 80, {})}, geometry)
    np.testing.assert_allclose(detections.scores, [0.65, 0.6, 0.55])


def test_class_count_mismatch_names_the_fix(yolo):
    geometry = letterbox.plan(240, 320, 256, 320)
    with pytest.raises(ValueError, match="labels file lists the model's classes"):
        YoloSegDecoder(4).decode({"output0": yolo.output0(ROWS_320, 3), "output1": yolo.protos(64, 80, {})}, geometry)


def test_outputs_are_found_by_rank_when_not_named_like_ultralytics(yolo):
    detections, prototypes = yolo.output0(ROWS_320, 3), yolo.protos(64, 80, {})
    found = split_outputs({"protos": prototypes, "preds": detections})
    assert found[0] is detections and found[1] is prototypes
    with pytest.raises(ValueError, match="cannot tell"):
        split_outputs({"a": detections, "b": detections})


def test_decoder_config_is_validated():
    with pytest.raises(ValueError, match="score_threshold"):
        DecoderConfig(score_threshold=1.5)
    with pytest.raises(ValueError, match="max_detections"):
        DecoderConfig(max_detections=0)
