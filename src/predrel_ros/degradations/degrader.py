"""`Degrader`: one degradation condition (kind, severity, seed) applied frame by frame.

A replay or live node calls all three entry points on every frame, whatever the kind; each is the
identity for kinds it does not concern:
- `decide_frame(frame_index)`: deliver, drop or repeat (frame_drop; otherwise always deliver);
- `apply_image(image, frame_index, targets)`: the degraded pixels (blur, occlusion, illumination,
  low_resolution; otherwise an unchanged copy);
- `apply_entities(entities, frame_index, image_shape)`: the noisy perception output
  (detection_noise; otherwise the same entities).
Results depend only on (kind, severity, seed, frame_index) and the inputs, never on call order.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from predrel_ros.core.entities import Entity
from predrel_ros.degradations import blur, detection_noise, flat_occlusion, frame_drop, illumination, occlusion
from predrel_ros.degradations.low_resolution import low_resolution
from predrel_ros.degradations.occlusion_regions import occluded_regions, target_masks
from predrel_ros.degradations.options import DegradationOptions
from predrel_ros.degradations.table import (
    BLUR,
    DEFAULT_TABLE,
    DETECTION_NOISE,
    FRAME_DROP,
    ILLUMINATION,
    LOW_RESOLUTION,
    NONE,
    OCCLUSION,
    OCCLUSION_FLAT,
    OCCLUSION_KINDS,
    ParameterTable,
    check_kind,
    check_severity,
)

UINT32_MAX = 2**32 - 1
#: what a kind acts on
IMAGE, STREAM, ENTITIES = "image", "stream", "entities"


@dataclass(frozen=True)
class KindInfo:
    name: str
    level: str  # IMAGE, STREAM or ENTITIES (NONE for the clean condition)
    summary: str


REGISTRY: dict[str, KindInfo] = {info.name: info for info in (
    KindInfo(NONE, NONE, "clean reference (identity)"),
    KindInfo(BLUR, IMAGE, "Gaussian defocus + linear motion blur along a per-frame direction"),
    KindInfo(OCCLUSION, IMAGE, "textured, shaped occluders (arms, blobs, ellipses) over a growing share of "
                               "target boxes (never over a smaller target) or random zones"),
    KindInfo(OCCLUSION_FLAT, IMAGE, "for comparison: solid rectangles in muted colours over the same shares"),
    KindInfo(ILLUMINATION, IMAGE, "low light, overexposure or contrast reduction (per seed)"),
    KindInfo(LOW_RESOLUTION, IMAGE, "downsample and resize back to the original resolution"),
    KindInfo(FRAME_DROP, STREAM, "drop or repeat frames, frame indices preserved"),
    KindInfo(DETECTION_NOISE, ENTITIES, "box jitter, missed and false detections, track interruptions"),
)}


def check_image(image: np.ndarray) -> np.ndarray:
    """Accept a uint8 H x W x 3 (or H x W grey) image, else ValueError naming the problem."""
    if not isinstance(image, np.ndarray):
        raise ValueError(f"image must be a numpy array, got {type(image).__name__}")
    if image.dtype != np.uint8:
        raise ValueError(f"image must have dtype uint8, got {image.dtype}")
    if not (image.ndim == 2 or (image.ndim == 3 and image.shape[2] == 3)):
        raise ValueError(f"image must be H x W x 3 (or H x W grey), got shape {image.shape}")
    if image.shape[0] < 1 or image.shape[1] < 1:
        raise ValueError(f"image must not be empty, got shape {image.shape}")
    return np.ascontiguousarray(image)


def _check_frame_index(frame_index: int) -> int:
    if isinstance(frame_index, (bool, np.bool_)) or not isinstance(frame_index, (int, np.integer)):
        raise ValueError(f"frame_index must be an integer, got {frame_index!r}")
    return int(frame_index)


class Degrader:
    """Applies `kind` at `severity` with random parts drawn from `seed` (0..2**32-1)."""

    def __init__(self, kind: str, severity: int = 0, seed: int = 0, table: ParameterTable = DEFAULT_TABLE,
                 options: DegradationOptions | None = None) -> None:
        self.kind = check_kind(kind)
        self.severity = check_severity(severity)
        if kind == NONE and self.severity != 0:
            raise ValueError(f"severity must be 0 for kind 'none'; got {self.severity}")
        if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) \
                or not 0 <= seed <= UINT32_MAX:
            raise ValueError(f"seed must be an integer in 0..{UINT32_MAX}; got {seed!r}")
        self.seed = int(seed)
        self.table = table
        self.options = options if options is not None else DegradationOptions()
        self._row = table.row(kind, self.severity)
        if kind == DETECTION_NOISE and self._row["false_per_frame"] > self.options.max_false_detections:
            raise ValueError(f"table detection_noise.false_per_frame {self._row['false_per_frame']} exceeds "
                             f"options.max_false_detections {self.options.max_false_detections}")

    @property
    def level(self) -> str:
        return REGISTRY[self.kind].level

    @property
    def is_identity(self) -> bool:
        return self.severity == 0

    def __repr__(self) -> str:
        return f"Degrader(kind={self.kind!r}, severity={self.severity}, seed={self.seed})"

    # -- description (DegradationState) ---------------------------------------------------------

    def parameters(self) -> dict[str, float]:
        """The concrete parameters of this condition, from the table: DegradationState's
        parameter_names/values (`predrel_ros.ros.messages.degradations.degradation_to_msg(kind,
        severity, seed, parameters())`).

        Blur adds `reference_size_px` (its pixel sizes are given at that shorter image side);
        illumination reports the column of the variant it applies.
        """
        if self.kind == BLUR:
            return {**self._row, "reference_size_px": float(self.options.reference_size)}
        if self.kind == ILLUMINATION:
            column = illumination.VARIANT_COLUMNS[illumination.variant(self.seed, self.options)]
            return {column: self._row[column]}
        return dict(self._row)

    # -- the three per-frame entry points -------------------------------------------------------

    def decide_frame(self, frame_index: int, stream_start: int = 0) -> frame_drop.FrameDecision:
        """Deliver, drop or repeat frame `frame_index` (always deliver unless the kind is frame_drop)."""
        frame_index = _check_frame_index(frame_index)
        if self.kind != FRAME_DROP or self.is_identity:
            return frame_drop.FrameDecision(frame_index, frame_drop.FrameAction.DELIVER, frame_index)
        return frame_drop.decide(self.seed, frame_index, self._row["affected_rate"], self._row["repeat_share"],
                                 stream_start)

    def apply_image(self, image: np.ndarray, frame_index: int,
                    targets: Sequence[Entity] | np.ndarray | None = None) -> np.ndarray:
        """The degraded frame: same shape and dtype, a new array (the input is never modified).

        targets: Entities or an N x 4 array of boxes to occlude (occlusion only); without them the
        occluders cover random zones of the frame.
        """
        image = check_image(image)
        frame_index = _check_frame_index(frame_index)
        operation = _IMAGE_OPERATIONS.get(self.kind)
        if operation is None or self.is_identity:
            return image.copy()
        return operation(self, image, frame_index, targets)

    def apply_entities(self, entities: Sequence[Entity], frame_index: int,
                       image_shape: tuple[int, ...]) -> list[Entity]:
        """The perception output after detection noise (a new list; input entities are not modified)."""
        frame_index = _check_frame_index(frame_index)
        if self.kind != DETECTION_NOISE or self.is_identity:
            return list(entities)
        if len(image_shape) < 2 or min(image_shape[:2]) < 1:
            raise ValueError(f"image_shape must be (height, width[, channels]), got {image_shape!r}")
        return detection_noise.perturb_entities(entities, frame_index, tuple(image_shape), self._row,
                                                self.seed, self.options)

    # -- occlusion geometry, for evaluation (which pixels of which entity were hidden) -----------

    def occluder_mask(self, image_shape: tuple[int, ...],
                      targets: Sequence[Entity] | np.ndarray | None = None) -> np.ndarray:
        """Boolean H x W mask of the pixels this condition occludes (all false for other kinds)."""
        if self.kind not in OCCLUSION_KINDS or self.is_identity:
            return np.zeros(image_shape[:2], bool)
        if self.kind == OCCLUSION_FLAT:
            return flat_occlusion.occluder_mask(self._flat_occluders(image_shape, targets)[0], image_shape)
        return occlusion.occluder_mask(self._occluders(image_shape, targets), image_shape)

    def _occluders(self, image_shape: tuple[int, ...],
                   targets: Sequence[Entity] | np.ndarray | None) -> list[occlusion.Occluder]:
        regions, keys = occluded_regions(targets, image_shape, self.seed, self.options)
        masks = None if targets is None else target_masks(targets, image_shape)
        return occlusion.occluders(regions, keys, self._row["area_ratio"], self.seed, image_shape, masks)

    def _flat_occluders(self, image_shape: tuple[int, ...],
                        targets: Sequence[Entity] | np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        regions, keys = occluded_regions(targets, image_shape, self.seed, self.options)
        rects = flat_occlusion.occluder_rects(regions, keys, self._row["area_ratio"], self.seed, image_shape)
        return rects, flat_occlusion.occluder_colours(keys, self.seed)

    def _pixel_scale(self, image_shape: tuple[int, ...]) -> float:
        return min(image_shape[:2]) / self.options.reference_size


def _blur(degrader: Degrader, image: np.ndarray, frame_index: int, targets) -> np.ndarray:
    scale = degrader._pixel_scale(image.shape)
    return blur.blur_image(image, degrader._row["gaussian_sigma_px"] * scale,
                           degrader._row["motion_sigma_px"] * scale,
                           blur.motion_angle(degrader.seed, frame_index))


def _occlusion(degrader: Degrader, image: np.ndarray, frame_index: int, targets) -> np.ndarray:
    return occlusion.occlude(image, degrader._occluders(image.shape, targets), degrader.seed)


def _flat_occlusion(degrader: Degrader, image: np.ndarray, frame_index: int, targets) -> np.ndarray:
    return flat_occlusion.occlude(image, *degrader._flat_occluders(image.shape, targets))


def _illumination(degrader: Degrader, image: np.ndarray, frame_index: int, targets) -> np.ndarray:
    name = illumination.variant(degrader.seed, degrader.options)
    return illumination.illuminate(image, *illumination.gain_and_contrast(degrader._row, name))


def _low_resolution(degrader: Degrader, image: np.ndarray, frame_index: int, targets) -> np.ndarray:
    return low_resolution(image, degrader._row["scale"])


_IMAGE_OPERATIONS: dict[str, Callable[[Degrader, np.ndarray, int, object], np.ndarray]] = {
    BLUR: _blur, OCCLUSION: _occlusion, OCCLUSION_FLAT: _flat_occlusion, ILLUMINATION: _illumination,
    LOW_RESOLUTION: _low_resolution,
}
