import math
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from ros_testing import require_ros

require_ros()

from rclpy.serialization import deserialize_message, serialize_message  # noqa: E402
from sensor_msgs.msg import CameraInfo, Image  # noqa: E402
from std_msgs.msg import Header  # noqa: E402

from predrel_ros.core.entities import Entity  # noqa: E402
from predrel_ros.msg import DegradationState, EntityArray, PredicateArray  # noqa: E402
from predrel_ros.msg import Entity as EntityMsg  # noqa: E402
from predrel_ros.ros.messages import conversions  # noqa: E402
from predrel_ros.predicates import vocabulary  # noqa: E402
from predrel_ros.predicates.estimate import EVIDENCE_FACTORS, PredicateEstimate  # noqa: E402

pytestmark = pytest.mark.ros

NATIVE_BIG = sys.byteorder == "big"


def received(msg):
    """The message as a subscriber gets it (rclpy deserialisation: data is an array.array)."""
    return deserialize_message(serialize_message(msg), type(msg))


@st.composite
def images(draw):
    """(pixels, encoding, big_endian, row padding bytes) for any supported encoding."""
    encoding = draw(st.sampled_from(sorted(conversions.IMAGE_ENCODINGS)))
    enc = conversions.IMAGE_ENCODINGS[encoding]
    height, width = draw(st.integers(1, 24)), draw(st.integers(1, 24))
    shape = (height, width) if enc.channels == 1 else (height, width, enc.channels)
    elements = st.floats(-1e6, 1e6, width=32, allow_nan=False) if enc.dtype.kind == "f" else None
    pixels = draw(arrays(enc.dtype, shape, elements=elements))
    big_endian = draw(st.booleans()) if enc.dtype.itemsize > 1 else False
    return pixels, encoding, big_endian, draw(st.integers(0, 9))


def image_message(pixels, encoding, big_endian, padding):
    """An Image built byte by byte (independent of numpy_to_image): rows padded with junk bytes."""
    enc = conversions.IMAGE_ENCODINGS[encoding]
    order = ">" if big_endian else "<"
    raw = np.ascontiguousarray(pixels, dtype=enc.dtype.newbyteorder(order)).view(np.uint8)
    raw = raw.reshape(pixels.shape[0], -1)
    junk = np.full((raw.shape[0], padding), 0xA5, np.uint8)
    msg = Image(height=pixels.shape[0], width=pixels.shape[1], encoding=encoding,
                is_bigendian=int(big_endian), step=raw.shape[1] + padding)
    msg.data = np.hstack([raw, junk]).tobytes()
    return msg


@settings(max_examples=300, deadline=None)
@given(images())
def test_decoding_honours_step_and_byte_order(case):
    pixels, encoding, big_endian, padding = case
    decoded = conversions.image_to_numpy(received(image_message(pixels, encoding, big_endian, padding)))
    assert decoded.dtype == conversions.IMAGE_ENCODINGS[encoding].dtype  # native byte order
    np.testing.assert_array_equal(decoded, pixels)


@settings(max_examples=300, deadline=None)
@given(images())
def test_round_trip_through_a_message(case):
    pixels, encoding, big_endian, _ = case
    source = pixels.astype(pixels.dtype.newbyteorder(">" if big_endian else "<"))
    msg = received(conversions.numpy_to_image(source, encoding))
    assert msg.is_bigendian == int(big_endian)
    assert msg.step == pixels.shape[1] * conversions.IMAGE_ENCODINGS[encoding].bytes_per_pixel
    np.testing.assert_array_equal(conversions.image_to_numpy(msg), pixels)


@settings(max_examples=100, deadline=None)
@given(images())
def test_non_contiguous_input_is_packed(case):
    pixels, encoding, _, _ = case
    wide = np.concatenate([pixels, pixels], axis=1)[:, ::2]  # a strided view
    np.testing.assert_array_equal(
        conversions.image_to_numpy(conversions.numpy_to_image(wide, encoding)), wide)


