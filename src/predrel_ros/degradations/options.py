"""Settings of the degradations that do not change with severity (the severity table holds those)."""
from __future__ import annotations

from dataclasses import dataclass

#: illumination variants; "by_seed" picks one from the seed (seed % 3 in this order)
ILLUMINATION_VARIANTS = ("low_light", "overexposure", "contrast")
ILLUMINATION_MODES = ("by_seed",) + ILLUMINATION_VARIANTS
INT32_MAX = 2**31 - 1


@dataclass(frozen=True)
class DegradationOptions:
    """How the degradations behave apart from their severity parameters.

    reference_size: shorter image side (pixels) at which pixel-sized table parameters are given;
        they scale with `min(height, width) / reference_size`.
    illumination_mode: which illumination variant to apply; "by_seed" chooses low_light,
        overexposure, contrast for seed % 3 == 0, 1, 2, so a seed sweep covers all three.
    occlusion_zones: number of random occluded zones when no target boxes are given.
    occlusion_zone_size: (min, max) side of a random zone as a fraction of the frame side.
    track_interruption_frames: an interrupted track carries a new id for this many frames, then the
        tracker re-identifies it (original id again).
    max_false_detections: false-detection candidates per frame (table false_per_frame <= this).
    false_detection_score: (min, max) detection score of a false detection.
    false_detection_track_quality: track quality of a false detection (a spurious, fresh track).
    synthetic_id_base: ids of false detections and interrupted tracks lie in
        [synthetic_id_base, 2 * synthetic_id_base); real track ids must stay below it. The upper end
        fits the int32 id of Entity.msg.
    """

    reference_size: int = 480
    illumination_mode: str = "by_seed"
    occlusion_zones: int = 3
    occlusion_zone_size: tuple[float, float] = (0.2, 0.4)
    track_interruption_frames: int = 10
    max_false_detections: int = 3
    false_detection_score: tuple[float, float] = (0.3, 0.8)
    false_detection_track_quality: float = 0.3
    synthetic_id_base: int = 1_000_000_000

    def __post_init__(self) -> None:
        if not isinstance(self.reference_size, int) or self.reference_size < 16:
            raise ValueError(f"reference_size must be an integer >= 16 pixels, got {self.reference_size!r}")
        if self.illumination_mode not in ILLUMINATION_MODES:
            raise ValueError(f"illumination_mode must be one of {ILLUMINATION_MODES}, "
                             f"got {self.illumination_mode!r}")
        if not isinstance(self.occlusion_zones, int) or self.occlusion_zones < 1:
            raise ValueError(f"occlusion_zones must be an integer >= 1, got {self.occlusion_zones!r}")
        low, high = self.occlusion_zone_size
        if not 0.0 < low <= high <= 1.0:
            raise ValueError(f"occlusion_zone_size must be (min, max) with 0 < min <= max <= 1, "
                             f"got {self.occlusion_zone_size!r}")
        if not isinstance(self.track_interruption_frames, int) or self.track_interruption_frames < 1:
            raise ValueError(f"track_interruption_frames must be an integer >= 1, "
                             f"got {self.track_interruption_frames!r}")
        if not isinstance(self.max_false_detections, int) or self.max_false_detections < 1:
            raise ValueError(f"max_false_detections must be an integer >= 1, got {self.max_false_detections!r}")
        low, high = self.false_detection_score
        if not 0.0 <= low <= high <= 1.0:
            raise ValueError(f"false_detection_score must be (min, max) within [0, 1], "
                             f"got {self.false_detection_score!r}")
        if not 0.0 <= self.false_detection_track_quality <= 1.0:
            raise ValueError(f"false_detection_track_quality must lie in [0, 1], "
                             f"got {self.false_detection_track_quality!r}")
        if (not isinstance(self.synthetic_id_base, int) or self.synthetic_id_base < 1
                or 2 * self.synthetic_id_base - 1 > INT32_MAX):
            raise ValueError(f"synthetic_id_base must be an integer in 1..{(INT32_MAX + 1) // 2} so that "
                             f"synthetic ids fit int32, got {self.synthetic_id_base!r}")
