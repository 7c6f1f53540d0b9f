"""Synthetic degradations (paper 4.3, Table 6): six kinds x severities 0..5, deterministic per seed,
and occlusion_flat (the flat look of occlusion, for comparison; selectable by name, not in "all").

Entry point: `Degrader(kind, severity, seed)` with `decide_frame`, `apply_image`, `apply_entities`
and `parameters()`; schedules over frames in `schedule`; the parameter table in `table`.
"""
from predrel_ros.degradations.degrader import REGISTRY, Degrader, KindInfo, check_image
from predrel_ros.degradations.frame_drop import FrameAction, FrameDecision
from predrel_ros.degradations.options import DegradationOptions
from predrel_ros.degradations.schedule import (
    CLEAN,
    Condition,
    ConstantSchedule,
    ScheduledDegrader,
    SegmentSchedule,
    SweepSchedule,
    conditions,
    parse_condition,
    parse_schedule,
)
from predrel_ros.degradations.stream import DegradedFrame, degrade_stream
from predrel_ros.degradations.table import (
    ALL_KINDS,
    BLUR,
    COMPARISON_KINDS,
    DEFAULT_TABLE,
    DETECTION_NOISE,
    FRAME_DROP,
    ILLUMINATION,
    IMAGE_KINDS,
    KINDS,
    LOW_RESOLUTION,
    MAX_SEVERITY,
    NONE,
    OCCLUSION,
    OCCLUSION_FLAT,
    OCCLUSION_KINDS,
    SEVERITIES,
    ParameterTable,
)

__all__ = [
    "ALL_KINDS", "BLUR", "CLEAN", "COMPARISON_KINDS", "DEFAULT_TABLE", "DETECTION_NOISE", "FRAME_DROP",
    "ILLUMINATION", "IMAGE_KINDS", "KINDS", "LOW_RESOLUTION", "MAX_SEVERITY", "NONE", "OCCLUSION", "OCCLUSION_FLAT",
    "OCCLUSION_KINDS", "REGISTRY", "SEVERITIES", "Condition", "ConstantSchedule", "DegradationOptions",
    "DegradedFrame", "Degrader", "FrameAction", "FrameDecision", "KindInfo", "ParameterTable", "ScheduledDegrader",
    "SegmentSchedule", "SweepSchedule", "check_image", "conditions", "degrade_stream", "parse_condition",
    "parse_schedule",
]