def test_decoding_a_received_image_copies_nothing():
    pixels = np.arange(480 * 640 * 3, dtype=np.uint32).astype(np.uint8).reshape(480, 640, 3)
    for padding in (0, 64):
        msg = received(image_message(pixels, "rgb8", False, padding))
        view = conversions.image_to_numpy(msg)
        assert view.__array_interface__["data"][0] == msg.data.buffer_info()[0]
        assert not view.flags.writeable
        assert view.flags.c_contiguous == (padding == 0)
    depth = np.arange(12, dtype=np.float32).reshape(3, 4)
    msg = received(conversions.numpy_to_image(depth, "32FC1"))
    assert np.shares_memory(conversions.image_to_numpy(msg), np.frombuffer(msg.data, np.uint8))


def test_foreign_byte_order_is_swapped_into_a_copy():
    depth = np.array([[1, 258], [4096, 65535]], np.uint16)
    msg = received(image_message(depth, "16UC1", not NATIVE_BIG, 0))
    decoded = conversions.image_to_numpy(msg)
    assert decoded.dtype == np.dtype(np.uint16) and decoded.dtype.isnative
    np.testing.assert_array_equal(decoded, depth)


def test_one_channel_arrays_may_carry_a_channel_axis():
    gray = np.arange(6, dtype=np.uint8).reshape(2, 3, 1)
    np.testing.assert_array_equal(conversions.image_to_numpy(conversions.numpy_to_image(gray, "mono8")),
                                  gray[:, :, 0])


def test_header_is_kept():
    header = Header(frame_id="camera")
    header.stamp.sec = 12
    msg = conversions.numpy_to_image(np.zeros((2, 2, 3), np.uint8), "rgb8", header=header)
    assert (msg.header.frame_id, msg.header.stamp.sec) == ("camera", 12)


@pytest.mark.parametrize("field, change, message", [
    ("encoding", {"encoding": "yuv422"}, "Image.encoding 'yuv422' is not supported"),
    ("step", {"step": 5}, "Image.step 5 is smaller than width * bytes per pixel = 2 * 3 = 6"),
    ("data", {"data": bytes(11)}, "Image.data has 11 bytes, expected step * height = 6 * 2 = 12"),
    ("height", {"height": 3}, "Image.data has 12 bytes, expected step * height = 6 * 3 = 18"),
    ("width", {"width": 3}, "Image.step 6 is smaller than width * bytes per pixel = 3 * 3 = 9"),
])
def test_malformed_images_are_refused_naming_the_field(field, change, message):
    msg = conversions.numpy_to_image(np.zeros((2, 2, 3), np.uint8), "rgb8")
    for name, value in change.items():
        setattr(msg, name, value)
    with pytest.raises(ValueError, match=message.replace("*", r"\*").replace(".", r"\.")):
        conversions.image_to_numpy(msg)


@pytest.mark.parametrize("array, encoding, message", [
    (np.zeros((2, 2, 3), np.float32), "rgb8", "dtype float32 does not match Image.encoding rgb8"),
    (np.zeros((2, 2), np.uint8), "rgb8", r"shape \(2, 2\) does not match Image.encoding rgb8 \(H x W x 3\)"),
    (np.zeros((2, 2, 3), np.uint16), "16UC1", r"shape \(2, 2, 3\) does not match Image.encoding 16UC1"),
    (np.zeros((2, 2), np.uint8), "8UC3", "Image.encoding '8UC3' is not supported"),
])
def test_unsuitable_arrays_are_refused(array, encoding, message):
    with pytest.raises(ValueError, match=message):
        conversions.numpy_to_image(array, encoding)


@pytest.mark.parametrize("encoding", ["rgb8", "bgr8", "rgba8", "bgra8", "mono8"])
def test_colour_images_become_rgb(encoding):
    rgb = np.array([[[10, 20, 30], [40, 50, 60]]], np.uint8)
    source = {"rgb8": rgb, "bgr8": rgb[..., ::-1],
              "rgba8": np.dstack([rgb, np.full((1, 2), 255, np.uint8)]),
              "bgra8": np.dstack([rgb[..., ::-1], np.zeros((1, 2), np.uint8)]),
              "mono8": rgb[..., 0]}[encoding]
    expected = np.repeat(rgb[..., :1], 3, axis=2) if encoding == "mono8" else rgb
    converted = conversions.image_to_rgb8(received(conversions.numpy_to_image(source, encoding)))
    np.testing.assert_array_equal(converted, expected)
    with pytest.raises(ValueError, match="not a colour encoding"):
        conversions.image_to_rgb8(conversions.numpy_to_image(np.zeros((1, 1), np.uint16), "16UC1"))


