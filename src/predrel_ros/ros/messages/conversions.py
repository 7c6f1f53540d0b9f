"""Conversions between ROS messages and the package's plain-Python records.

Images: `image_to_numpy` returns a read-only numpy view of `sensor_msgs/Image.data` (no copy) that
honours `step` (padded rows) and `is_bigendian`; `numpy_to_image` fills a message with one copy of
the pixels. No cv_bridge is needed (the ROS 2 one is not installable from PyPI and the PyPI
`cv-bridge` is the ROS 1 one). Supported encodings: `IMAGE_ENCODINGS`.

Records: `Entity` <-> `predrel_ros/Entity` (masks as run-length encoding over their bounding crop,
`predrel_ros.core.masks`), `PredicateEstimate` <-> `predrel_ros/Predicate`, their arrays, degradations
<-> `predrel_ros/DegradationState`, `predrel_ros/FrameInfo`, `predrel_ros/ActionEstimate`,
`reliability.monitor.ReliabilityReport` <-> `predrel_ros/ReliabilityReport`,
`sensor_msgs/CameraInfo` <-> intrinsics, and header stamps <-> nanoseconds.

Bad input raises `ValueError` naming the message field at fault.
"""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

import numpy as np
from sensor_msgs.msg import CameraInfo, Image
from std_msgs.msg import Header

from predrel_ros.core import masks
from predrel_ros.core.entities import Entity
from predrel_ros.degradations.table import KINDS, MAX_SEVERITY, NONE
from predrel_ros.core.frame import CameraIntrinsics
from predrel_ros.msg import ActionEstimate, DegradationState, EntityArray, FrameInfo, Predicate, PredicateArray
from predrel_ros.msg import PredicateReliability
from predrel_ros.msg import ReliabilityReport as ReliabilityReportMsg
from predrel_ros.msg import Entity as EntityMsg
from predrel_ros.predicates import vocabulary
from predrel_ros.predicates.estimate import EVIDENCE_FACTORS, PredicateEstimate
from predrel_ros.reliability import monitor

# --------------------------------------------------------------------------------------- images


@dataclass(frozen=True)
class ImageEncoding:
    """Pixel layout of one sensor_msgs/Image encoding."""

    name: str
    dtype: np.dtype  # element type, native byte order
    channels: int

    @property
    def bytes_per_pixel(self) -> int:
        return self.dtype.itemsize * self.channels


IMAGE_ENCODINGS: dict[str, ImageEncoding] = {
    enc.name: enc for enc in (
        ImageEncoding("rgb8", np.dtype(np.uint8), 3),
        ImageEncoding("bgr8", np.dtype(np.uint8), 3),
        ImageEncoding("rgba8", np.dtype(np.uint8), 4),
        ImageEncoding("bgra8", np.dtype(np.uint8), 4),
        ImageEncoding("mono8", np.dtype(np.uint8), 1),
        ImageEncoding("mono16", np.dtype(np.uint16), 1),
        ImageEncoding("16UC1", np.dtype(np.uint16), 1),  # depth in millimetres (REP 118)
        ImageEncoding("32FC1", np.dtype(np.float32), 1),  # depth in metres (REP 118)
    )
}

#: metres per unit of the 16-bit depth encodings (REP 118: millimetres)
DEPTH_16U_SCALE = 0.001


def image_encoding(name: str) -> ImageEncoding:
    try:
        return IMAGE_ENCODINGS[name]
    except KeyError:
        raise ValueError(f"Image.encoding {name!r} is not supported; expected one of "
                         f"{tuple(IMAGE_ENCODINGS)}") from None


