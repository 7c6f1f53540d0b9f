"""Per-frame cost of every degradation kind and severity, against a plain frame copy in the same run.

Image kinds are timed on `Degrader.apply_image`, frame_drop on `decide_frame` and detection_noise on
`apply_entities` with six masked entities, each at every frame size asked for (default 320x240 and
640x480). The frame index changes with every repeat, so per-frame draws (the motion direction)
vary as in a stream; the occlusion kinds' regions stay put, so after the first repeat the textured
occluders come from their memo (`degradations.occlusion`: a target at rest; a moving one is redrawn
every frame). Reported: median and p95 milliseconds per frame, and the median's ratio to the
median of a frame copy (`image.copy()`) of the same size.
"""
from __future__ import annotations

import argparse
import time

import numpy as np


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repeats", type=int, default=30, help="frames timed per kind, severity and size")
    parser.add_argument("--sizes", default="320x240,640x480", help="frame sizes WxH, comma separated")
    parser.add_argument("--seed", type=int, default=0, help="degradation seed")


def _sizes(text: str) -> list[tuple[int, int]]:
    from predrel_ros.core.errors import UserError

    sizes = []
    for item in text.split(","):
        width, sep, height = item.strip().partition("x")
        if not (sep and width.isdigit() and height.isdigit() and int(width) > 0 and int(height) > 0):
            raise UserError(f"--sizes must be WxH pairs like 320x240,640x480, got {text!r}")
        sizes.append((int(width), int(height)))
    return sizes


def _scene(width: int, height: int) -> np.ndarray:
    """A textured frame with some objects (smoothed noise plus boxes), the same in every run."""
    import cv2

    rng = np.random.default_rng(0)
    frame = cv2.GaussianBlur(rng.random((height, width, 3)).astype(np.float32), (0, 0), 2.0)
    frame = (255 * (frame - frame.min()) / np.ptp(frame)).astype(np.uint8)
    for _ in range(6):
        x, y = rng.integers(0, width * 3 // 4), rng.integers(0, height * 3 // 4)
        frame[y:y + height // 5, x:x + width // 6] = rng.integers(0, 256, 3)
    return frame


def _entities(width: int, height: int):
    from predrel_ros.core.entities import ROLES, Entity

    rng = np.random.default_rng(1)
    entities = []
    for i in range(6):
        x1, y1 = rng.uniform(0, width * 0.7), rng.uniform(0, height * 0.7)
        box = [x1, y1, x1 + width * 0.2, y1 + height * 0.2]
        mask = np.zeros((height, width), bool)
        mask[int(box[1]) + 1:int(box[3]), int(box[0]) + 1:int(box[2])] = True
        entities.append(Entity(i, f"object{i}", ROLES[i % len(ROLES)], box, mask=mask))
    return entities


def _time(call, repeats: int) -> list[float]:
    call(0)  # warm-up: first-call allocations and lazy imports are not per-frame cost
    seconds = []
    for i in range(1, repeats + 1):
        start = time.perf_counter()
        call(i)
        seconds.append(time.perf_counter() - start)
    return seconds


def run(args: argparse.Namespace) -> dict:
    import cv2

    from predrel_ros.core.errors import UserError
    from predrel_ros.degradations import DETECTION_NOISE, FRAME_DROP, KINDS, SEVERITIES, Degrader
    from predrel_ros.tools.benchmarks.report import summarize

    if args.repeats < 1:
        raise UserError(f"--repeats must be at least 1, got {args.repeats}")
    result: dict = {"repeats": args.repeats, "seed": args.seed, "opencv_threads": cv2.getNumThreads(),
                    "frame_copy": {}, "kinds": {kind: {} for kind in KINDS}}
    for width, height in _sizes(args.sizes):
        size = f"{width}x{height}"
        image = _scene(width, height)
        entities = _entities(width, height)
        copy = summarize(_time(lambda i: image.copy(), args.repeats))
        result["frame_copy"][size] = copy
        for kind in KINDS:
            per_severity = {}
            for severity in SEVERITIES:
                degrader = Degrader(kind, severity, args.seed)
                if kind == FRAME_DROP:
                    call = lambda i, d=degrader: d.decide_frame(1000 + i)  # noqa: E731
                elif kind == DETECTION_NOISE:
                    call = lambda i, d=degrader: d.apply_entities(entities, i, image.shape)  # noqa: E731
                else:
                    call = lambda i, d=degrader: d.apply_image(image, i)  # noqa: E731
                timing = summarize(_time(call, args.repeats))
                timing["ratio_to_copy"] = timing["median_ms"] / max(copy["median_ms"], 1e-9)
                per_severity[str(severity)] = timing
            result["kinds"][kind][size] = per_severity
    return result