def test_depth_images_in_metres():
    mm = np.array([[0, 1500]], np.uint16)
    metres = conversions.depth_image_to_metres(conversions.numpy_to_image(mm, "16UC1"))
    assert math.isnan(metres[0, 0]) and metres[0, 1] == pytest.approx(1.5)
    floats = np.array([[np.nan, 2.25]], np.float32)
    np.testing.assert_array_equal(conversions.depth_image_to_metres(conversions.numpy_to_image(floats, "32FC1")),
                                  floats)
    with pytest.raises(ValueError, match="not a depth encoding"):
        conversions.depth_image_to_metres(conversions.numpy_to_image(np.zeros((1, 1, 3), np.uint8), "rgb8"))


def test_camera_info_intrinsics():
    info = CameraInfo(k=[600.0, 0.0, 320.0, 0.0, 610.0, 240.0, 0.0, 0.0, 1.0])
    np.testing.assert_array_equal(conversions.camera_info_to_intrinsics(info),
                                  [[600, 0, 320], [0, 610, 240], [0, 0, 1]])
    with pytest.raises(ValueError, match="CameraInfo.k has no focal length"):
        conversions.camera_info_to_intrinsics(CameraInfo())


# ----------------------------------------------------------------------------------------- masks

@settings(max_examples=200, deadline=None)
@given(arrays(bool, st.tuples(st.integers(1, 40), st.integers(1, 40))))
def test_mask_round_trip(mask):
    msg = EntityMsg()
    conversions.mask_to_msg(mask, msg)
    decoded = conversions.mask_from_msg(received(msg), *mask.shape)
    if mask.any():
        np.testing.assert_array_equal(decoded, mask)
    else:
        assert decoded is None  # an all-false mask is sent as "no mask" (Entity.msg)


def test_mask_that_does_not_fit_the_image_is_refused():
    msg = EntityMsg(id=3)
    conversions.mask_to_msg(np.ones((4, 4), bool), msg)
    with pytest.raises(ValueError, match="Entity 3: mask_rle: mask crop .* does not fit in the 3x4 image"):
        conversions.mask_from_msg(msg, 4, 3)
    msg.mask_rle = [1, 2]
    with pytest.raises(ValueError, match="Entity 3: mask_rle: mask_rle runs sum to 3, expected"):
        conversions.mask_from_msg(msg, 4, 4)


# -------------------------------------------------------------------------------------- entities

f32 = st.floats(0, 100, width=32)
unit32 = st.floats(0, 1, width=32)


@st.composite
def entities(draw, height=30, width=40):
    x1, y1 = draw(f32), draw(f32)
    mask = draw(st.none() | arrays(bool, (height, width)))
    if mask is not None and not mask.any():
        mask = None
    depth_kind = draw(st.sampled_from(["none", "centroid", "point3d"]))
    centroid = [draw(f32), draw(f32)]
    point3d = None
    if depth_kind == "centroid":
        centroid.append(draw(st.floats(0.125, 10, width=32)))
    elif depth_kind == "point3d":
        point3d = [draw(st.floats(-5, 5, width=32)) for _ in range(3)]
    return Entity(id=draw(st.integers(0, 2**31 - 1)), label=draw(st.text(st.characters(exclude_characters="\x00", exclude_categories=["Cs"]), max_size=8)),
                  role=draw(st.sampled_from(["left_hand", "manipulated_object", "container", "surface"])),
                  box=np.float32([x1, y1, x1 + draw(f32), y1 + draw(f32)]), mask=mask, score=draw(unit32),
                  visibility=draw(unit32), track_quality=draw(unit32), mask_quality=draw(unit32),
                  centroid=centroid, point3d=point3d)