def image_to_numpy(msg: Image) -> np.ndarray:
    """Pixels of `msg` as a read-only H x W (one channel) or H x W x C array.

    A view of `msg.data` (no copy), also for padded rows (`step` > width * bytes per pixel: the view
    is then not C-contiguous). Only 16-bit or float data in the other byte order than this machine's
    is copied (byte-swapped). Call `.copy()` on the result to modify it.
    """
    enc = image_encoding(msg.encoding)
    height, width, step = int(msg.height), int(msg.width), int(msg.step)
    row_bytes = width * enc.bytes_per_pixel
    if step < row_bytes:
        raise ValueError(f"Image.step {step} is smaller than width * bytes per pixel = {width} * "
                         f"{enc.bytes_per_pixel} = {row_bytes} for encoding {enc.name}")
    size = len(msg.data)
    if size != step * height:
        raise ValueError(f"Image.data has {size} bytes, expected step * height = {step} * {height} = "
                         f"{step * height}")
    big_endian = bool(msg.is_bigendian)
    dtype = enc.dtype.newbyteorder(">" if big_endian else "<")
    shape: tuple[int, ...] = (height, width, enc.channels)
    strides: tuple[int, ...] = (step, enc.bytes_per_pixel, enc.dtype.itemsize)
    if enc.channels == 1:
        shape, strides = shape[:2], strides[:2]
    if size == 0:
        return np.zeros(shape, enc.dtype)
    array = np.ndarray(shape, dtype=dtype, buffer=msg.data, strides=strides)
    if enc.dtype.itemsize > 1 and big_endian != (sys.byteorder == "big"):
        array = array.astype(enc.dtype)  # byte swap to this machine's order (a copy)
    array.flags.writeable = False
    return array


def numpy_to_image(array: np.ndarray, encoding: str, header: Header | None = None) -> Image:
    """A sensor_msgs/Image holding `array` (H x W or H x W x C) with the given encoding.

    The rows are packed (step = width * bytes per pixel); `is_bigendian` follows the array's byte
    order, so big-endian input is sent as is. The pixels are copied once.
    """
    enc = image_encoding(encoding)
    array = np.asarray(array)
    if array.dtype.kind != enc.dtype.kind or array.dtype.itemsize != enc.dtype.itemsize:
        raise ValueError(f"array dtype {array.dtype} does not match Image.encoding {enc.name} "
                         f"({enc.dtype.name})")
    if enc.channels == 1 and array.ndim == 3 and array.shape[2] == 1:
        array = array[:, :, 0]
    expected_ndim = 2 if enc.channels == 1 else 3
    if array.ndim != expected_ndim or (enc.channels > 1 and array.shape[2] != enc.channels):
        layout = "H x W" if enc.channels == 1 else f"H x W x {enc.channels}"
        raise ValueError(f"array shape {array.shape} does not match Image.encoding {enc.name} ({layout})")
    height, width = array.shape[:2]
    byteorder = array.dtype.byteorder
    big_endian = byteorder == ">" or (byteorder == "=" and sys.byteorder == "big")
    msg = Image()
    if header is not None:
        msg.header = header
    msg.height, msg.width = int(height), int(width)
    msg.encoding = enc.name
    msg.is_bigendian = int(big_endian)
    msg.step = int(width * enc.bytes_per_pixel)
    # The generated setter turns bytes into array('B') with one memcpy. The common
    # `msg.data = array.array('B', frame.tobytes())` makes the setter copy that array once more: for
    # 640x480 rgb8 0.048-0.78 ms against 0.034-0.042 ms here (medians of `predrel bench conversions`
    # runs; the baseline's cost swings with the allocator's state).
    msg.data = np.ascontiguousarray(array).tobytes()
    return msg


def image_to_rgb8(msg: Image) -> np.ndarray:
    """H x W x 3 uint8 RGB pixels of a colour or mono8 image (a view when already rgb8)."""
    import cv2  # only here: the other conversions need no OpenCV

    pixels = image_to_numpy(msg)
    codes = {"bgr8": cv2.COLOR_BGR2RGB, "rgba8": cv2.COLOR_RGBA2RGB, "bgra8": cv2.COLOR_BGRA2RGB,
             "mono8": cv2.COLOR_GRAY2RGB}
    if msg.encoding == "rgb8":
        return pixels
    if msg.encoding not in codes:
        raise ValueError(f"Image.encoding {msg.encoding!r} is not a colour encoding; expected one of "
                         f"{('rgb8',) + tuple(codes)}")
    return cv2.cvtColor(np.ascontiguousarray(pixels), codes[msg.encoding])


