"""Constant-velocity Kalman filter on boxes as (cx, cy, a, h): centre, aspect ratio w/h, height.

The state is (cx, cy, a, h) and their velocities per frame. Noise scales with the box height, as in
SORT/DeepSORT/ByteTrack, so small and large objects are tracked alike. `predict(steps=k)` advances
k frames at once (frames dropped upstream keep their indices: the gap is predicted over).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: chi-square quantiles with 4 degrees of freedom (the measurement is 4-D), for gating
CHI2_4DOF_95 = 9.4877
CHI2_4DOF_99 = 13.2767


@dataclass(frozen=True)
class KalmanConfig:
    std_weight_position: float = 1.0 / 20  # position noise per unit of box height
    std_weight_velocity: float = 1.0 / 160  # velocity noise per unit of box height

    def __post_init__(self) -> None:
        for name in ("std_weight_position", "std_weight_velocity"):
            if getattr(self, name) <= 0:
                raise ValueError(f"kalman.{name} must be positive, got {getattr(self, name)}")


def xyxy_to_xyah(box: np.ndarray) -> np.ndarray:
    x1, y1, x2, y2 = np.asarray(box, dtype=np.float64)
    height = max(y2 - y1, 1e-6)
    return np.array([(x1 + x2) / 2, (y1 + y2) / 2, (x2 - x1) / height, height])


def xyah_to_xyxy(xyah: np.ndarray) -> np.ndarray:
    cx, cy, aspect, height = np.asarray(xyah, dtype=np.float64)[:4]
    width = aspect * height
    return np.array([cx - width / 2, cy - height / 2, cx + width / 2, cy + height / 2])


class BoxKalmanFilter:
    def __init__(self, config: KalmanConfig | None = None) -> None:
        self.config = config or KalmanConfig()
        self._motion = np.eye(8)
        self._motion[:4, 4:] = np.eye(4)
        self._observe = np.eye(4, 8)

    def _position_std(self, height: float) -> np.ndarray:
        w = self.config.std_weight_position
        return np.array([w * height, w * height, 1e-2, w * height])

    def _velocity_std(self, height: float) -> np.ndarray:
        w = self.config.std_weight_velocity
        return np.array([w * height, w * height, 1e-5, w * height])

    def initiate(self, measurement: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """State (8,) and covariance (8, 8) of a new track at `measurement` (cx, cy, a, h)."""
        measurement = np.asarray(measurement, dtype=np.float64)
        mean = np.concatenate([measurement, np.zeros(4)])
        height = measurement[3]
        std = np.concatenate([2 * self._position_std(height), 10 * self._velocity_std(height)])
        std[2], std[6] = 1e-2, 1e-5
        return mean, np.diag(std ** 2)

    def predict(self, mean: np.ndarray, covariance: np.ndarray, steps: int = 1) -> tuple[np.ndarray, np.ndarray]:
        """Advance `steps` frames (each step adds its process noise)."""
        for _ in range(max(int(steps), 0)):
            height = mean[3]
            noise = np.diag(np.concatenate([self._position_std(height), self._velocity_std(height)]) ** 2)
            mean = self._motion @ mean
            covariance = self._motion @ covariance @ self._motion.T + noise
        return mean, covariance

    def project(self, mean: np.ndarray, covariance: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Predicted measurement and its covariance (state uncertainty + measurement noise)."""
        noise = np.diag(self._position_std(mean[3]) ** 2)
        return self._observe @ mean, self._observe @ covariance @ self._observe.T + noise

    def update(self, mean: np.ndarray, covariance: np.ndarray, measurement: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
        projected, projected_cov = self.project(mean, covariance)
        gain = np.linalg.solve(projected_cov, (covariance @ self._observe.T).T).T
        innovation = np.asarray(measurement, dtype=np.float64) - projected
        mean = mean + gain @ innovation
        covariance = covariance - gain @ projected_cov @ gain.T
        return mean, covariance

    def gating_distance(self, mean: np.ndarray, covariance: np.ndarray, measurement: np.ndarray) -> float:
        """Squared Mahalanobis distance of `measurement` from the predicted measurement."""
        projected, projected_cov = self.project(mean, covariance)
        innovation = np.asarray(measurement, dtype=np.float64) - projected
        return float(innovation @ np.linalg.solve(projected_cov, innovation))
