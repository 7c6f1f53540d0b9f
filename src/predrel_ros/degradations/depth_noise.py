"""What a consumer RGB-D sensor does to exact depth: the controlled set's depth made realistic.

Modelled after structured-light / active-stereo cameras (Kinect, RealSense D4xx):
  - axial noise growing with distance, sigma(z) = axial_base_m + axial_quadratic * (z - 0.4)^2
    (the Kinect fit of Nguyen, Izadi and Lovell, 3DIMPVT 2012);
  - disparity quantisation: depth is measured as disparity f * b / z (f the sensor's native focal
    length) in steps of `subpixel` pixels, so the depth step grows with z^2;
  - holes at depth edges: pixels within `edge_width` sensor pixels of a relative jump over `edge_jump`
    are lost with probability `edge_hole_rate` (the shadow and mixed-pixel band; in an image narrower
    than the sensor the band is as many pixels wide as it covers there, at least one, with the rate
    lowered to lose as much per edge), plus sparse dropout;
  - range: nothing nearer than min_range_m or farther than max_range_m (the far background).
Holes are NaN. The same seed gives the same noise.
"""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from predrel_ros.perception.depth import depth_edges


@dataclass(frozen=True)
class DepthNoiseConfig:
    axial_base_m: float = 0.0012
    axial_quadratic: float = 0.0019  # per m^2
    sensor_width_px: int = 640  # the sensor's native width: depth images of another width are scaled copies
    focal_px: float = 640.0  # the sensor's native focal length (disparity is measured before any scaling)
    baseline_m: float = 0.05
    subpixel: float = 0.125  # disparity step in pixels
    edge_jump: float = 0.03  # relative depth jump that makes an edge
    edge_width: float = 2.0  # sensor pixels either side of an edge that may be lost
    edge_hole_rate: float = 0.5
    dropout_rate: float = 0.005
    min_range_m: float = 0.2
    max_range_m: float = 6.0

    def __post_init__(self) -> None:
        for name in ("axial_base_m", "axial_quadratic", "subpixel", "edge_width"):
            if getattr(self, name) < 0:
                raise ValueError(f"depth_noise.{name} must be >= 0, got {getattr(self, name)}")
        for name in ("sensor_width_px", "focal_px", "baseline_m", "edge_jump"):
            if getattr(self, name) <= 0:
                raise ValueError(f"depth_noise.{name} must be positive, got {getattr(self, name)}")
        for name in ("edge_hole_rate", "dropout_rate"):
            if not 0 <= getattr(self, name) <= 1:
                raise ValueError(f"depth_noise.{name} must lie in [0, 1], got {getattr(self, name)}")
        if not 0 <= self.min_range_m < self.max_range_m:
            raise ValueError(f"depth_noise needs 0 <= min_range_m < max_range_m, got {self.min_range_m} "
                             f"and {self.max_range_m}")


def axial_sigma(depth_m: np.ndarray, config: DepthNoiseConfig) -> np.ndarray:
    return config.axial_base_m + config.axial_quadratic * (np.asarray(depth_m) - 0.4) ** 2


def noisy_depth(depth_m: np.ndarray, rng: np.random.Generator, config: DepthNoiseConfig | None = None) -> np.ndarray:
    """float32 metres (NaN = hole) as the sensor would report exact `depth_m` (NaN = unknown)."""
    config = config or DepthNoiseConfig()
    depth = np.asarray(depth_m, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        valid = np.isfinite(depth) & (depth >= config.min_range_m) & (depth <= config.max_range_m)
    clean = np.where(valid, depth, np.nan)
    noisy = clean + rng.standard_normal(depth.shape) * axial_sigma(np.nan_to_num(clean, nan=1.0), config)
    if config.subpixel > 0:
        focal_baseline = config.focal_px * config.baseline_m
        with np.errstate(divide="ignore", invalid="ignore"):
            disparity = np.round(focal_baseline / noisy / config.subpixel) * config.subpixel
            noisy = focal_baseline / disparity
    holes = ~valid | (rng.random(depth.shape) < config.dropout_rate)
    if config.edge_hole_rate > 0 and config.edge_width > 0:
        width = config.edge_width * depth.shape[1] / config.sensor_width_px  # in this image's pixels
        pixels = max(1, int(round(width)))
        band = depth_edges(clean, config.edge_jump).astype(np.uint8)
        if pixels > 1:
            band = cv2.dilate(band, np.ones((2 * pixels - 1,) * 2, np.uint8))
        rate = config.edge_hole_rate * min(1.0, width / pixels)
        holes |= band.astype(bool) & (rng.random(depth.shape) < rate)
    with np.errstate(invalid="ignore"):
        holes |= ~np.isfinite(noisy) | (noisy <= 0)
    noisy[holes] = np.nan
    return noisy.astype(np.float32)