def depth_image_to_metres(msg: Image) -> np.ndarray:
    """H x W float32 depth in metres, NaN where unknown (16-bit 0 or float NaN) (REP 118)."""
    pixels = image_to_numpy(msg)
    if msg.encoding in ("16UC1", "mono16"):
        depth = pixels.astype(np.float32) * np.float32(DEPTH_16U_SCALE)
        depth[pixels == 0] = np.nan
        return depth
    if msg.encoding == "32FC1":
        return pixels
    raise ValueError(f"Image.encoding {msg.encoding!r} is not a depth encoding; expected 16UC1, "
                     f"mono16 or 32FC1")


def intrinsics_to_camera_info(camera: CameraIntrinsics, header: Header | None = None) -> CameraInfo:
    """CameraInfo of pinhole intrinsics (R identity, P = [K | 0]); frame_id from the header if given,
    else the camera's."""
    msg = CameraInfo()
    if header is not None:
        msg.header = header
    if not msg.header.frame_id:
        msg.header.frame_id = camera.frame_id
    msg.width, msg.height = int(camera.width), int(camera.height)
    msg.distortion_model = camera.distortion_model
    msg.d = [float(v) for v in camera.distortion]
    K = camera.K
    msg.k = K.reshape(9).tolist()
    msg.r = np.eye(3).reshape(9).tolist()
    msg.p = np.hstack([K, np.zeros((3, 1))]).reshape(12).tolist()
    return msg


def camera_info_to_intrinsics(msg: CameraInfo) -> np.ndarray:
    """3 x 3 intrinsic matrix K (float64) of the (raw) image described by `msg`."""
    k = np.asarray(msg.k, dtype=np.float64)
    if k.size != 9:
        raise ValueError(f"CameraInfo.k must hold 9 values, got {k.size}")
    k = k.reshape(3, 3)
    if not np.all(np.isfinite(k)):
        raise ValueError(f"CameraInfo.k has non-finite values: {k.tolist()}")
    if k[0, 0] <= 0 or k[1, 1] <= 0:
        raise ValueError(f"CameraInfo.k has no focal length (fx={k[0, 0]}, fy={k[1, 1]}): the camera "
                         f"is uncalibrated")
    return k


def _check_ros_string(value: str, field: str) -> None:
    """ROS strings are UTF-8 without NUL characters."""
    if "\x00" in value:
        raise ValueError(f"{field} {value!r} contains a NUL character, which ROS strings cannot carry")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ValueError(f"{field} {value!r} is not valid UTF-8 text: {error.reason}") from None


# -------------------------------------------------------------------------------------- headers

def stamp_to_ns(header: Header) -> int:
    """header.stamp in nanoseconds."""
    return int(header.stamp.sec) * 1_000_000_000 + int(header.stamp.nanosec)


def header_at(stamp_ns: int, frame_id: str) -> Header:
    header = Header(frame_id=frame_id)
    header.stamp.sec, header.stamp.nanosec = divmod(int(stamp_ns), 1_000_000_000)
    return header


# ---------------------------------------------------------------------------------------- masks


def mask_to_msg(mask: np.ndarray | None, msg: EntityMsg) -> None:
    """Write `mask` (bool H x W, or None for no mask) into the mask fields of an Entity message."""
    if mask is None:
        rle = masks.MaskRLE(0, 0, 0, 0, np.zeros(0, np.uint32))
    else:
        rle = masks.encode(mask)
    if max(rle.x + rle.width, rle.y + rle.height) > np.iinfo(np.uint16).max:
        raise ValueError(f"Entity mask crop x={rle.x} y={rle.y} {rle.width}x{rle.height} exceeds the "
                         f"uint16 range of the mask fields")
    msg.mask_x, msg.mask_y = rle.x, rle.y
    msg.mask_width, msg.mask_height = rle.width, rle.height
    msg.mask_rle = rle.runs.tolist()


