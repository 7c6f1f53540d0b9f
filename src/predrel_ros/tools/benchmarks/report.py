"""Shared pieces of every benchmark: timing summaries, the hardware description, the result file.

The machines are shared and noisy: benchmarks repeat, report medians and p95, and compare against
a baseline measured in the same run (a ratio) rather than quoting absolute times alone.
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import resource
from pathlib import Path
from typing import Sequence

import numpy as np


def summarize(seconds: Sequence[float]) -> dict:
    """Median, p95, mean, min and count of a list of durations, reported in milliseconds."""
    ms = np.asarray(seconds, dtype=np.float64) * 1e3
    if ms.size == 0:
        raise ValueError("summarize: no timings")
    return {"median_ms": float(np.median(ms)), "p95_ms": float(np.percentile(ms, 95)),
            "mean_ms": float(ms.mean()), "min_ms": float(ms.min()), "n": int(ms.size)}


def parse_size(text: str) -> tuple[int, int]:
    """A frame size given as WxH (e.g. 640x480) -> (width, height); UserError when it is not one."""
    from predrel_ros.core.errors import UserError

    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise UserError(f"size {text!r} must look like 640x480") from None
    if width < 32 or height < 32:
        raise UserError(f"size {text!r} is too small")
    return width, height


def hardware() -> dict:
    """What the numbers were measured on."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "machine": platform.machine(),
            "python": platform.python_version(), "system": platform.platform()}


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far (Linux reports kilobytes)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def write_result(target: str, result: dict, out: Path | None) -> Path:
    """Write `result` plus hardware and time to `out` (default bench-results/TARGET-<stamp>.json)."""
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    path = Path(out) if out else Path("bench-results") / f"{target}-{stamp}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"target": target, "utc": stamp, "hardware": hardware(), "result": result}
    path.write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n")
    return path
