"""The severity table (paper Table 6): the concrete parameters of every kind at severities 0..5.

This table is the single source of truth: the degradations read their parameters from it and the
replay node fills `DegradationState.parameter_names/values` from it. Severity 0 is the identity
(every column holds its identity value), and every column moves in one direction with severity, so
each kind degrades monotonically. A dataset may use its own table (`with_overrides`), but the same
table must be used for all videos of that dataset (paper 4.3); a custom table is validated against
the same rules.

Pixel-sized blur parameters are given for a 480-row frame and scale with the frame's shorter side
(`DegradationOptions.reference_size`), so a severity removes the same scene detail at 320x240 and
at 640x480. The low-resolution scale is relative to the frame already.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

BLUR = "blur"
OCCLUSION = "occlusion"
#: the look occlusion had before textured occluders: flat rectangles in muted colours (for comparison)
OCCLUSION_FLAT = "occlusion_flat"
ILLUMINATION = "illumination"
LOW_RESOLUTION = "low_resolution"
FRAME_DROP = "frame_drop"
DETECTION_NOISE = "detection_noise"
#: the clean condition (DegradationState.kind "none"); only severity 0
NONE = "none"

#: the protocol's kinds: what a sweep over "all" kinds runs (1 clean + 6 kinds x 5 severities = 31 conditions)
KINDS = (BLUR, OCCLUSION, ILLUMINATION, LOW_RESOLUTION, FRAME_DROP, DETECTION_NOISE)
#: variants kept for comparison: selectable by name everywhere a kind is, never part of "all"
COMPARISON_KINDS = (OCCLUSION_FLAT,)
ALL_KINDS = KINDS + COMPARISON_KINDS
#: a comparison kind has no row of its own: it reads the row of the kind it varies (same severity meaning)
TABLE_ROW_KIND = {OCCLUSION_FLAT: OCCLUSION}
#: kinds that change pixels; frame_drop acts on the stream, detection_noise on perception output
IMAGE_KINDS = (BLUR, OCCLUSION, OCCLUSION_FLAT, ILLUMINATION, LOW_RESOLUTION)
#: kinds that hide parts of their targets (Degrader.occluder_mask says which pixels)
OCCLUSION_KINDS = (OCCLUSION, OCCLUSION_FLAT)
MAX_SEVERITY = 5
SEVERITIES = tuple(range(MAX_SEVERITY + 1))

#: direction of a column with growing severity
INCREASING, DECREASING, CONSTANT = "increasing", "decreasing", "constant"


@dataclass(frozen=True)
class Column:
    """One parameter of a kind: its identity value at severity 0, direction and allowed range."""

    name: str
    identity: float | None  # None: any value at severity 0 (the column has no effect there)
    direction: str
    low: float
    high: float
    meaning: str


#: kind -> its parameters. The ranges keep every kind well defined (e.g. box jitter below 0.19 of
#: the box size can never turn a box inside out: draws are clipped to 2.5 standard deviations).
SCHEMA: dict[str, tuple[Column, ...]] = {
    BLUR: (
        Column("gaussian_sigma_px", 0.0, INCREASING, 0.0, 50.0,
               "defocus: isotropic Gaussian standard deviation, pixels at the reference size"),
        Column("motion_sigma_px", 0.0, INCREASING, 0.0, 100.0,
               "linear motion: Gaussian-weighted line kernel, standard deviation along the motion "
               "direction, pixels at the reference size"),
    ),
    OCCLUSION: (
        Column("area_ratio", 0.0, INCREASING, 0.0, 0.95,
               "fraction of each occluded region (a target box, or a random zone) that is covered"),
    ),
    ILLUMINATION: (
        Column("low_light_gain", 1.0, DECREASING, 0.01, 1.0,
               "low light: intensities multiplied by this gain"),
        Column("overexposure_gain", 1.0, INCREASING, 1.0, 20.0,
               "overexposure: intensities multiplied by this gain and clipped at 255"),
        Column("contrast_factor", 1.0, DECREASING, 0.01, 1.0,
               "contrast reduction: deviations from the mean intensity multiplied by this factor"),
    ),
    LOW_RESOLUTION: (
        Column("scale", 1.0, DECREASING, 0.01, 1.0,
               "downsampling factor per side before resizing back to the original resolution"),
    ),
    FRAME_DROP: (
        Column("affected_rate", 0.0, INCREASING, 0.0, 0.95,
               "probability that a frame is not delivered fresh (dropped or repeated)"),
        Column("repeat_share", None, CONSTANT, 0.0, 1.0,
               "share of the affected frames that repeat the last delivered frame (the rest are dropped)"),
    ),
    DETECTION_NOISE: (
        Column("box_jitter", 0.0, INCREASING, 0.0, 0.19,
               "standard deviation of each box corner's displacement, as a fraction of the box size"),
        Column("miss_rate", 0.0, INCREASING, 0.0, 0.95,
               "probability that a detection is missed"),
        Column("false_per_frame", 0.0, INCREASING, 0.0, 3.0,
               "expected number of false detections per frame (at most 3)"),
        Column("track_break_rate", 0.0, INCREASING, 0.0, 0.5,
               "probability per entity and frame that its track is interrupted (new id for a while)"),
    ),
}

#: Defaults. Starting points: ImageNet-C (imagecorruptions) severities, adapted to 320x240..640x480
#: robot frames so that severity 5 is clearly degraded while the manipulation stays recognisable
#: (checked on contact sheets, `predrel degrade preview`). See docs/degradations.md.
DEFAULT_VALUES: dict[str, dict[str, tuple[float, ...]]] = {
    BLUR: {
        "gaussian_sigma_px": (0.0, 1.0, 1.5, 2.0, 3.0, 4.0),
        "motion_sigma_px": (0.0, 1.5, 2.5, 3.5, 5.0, 7.0),
    },
    OCCLUSION: {
        "area_ratio": (0.0, 0.1, 0.2, 0.3, 0.4, 0.5),
    },
    ILLUMINATION: {
        "low_light_gain": (1.0, 0.6, 0.45, 0.32, 0.22, 0.15),
        "overexposure_gain": (1.0, 1.3, 1.6, 1.9, 2.3, 2.8),
        "contrast_factor": (1.0, 0.6, 0.45, 0.33, 0.23, 0.15),
    },
    LOW_RESOLUTION: {
        "scale": (1.0, 0.5, 0.4, 0.3, 0.22, 0.16),
    },
    FRAME_DROP: {
        "affected_rate": (0.0, 0.1, 0.2, 0.3, 0.45, 0.6),
        "repeat_share": (0.5, 0.5, 0.5, 0.5, 0.5, 0.5),
    },
    DETECTION_NOISE: {
        "box_jitter": (0.0, 0.02, 0.04, 0.07, 0.1, 0.14),
        "miss_rate": (0.0, 0.05, 0.1, 0.15, 0.2, 0.3),
        "false_per_frame": (0.0, 0.05, 0.1, 0.2, 0.3, 0.5),
        "track_break_rate": (0.0, 0.005, 0.01, 0.02, 0.03, 0.05),
    },
}


def check_kind(kind: str, allow_none: bool = True) -> str:
    """Return `kind` if it names a degradation kind, comparison kinds included (or "none" when allowed),
    else ValueError."""
    valid = ALL_KINDS + ((NONE,) if allow_none else ())
    if not isinstance(kind, str) or kind not in valid:
        raise ValueError(f"kind must be one of {', '.join(valid)}; got {kind!r}")
    return kind


def check_severity(severity: int) -> int:
    """Return `severity` as int if it is an integer in 0..5, else ValueError."""
    if isinstance(severity, (bool, np.bool_)) or not isinstance(severity, (int, np.integer)):
        raise ValueError(f"severity must be an integer 0..{MAX_SEVERITY}; got {severity!r}")
    if not 0 <= int(severity) <= MAX_SEVERITY:
        raise ValueError(f"severity must lie in 0..{MAX_SEVERITY} (0 = clean); got {severity}")
    return int(severity)


class ParameterTable:
    """Parameters per kind and severity, validated against `SCHEMA`."""

    def __init__(self, values: Mapping[str, Mapping[str, Sequence[float]]]) -> None:
        unknown = set(values) - set(KINDS)
        if unknown:
            raise ValueError(f"parameter table: unknown kind(s) {sorted(unknown)}; expected {KINDS}")
        self._values: dict[str, dict[str, tuple[float, ...]]] = {}
        for kind in KINDS:
            if kind not in values:
                raise ValueError(f"parameter table: kind {kind!r} is missing")
            self._values[kind] = self._validated(kind, values[kind])

    @staticmethod
    def _validated(kind: str, columns: Mapping[str, Sequence[float]]) -> dict[str, tuple[float, ...]]:
        expected = [column.name for column in SCHEMA[kind]]
        if sorted(columns) != sorted(expected):
            raise ValueError(f"parameter table: {kind} needs exactly the parameters {expected}, "
                             f"got {sorted(columns)}")
        validated = {}
        for column in SCHEMA[kind]:
            field = f"{kind}.{column.name}"
            try:
                row = tuple(float(v) for v in columns[column.name])
            except (TypeError, ValueError):
                raise ValueError(f"parameter table: {field} must be {len(SEVERITIES)} numbers, "
                                 f"got {columns[column.name]!r}") from None
            if len(row) != len(SEVERITIES):
                raise ValueError(f"parameter table: {field} needs one value per severity 0..{MAX_SEVERITY} "
                                 f"({len(SEVERITIES)} values), got {len(row)}")
            if not all(np.isfinite(row)) or min(row) < column.low or max(row) > column.high:
                raise ValueError(f"parameter table: {field} values must lie in [{column.low}, "
                                 f"{column.high}], got {list(row)}")
            if column.identity is not None and row[0] != column.identity:
                raise ValueError(f"parameter table: {field} at severity 0 must be the identity value "
                                 f"{column.identity}, got {row[0]}")
            steps = np.diff(row)
            if column.direction == INCREASING and np.any(steps < 0):
                raise ValueError(f"parameter table: {field} must not decrease with severity, got {list(row)}")
            if column.direction == DECREASING and np.any(steps > 0):
                raise ValueError(f"parameter table: {field} must not increase with severity, got {list(row)}")
            if column.direction == CONSTANT and np.any(steps != 0):
                raise ValueError(f"parameter table: {field} must be the same at every severity, "
                                 f"got {list(row)}")
            validated[column.name] = row
        return validated

    def row(self, kind: str, severity: int) -> dict[str, float]:
        """The parameters of `kind` at `severity`, in schema order ({} for "none")."""
        check_kind(kind)
        severity = check_severity(severity)
        if kind == NONE:
            if severity != 0:
                raise ValueError(f"severity must be 0 for kind 'none'; got {severity}")
            return {}
        kind = TABLE_ROW_KIND.get(kind, kind)
        return {column.name: self._values[kind][column.name][severity] for column in SCHEMA[kind]}

    def columns(self, kind: str) -> tuple[str, ...]:
        check_kind(kind)
        return tuple(column.name for column in SCHEMA.get(TABLE_ROW_KIND.get(kind, kind), ()))

    def with_overrides(self, overrides: Mapping[str, Mapping[str, Sequence[float]]]) -> "ParameterTable":
        """A new table with some columns replaced, e.g. {"blur": {"motion_sigma_px": [0, 1, ...]}}."""
        merged = {kind: dict(columns) for kind, columns in self._values.items()}
        for kind, columns in overrides.items():
            check_kind(kind, allow_none=False)
            if kind in TABLE_ROW_KIND:
                raise ValueError(f"parameter table: {kind} has no row of its own, it reads the "
                                 f"{TABLE_ROW_KIND[kind]} row: override that one")
            for name, row in columns.items():
                if name not in merged[kind]:
                    raise ValueError(f"parameter table: {kind} has no parameter {name!r}; "
                                     f"expected one of {list(merged[kind])}")
                merged[kind][name] = row
        return ParameterTable(merged)

    def as_dict(self) -> dict[str, dict[str, list[float]]]:
        return {kind: {name: list(row) for name, row in columns.items()}
                for kind, columns in self._values.items()}

    def markdown(self) -> str:
        """The table as Markdown: one line per kind and parameter, one column per severity."""
        lines = ["| kind | parameter | " + " | ".join(f"s={s}" for s in SEVERITIES) + " |",
                 "| --- | --- |" + " --- |" * len(SEVERITIES)]
        for kind in KINDS:
            for name, row in self._values[kind].items():
                lines.append(f"| {kind} | {name} | " + " | ".join(f"{v:g}" for v in row) + " |")
        return "\n".join(lines)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ParameterTable) and self._values == other._values

    def __repr__(self) -> str:
        return f"ParameterTable({self.as_dict()!r})"


DEFAULT_TABLE = ParameterTable(DEFAULT_VALUES)