def mask_from_msg(msg: EntityMsg, height: int, width: int, decode: bool = True) -> np.ndarray | None:
    """Boolean height x width mask of an Entity message, or None when it carries no mask. With
    decode=False the mask is only checked (runs and crop), not built, and None is returned."""
    if msg.mask_width == 0 or msg.mask_height == 0:
        return None
    try:
        rle = masks.MaskRLE(int(msg.mask_x), int(msg.mask_y), int(msg.mask_width), int(msg.mask_height),
                            np.asarray(msg.mask_rle, dtype=np.uint32))
        if not decode:
            masks.check_fits(rle, height, width)
            return None
        return masks.decode(rle, height, width)
    except ValueError as error:
        raise ValueError(f"Entity {msg.id}: mask_rle: {error}") from None


# ------------------------------------------------------------------------------------- entities


def entity_to_msg(entity: Entity) -> EntityMsg:
    """Entity message of `entity`; its attributes dict is not carried."""
    _check_ros_string(entity.label, f"Entity {entity.id}: label")
    msg = EntityMsg()
    msg.id = int(entity.id)
    msg.label = entity.label
    msg.role = entity.role
    msg.box = entity.box.astype(np.float32)
    mask_to_msg(entity.mask, msg)
    msg.score = entity.score
    msg.visibility = entity.visibility
    msg.track_quality = entity.track_quality
    msg.mask_quality = entity.mask_quality
    msg.centroid = np.asarray(entity.centroid[:2], dtype=np.float32)
    depth = entity.depth
    msg.depth = math.nan if depth is None else float(depth)
    msg.has_point3d = entity.point3d is not None
    if entity.point3d is not None:
        msg.point3d = entity.point3d.astype(np.float32)
    return msg


def entity_from_msg(msg: EntityMsg, image_height: int, image_width: int, frame_index: int = 0,
                    decode_masks: bool = True) -> Entity:
    """Entity of an Entity message; masks are decoded at image_height x image_width (decode_masks=False:
    checked but left out, for a consumer of boxes, classes and visibility only, which keeps no
    image-sized data).

    The depth becomes the third centroid coordinate unless the message carries a 3-D point (whose Z
    is that depth).
    """
    centroid = [float(msg.centroid[0]), float(msg.centroid[1])]
    if math.isfinite(msg.depth) and not msg.has_point3d:
        centroid.append(float(msg.depth))
    return Entity(
        id=int(msg.id), label=msg.label, role=msg.role, box=np.asarray(msg.box, dtype=np.float64),
        mask=mask_from_msg(msg, image_height, image_width, decode_masks), score=float(msg.score),
        visibility=float(msg.visibility), track_quality=float(msg.track_quality),
        mask_quality=float(msg.mask_quality), centroid=np.asarray(centroid),
        point3d=np.asarray(msg.point3d, dtype=np.float64) if msg.has_point3d else None,
        frame_index=int(frame_index))


def entities_to_msg(entities: Iterable[Entity], *, frame_index: int, image_width: int, image_height: int,
                    source: str, header: Header | None = None,
                    degradation: DegradationState | None = None) -> EntityArray:
    """EntityArray of one frame; every mask must have the image's size."""
    msg = EntityArray()
    if header is not None:
        msg.header = header
    msg.frame_index = int(frame_index)
    _check_ros_string(source, "EntityArray.source")
    msg.source = source
    msg.image_width, msg.image_height = int(image_width), int(image_height)
    msg.degradation = degradation if degradation is not None else degradation_to_msg(NONE, 0)
    converted = []
    for i, entity in enumerate(entities):
        if entity.mask is not None and entity.mask.shape != (image_height, image_width):
            raise ValueError(f"entities[{i}] (id {entity.id}): mask shape {entity.mask.shape} differs "
                             f"from the image size {image_height}x{image_width}")
        converted.append(entity_to_msg(entity))
    msg.entities = converted
    return msg


