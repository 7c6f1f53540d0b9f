"""Rolling latency statistics (median, p95, max over the last N samples) for `/diagnostics`."""
from __future__ import annotations

import threading
from collections import deque

import numpy as np


class LatencyWindow:
    def __init__(self, size: int = 300) -> None:
        if size < 1:
            raise ValueError(f"size must be >= 1, got {size}")
        self._samples: deque[float] = deque(maxlen=size)
        self._lock = threading.Lock()

    def add(self, seconds: float) -> None:
        with self._lock:
            self._samples.append(float(seconds))

    def __len__(self) -> int:
        with self._lock:
            return len(self._samples)

    def summary_ms(self) -> dict[str, float]:
        """{"median_ms", "p95_ms", "max_ms"} of the window; empty when there are no samples."""
        with self._lock:
            if not self._samples:
                return {}
            samples = np.fromiter(self._samples, float)
        return {"median_ms": float(np.median(samples) * 1e3), "p95_ms": float(np.percentile(samples, 95) * 1e3),
                "max_ms": float(samples.max() * 1e3)}