def assert_same_entity(a: Entity, b: Entity) -> None:
    assert (a.id, a.label, a.role) == (b.id, b.label, b.role)
    for name in ("box", "centroid", "score", "visibility", "track_quality", "mask_quality"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert (a.point3d is None) == (b.point3d is None)
    if a.point3d is not None:
        np.testing.assert_array_equal(a.point3d, b.point3d)
    assert (a.mask is None) == (b.mask is None)
    if a.mask is not None:
        np.testing.assert_array_equal(a.mask, b.mask)
    assert a.depth == b.depth


@settings(max_examples=150, deadline=None)
@given(st.lists(entities(), max_size=4), st.integers(0, 2**40))
def test_entity_array_round_trip(items, frame_index):
    msg = received(conversions.entities_to_msg(items, frame_index=frame_index, image_width=40, image_height=30,
                                               source="perception"))
    assert (msg.frame_index, msg.source, msg.image_width, msg.image_height) == (frame_index, "perception", 40, 30)
    assert conversions.degradation_from_msg(msg.degradation).kind == "none"
    back = conversions.entities_from_msg(msg)
    assert len(back) == len(items)
    for original, decoded in zip(items, back):
        assert_same_entity(original, decoded)
        assert decoded.frame_index == frame_index


def test_entity_without_depth_sends_nan():
    msg = conversions.entity_to_msg(Entity(1, "cube", "manipulated_object", (0, 0, 2, 2)))
    assert math.isnan(msg.depth) and not msg.has_point3d and msg.mask_width == 0


def test_entity_label_with_a_nul_is_refused():
    with pytest.raises(ValueError, match="Entity 1: label 'a\\\\x00b' contains a NUL character"):
        conversions.entity_to_msg(Entity(1, "a\x00b", "manipulated_object", (0, 0, 2, 2)))


def test_entity_label_that_is_not_utf8_text_is_refused():
    with pytest.raises(ValueError, match="Entity 1: label '\\\\ud800' is not valid UTF-8 text"):
        conversions.entity_to_msg(Entity(1, "\ud800", "manipulated_object", (0, 0, 2, 2)))
    with pytest.raises(ValueError, match="PredicateArray.source 'a\\\\x00' contains a NUL character"):
        conversions.predicates_to_msg([], frame_index=0, source="a\x00")


def test_entity_mask_of_another_size_is_refused():
    entity = Entity(5, "cube", "manipulated_object", (0, 0, 2, 2), mask=np.ones((10, 10), bool))
    with pytest.raises(ValueError, match=r"entities\[0\] \(id 5\): mask shape \(10, 10\) differs from the "
                                         r"image size 30x40"):
        conversions.entities_to_msg([entity], frame_index=0, image_width=40, image_height=30, source="x")


def test_entity_message_with_an_unknown_role_is_refused():
    msg = EntityArray(image_width=4, image_height=4, entities=[EntityMsg(id=2, role="robot")])
    with pytest.raises(ValueError, match=r"EntityArray.entities\[0\]: Entity 2: unknown role 'robot'"):
        conversions.entities_from_msg(msg)


# ------------------------------------------------------------------------------------ predicates

@st.composite
def estimates(draw):
    name = draw(st.sampled_from(sorted(vocabulary.PREDICATES)))
    value = draw(st.sampled_from(vocabulary.values_of(name) + (vocabulary.UNK_LABEL,)))
    return PredicateEstimate(name=name, subject=draw(st.integers(0, 1000)), object=draw(st.integers(-1, 1000)),
                             value=value, confidence=draw(unit32),
                             evidence={factor: draw(unit32) for factor in EVIDENCE_FACTORS})


@settings(max_examples=150, deadline=None)
@given(st.lists(estimates(), max_size=12), st.integers(0, 2**40))
def test_predicate_array_round_trip(items, frame_index):
    degradation = conversions.degradation_to_msg("blur", 3, seed=7, parameters={"sigma": 2.5})
    msg = received(conversions.predicates_to_msg(items, frame_index=frame_index, source="perception",
                                                 degradation=degradation))
    for item in items:
        item.frame_index = frame_index
    assert conversions.predicates_from_msg(msg) == items
    assert [p.code for p in msg.predicates] == [item.code for item in items]
    assert conversions.degradation_from_msg(msg.degradation) == conversions.DegradationInfo(
        "blur", 3, 7, {"sigma": 2.5})


def test_predicate_whose_code_contradicts_its_value_is_refused():
    msg = conversions.predicates_to_msg([PredicateEstimate("contact", 1, 2, "T")], frame_index=0, source="x")
    msg.predicates[0].code = 0
    with pytest.raises(ValueError, match=r"predicates\[0\]: Predicate contact\(1, 2\): code 0 does not match "
                                         r"value 'T' \(code 1\)"):
        conversions.predicates_from_msg(msg)


def test_predicate_with_an_unknown_value_is_refused():
    msg = conversions.predicates_to_msg([PredicateEstimate("static", 1, 2, "In")], frame_index=0, source="x")
    msg.predicates[0].value = "Inside"
    with pytest.raises(ValueError, match="predicate 'static' has no value 'Inside'"):
        conversions.predicates_from_msg(msg)


# ----------------------------------------------------------------------------------- degradation

def test_unset_degradation_reads_as_none():
    assert conversions.degradation_from_msg(DegradationState()) == conversions.DegradationInfo("none", 0, 0, {})


@pytest.mark.parametrize("kwargs, message", [
    ({"kind": "", "severity": 0}, "DegradationState.kind must be a kind name"),
    ({"kind": "blur", "severity": 6}, "DegradationState.severity must lie in 0..5, got 6"),
    ({"kind": "blur", "severity": 1, "seed": -1}, "DegradationState.seed must fit in uint32"),
])
def test_invalid_degradations_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        conversions.degradation_to_msg(**kwargs)


def test_degradation_with_unpaired_parameters_is_refused():
    msg = DegradationState(kind="blur", severity=2, parameter_names=["sigma", "radius"], parameter_values=[1.0])
    with pytest.raises(ValueError, match="parameter_names has 2 entries but parameter_values has 1"):
        conversions.degradation_from_msg(msg)


def test_messages_import_as_documented():
    from predrel_ros.msg import (ActionEstimate, DegradationState, Entity, EntityArray,  # noqa: F401
                                 Predicate, PredicateArray, PredicateReliability, ReliabilityReport)
    assert PredicateArray().degradation.kind == ""


def test_reliability_report_round_trips_with_nan_metrics_and_trust_levels():
    from predrel_ros.msg import PredicateReliability
    from predrel_ros.reliability.monitor import MonitorConfig, ReliabilityMonitor

    monitor = ReliabilityMonitor(MonitorConfig(reference_mode="clean_twin", window=4, associate=False))
    for t in range(12):
        monitor.add_reference(t, [PredicateEstimate("contact", 1, 2, "T", 1.0)])
        monitor.add_evaluated(t, [PredicateEstimate("contact", 2, 1, "T" if t % 3 else "N", 0.5)], "blur", t % 3)
    report = monitor.report()
    msg = conversions.reliability_report_to_msg(report)
    assert (msg.degradation.kind, msg.degradation.severity, msg.frame_index) == ("blur", 2, 11)
    back = conversions.reliability_report_from_msg(msg)

    def carried(record):          # to_dict: NaN as None; the agreement rate is not in the message
        return {key: value for key, value in record.to_dict().items() if key != "agreement"}
    assert [carried(r) for r in back.predicates + back.groups] == \
        [carried(r) for r in report.predicates + report.groups]
    assert report.record("contact").agreement == 0.75                      # frames 8..11: T N T T against T
    assert math.isnan(back.record("contact").agreement)
    assert back.trust()["contact"].level == report.trust()["contact"].level == "STALE"
    assert math.isnan(back.record("contact").dis)
    msg.groups[0].trust = 7
    with pytest.raises(ValueError, match=r"ReliabilityReport.groups\[0\]: PredicateReliability.trust"):
        conversions.reliability_report_from_msg(msg)
    assert conversions.TRUST_CODES["STALE"] == PredicateReliability.STALE == 3