def entities_from_msg(msg: EntityArray, decode_masks: bool = True) -> list[Entity]:
    """Entities of an EntityArray, with frame_index and masks at the array's image size
    (decode_masks=False: masks checked, not built)."""
    height, width = int(msg.image_height), int(msg.image_width)
    entities = []
    for i, entity_msg in enumerate(msg.entities):
        try:
            entities.append(entity_from_msg(entity_msg, height, width, msg.frame_index, decode_masks))
        except ValueError as error:
            raise ValueError(f"EntityArray.entities[{i}]: {error}") from None
    return entities


# ----------------------------------------------------------------------------------- predicates


def predicate_to_msg(estimate: PredicateEstimate) -> Predicate:
    msg = Predicate()
    msg.name = estimate.name
    msg.group = estimate.group
    msg.subject = int(estimate.subject)
    msg.object = int(estimate.object)
    msg.value = estimate.value
    msg.code = estimate.code
    msg.confidence = float(estimate.confidence)
    for factor in EVIDENCE_FACTORS:
        setattr(msg, f"q_{factor}", float(estimate.evidence[factor]))
    return msg


def predicate_from_msg(msg: Predicate, frame_index: int = 0) -> PredicateEstimate:
    estimate = PredicateEstimate(
        name=msg.name, subject=int(msg.subject), object=int(msg.object), value=msg.value,
        confidence=float(msg.confidence),
        evidence={factor: float(getattr(msg, f"q_{factor}")) for factor in EVIDENCE_FACTORS},
        frame_index=int(frame_index), group=msg.group)
    if estimate.code != msg.code:
        raise ValueError(f"Predicate {msg.name}({msg.subject}, {msg.object}): code {msg.code} does not "
                         f"match value {msg.value!r} (code {estimate.code})")
    return estimate


def predicates_to_msg(estimates: Iterable[PredicateEstimate], *, frame_index: int, source: str,
                      header: Header | None = None,
                      degradation: DegradationState | None = None) -> PredicateArray:
    msg = PredicateArray()
    if header is not None:
        msg.header = header
    msg.frame_index = int(frame_index)
    _check_ros_string(source, "PredicateArray.source")
    msg.source = source
    msg.degradation = degradation if degradation is not None else degradation_to_msg(NONE, 0)
    msg.predicates = [predicate_to_msg(estimate) for estimate in estimates]
    return msg


def predicates_from_msg(msg: PredicateArray) -> list[PredicateEstimate]:
    estimates = []
    for i, predicate in enumerate(msg.predicates):
        try:
            estimates.append(predicate_from_msg(predicate, msg.frame_index))
        except ValueError as error:
            raise ValueError(f"PredicateArray.predicates[{i}]: {error}") from None
    return estimates


# ---------------------------------------------------------------------------------- degradation

@dataclass(frozen=True)
class DegradationInfo:
    """The content of a DegradationState message."""

    kind: str
    severity: int
    seed: int
    parameters: dict[str, float]


def degradation_to_msg(kind: str, severity: int, seed: int = 0,
                       parameters: Mapping[str, float] | None = None) -> DegradationState:
    if not kind:
        raise ValueError(f"DegradationState.kind must be a kind name or {NONE!r}, got ''")
    if not 0 <= int(severity) <= MAX_SEVERITY:
        raise ValueError(f"DegradationState.severity must lie in 0..{MAX_SEVERITY}, got {severity}")
    if not 0 <= int(seed) < 2**32:
        raise ValueError(f"DegradationState.seed must fit in uint32, got {seed}")
    parameters = dict(parameters or {})
    msg = DegradationState()
    msg.kind = kind
    msg.severity = int(severity)
    msg.seed = int(seed)
    msg.parameter_names = list(parameters)
    msg.parameter_values = [float(v) for v in parameters.values()]
    return msg


