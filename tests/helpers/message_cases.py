"""Hypothesis strategies and checks shared by the message conversion tests (tests/ros/messages)."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from predrel_ros.core.entities import Entity
from predrel_ros.predicates import vocabulary
from predrel_ros.predicates.estimate import EVIDENCE_FACTORS, PredicateEstimate
from predrel_ros.ros.messages.images import IMAGE_ENCODINGS


def received(msg):
    """The rclpy message as a subscriber gets it (rclpy deserialisation: data is an array.array)."""
    from rclpy.serialization import deserialize_message, serialize_message

    return deserialize_message(serialize_message(msg), type(msg))


@st.composite
def images(draw):
    """(pixels, encoding, big_endian, row padding bytes) for any supported encoding."""
    encoding = draw(st.sampled_from(sorted(IMAGE_ENCODINGS)))
    enc = IMAGE_ENCODINGS[encoding]
    height, width = draw(st.integers(1, 24)), draw(st.integers(1, 24))
    shape = (height, width) if enc.channels == 1 else (height, width, enc.channels)
    elements = st.floats(-1e6, 1e6, width=32, allow_nan=False) if enc.dtype.kind == "f" else None
    pixels = draw(arrays(enc.dtype, shape, elements=elements))
    big_endian = draw(st.booleans()) if enc.dtype.itemsize > 1 else False
    return pixels, encoding, big_endian, draw(st.integers(0, 9))


f32 = st.floats(0, 100, width=32)
unit32 = st.floats(0, 1, width=32)


@st.composite
def entities(draw, height=30, width=40):
    x1, y1 = draw(f32), draw(f32)
    mask = draw(st.none() | arrays(bool, (height, width)))
    if mask is not None and not mask.any():
        mask = None
    depth_kind = draw(st.sampled_from(["none", "centroid", "point3d", "both"]))
    centroid = [draw(f32), draw(f32)]
    point3d = None
    if depth_kind in ("centroid", "both"):
        centroid.append(draw(st.floats(0.125, 10, width=32)))
    if depth_kind in ("point3d", "both"):
        point3d = [draw(st.floats(-5, 5, width=32)) for _ in range(3)]
    label = draw(st.text(st.characters(exclude_characters="\x00", exclude_categories=["Cs"]), min_size=1, max_size=8))
    return Entity(id=draw(st.integers(0, 2**31 - 1)), label=label,
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


@st.composite
def estimates(draw):
    name = draw(st.sampled_from(sorted(vocabulary.PREDICATES)))
    value = draw(st.sampled_from(vocabulary.values_of(name) + (vocabulary.UNK_LABEL,)))
    return PredicateEstimate(name=name, subject=draw(st.integers(0, 1000)), object=draw(st.integers(-1, 1000)),
                             value=value, confidence=draw(unit32),
                             evidence={factor: draw(unit32) for factor in EVIDENCE_FACTORS})


def flickering_contact_report():
    """The report of a clean-twin monitor (window 4) after 12 frames: contact(1, 2) true in the
    reference, contact(2, 1) flickering to N every third frame under blur of severity t % 3."""
    from predrel_ros.reliability.monitor import MonitorConfig, ReliabilityMonitor

    monitor = ReliabilityMonitor(MonitorConfig(reference_mode="clean_twin", window=4, associate=False))
    for t in range(12):
        monitor.add_reference(t, [PredicateEstimate("contact", 1, 2, "T", 1.0)])
        monitor.add_evaluated(t, [PredicateEstimate("contact", 2, 1, "T" if t % 3 else "N", 0.5)], "blur", t % 3)
    return monitor.report()
