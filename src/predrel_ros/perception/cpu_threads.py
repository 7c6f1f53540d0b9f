"""The CPU threads of a perception process: how many, and holding the native libraries to them.

On a robot computer the perception node shares the cores with DDS, the predicate, reliability and
action nodes, and in `replay_eval` with a second perception node (the twins). Thread pools sized to
every core compete with all of them, and pool threads that spin-wait for work (ONNX Runtime's
default; OpenBLAS after each call) burn cores doing nothing. Measured on this project's 2-core
development machine, one 320x240 frame of the default model: 43 ms of CPU for 22 ms of wall time
with the runtimes' defaults; 12.4 ms of CPU for 12.4 ms of wall time with one thread and no spinning.

`backend.num_threads: 0` (AUTO) takes half the cores this process may run on, at least 1 and at
most `MAX_AUTO_THREADS`: the other half serves the rest of the graph. BLAS is held to one thread
whatever the setting: the per-frame matrix products (mask coefficients x prototypes) are small, and
more threads only add hand-over and spinning.
"""
from __future__ import annotations

import logging
import os

log = logging.getLogger(__name__)

AUTO = 0
#: AUTO never takes more: inference of the small models here stops scaling beyond it
MAX_AUTO_THREADS = 4


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity, e.g. a container's cpuset)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def resolve_threads(requested: int, cores: int | None = None) -> int:
    """`requested` threads, or for AUTO half of `cores` (default: the available ones), 1 to MAX_AUTO_THREADS."""
    if requested < 0:
        raise ValueError(f"threads must be >= 0 (0 = auto), got {requested}")
    if requested != AUTO:
        return requested
    cores = available_cores() if cores is None else cores
    return max(1, min(MAX_AUTO_THREADS, cores // 2))


def hold_native_libraries(threads: int) -> None:
    """OpenCV's pool to `threads`, every BLAS loaded in this process to one thread (process-wide)."""
    import cv2
    from threadpoolctl import threadpool_limits

    cv2.setNumThreads(threads)
    threadpool_limits(limits=1, user_api="blas")
    log.debug("cpu threads: opencv %d, blas 1", threads)