def degradation_from_msg(msg: DegradationState) -> DegradationInfo:
    """Content of `msg`; an unset kind ('') reads as no degradation."""
    names: Sequence[str] = list(msg.parameter_names)
    values = [float(v) for v in msg.parameter_values]
    if len(names) != len(values):
        raise ValueError(f"DegradationState.parameter_names has {len(names)} entries but "
                         f"parameter_values has {len(values)}")
    if msg.severity > MAX_SEVERITY:
        raise ValueError(f"DegradationState.severity must lie in 0..{MAX_SEVERITY}, got {msg.severity}")
    return DegradationInfo(kind=msg.kind or NONE, severity=int(msg.severity), seed=int(msg.seed),
                           parameters=dict(zip(names, values)))


def checked_degradation_from_msg(msg: DegradationState) -> DegradationInfo:
    """Content of `msg` (`degradation_from_msg`) if its kind is one of the project's degradation
    kinds (or none), else ValueError: what a node checks on the frames it receives."""
    info = degradation_from_msg(msg)
    if info.kind not in KINDS + (NONE,):
        raise ValueError(f"DegradationState.kind {info.kind!r} is not one of {(NONE,) + KINDS}")
    if info.kind == NONE and info.severity != 0:
        raise ValueError(f"DegradationState.kind none must have severity 0, got {info.severity}")
    return info


# ------------------------------------------------------------------------------------ frame info

#: FrameInfo.action values (predrel_ros.degradations.FrameAction)
FRAME_ACTIONS = ("deliver", "repeat", "drop")


@dataclass(frozen=True)
class FrameInfoData:
    """The content of a FrameInfo message."""

    stamp_ns: int
    frame_id: str
    frame_index: int
    source: str
    action: str
    source_index: int
    degradation: DegradationInfo
    degradation_msg: DegradationState  # as received, to pass on unchanged (EntityArray.degradation)


def frame_info_to_msg(header: Header, frame_index: int, source: str, action: str, source_index: int,
                      degradation: DegradationState) -> FrameInfo:
    if action not in FRAME_ACTIONS:
        raise ValueError(f"FrameInfo.action must be one of {FRAME_ACTIONS}, got {action!r}")
    msg = FrameInfo(header=header, frame_index=int(frame_index), source=source, action=action,
                    source_index=int(source_index))
    msg.degradation = degradation
    return msg


def frame_info_from_msg(msg: FrameInfo) -> FrameInfoData:
    """The content of `msg`, validated (action, degradation kind and severity), else ValueError."""
    if msg.action not in FRAME_ACTIONS:
        raise ValueError(f"FrameInfo.action must be one of {FRAME_ACTIONS}, got {msg.action!r}")
    degradation = checked_degradation_from_msg(msg.degradation)
    return FrameInfoData(stamp_ns=stamp_to_ns(msg.header), frame_id=msg.header.frame_id,
                         frame_index=int(msg.frame_index), source=msg.source, action=msg.action,
                         source_index=int(msg.source_index), degradation=degradation,
                         degradation_msg=msg.degradation)


# ---------------------------------------------------------------------------------------- action

def action_to_msg(frame_index: int, class_names: Sequence[str], probabilities: Sequence[float],
                  trusted: bool = True, reason: str = "", header: Header | None = None) -> ActionEstimate:
    """ActionEstimate of a probability per class; the primitive is the most probable class."""
    probabilities = np.asarray(probabilities, dtype=np.float64)
    if len(class_names) == 0 or probabilities.shape != (len(class_names),):
        raise ValueError(f"ActionEstimate needs one probability per class name, got {len(class_names)} names "
                         f"and {probabilities.shape} probabilities")
    if not np.all(np.isfinite(probabilities)) or probabilities.min() < 0:
        raise ValueError(f"ActionEstimate probabilities must be finite and >= 0, got {probabilities.tolist()}")
    best = int(np.argmax(probabilities))
    msg = ActionEstimate(frame_index=int(frame_index), primitive=class_names[best],
                         probability=float(probabilities[best]), class_names=list(class_names),
                         probabilities=probabilities.astype(np.float32), trusted=bool(trusted), reason=reason)
    if header is not None:
        msg.header = header
    return msg


# ----------------------------------------------------------------------------------- reliability

#: trust level names (reliability.trust) <-> PredicateReliability / DiagnosticStatus numbers
TRUST_CODES = {"OK": PredicateReliability.OK, "WARN": PredicateReliability.WARN,
               "ERROR": PredicateReliability.ERROR, "STALE": PredicateReliability.STALE}
TRUST_NAMES = {code: name for name, code in TRUST_CODES.items()}

_RECORD_FLOATS = ("prs", "pds", "tpc", "tpc_s", "cws", "dis", "mean_confidence", "rule_violation_rate")


def reliability_record_to_msg(record: monitor.ReliabilityRecord) -> PredicateReliability:
    msg = PredicateReliability(predicate=record.predicate, group=record.group, subject=int(record.subject),
                               object=int(record.object), samples=int(record.samples),
                               trust=TRUST_CODES[record.trust], reason=record.reason)
    for name in _RECORD_FLOATS:
        setattr(msg, name, float(getattr(record, name)))
    return msg


def reliability_record_from_msg(msg: PredicateReliability) -> monitor.ReliabilityRecord:
    if msg.trust not in TRUST_NAMES:
        raise ValueError(f"PredicateReliability.trust must be one of {sorted(TRUST_NAMES)}, got {msg.trust}")
    if msg.group not in vocabulary.GROUPS:
        raise ValueError(f"PredicateReliability.group must be one of {vocabulary.GROUPS}, got {msg.group!r}")
    if msg.predicate != msg.group and vocabulary.group_of(msg.predicate) != msg.group:
        raise ValueError(f"PredicateReliability.predicate {msg.predicate!r} is not a predicate of group {msg.group!r}")
    return monitor.ReliabilityRecord(
        predicate=msg.predicate, group=msg.group, subject=int(msg.subject), object=int(msg.object),
        **{name: float(getattr(msg, name)) for name in _RECORD_FLOATS}, samples=int(msg.samples),
        trust=TRUST_NAMES[msg.trust], reason=msg.reason)


def reliability_report_to_msg(report: monitor.ReliabilityReport, header: Header | None = None,
                              degradation: DegradationState | None = None) -> ReliabilityReportMsg:
    """ReliabilityReport of the monitor's report; header and degradation of its newest frame (the
    degradation defaults to the report's kind and severity)."""
    msg = ReliabilityReportMsg(frame_index=int(report.frame_index or 0), window=int(report.window),
                               reference_mode=report.reference_mode)
    if header is not None:
        msg.header = header
    msg.degradation = degradation if degradation is not None else degradation_to_msg(
        report.degradation_kind, report.degradation_severity)
    msg.predicates = [reliability_record_to_msg(record) for record in report.predicates]
    msg.groups = [reliability_record_to_msg(record) for record in report.groups]
    return msg


def reliability_report_from_msg(msg: ReliabilityReportMsg) -> monitor.ReliabilityReport:
    """The report a ReliabilityReport carries (`trust()` gives the levels per predicate and group)."""
    degradation = degradation_from_msg(msg.degradation)
    records = []
    for field_name in ("predicates", "groups"):
        converted = []
        for i, entry in enumerate(getattr(msg, field_name)):
            try:
                converted.append(reliability_record_from_msg(entry))
            except ValueError as error:
                raise ValueError(f"ReliabilityReport.{field_name}[{i}]: {error}") from None
        records.append(converted)
    return monitor.ReliabilityReport(int(msg.frame_index), int(msg.window), msg.reference_mode, degradation.kind,
                                     degradation.severity, records[0], records[1])
