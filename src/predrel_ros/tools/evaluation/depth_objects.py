"""Model-free RGB-D objects (perception/depth_objects.py) scored against the controlled set's ground truth.

Each frame's exact depth goes through the RGB-D sensor model (degradations/depth_noise.py, seeded per
episode) and the segmenter; then
  - object recall: ground-truth objects (every entity but hands and the table) with at least
    `min_pixels` visible mask pixels, found by a container or object detection at mask IoU >= 0.5
    (overall, and over the mostly visible ones: visibility >= 0.5); per role; the found ones' role
    from geometry (container or not) against the ground truth's;
  - surface found: a surface detection at mask IoU >= 0.5 with the table's mask;
  - detections that match no ground-truth entity (false objects) and those that are hands, per frame;
  - cost: the segmenter's time per frame (median, p95) at the dataset's frame size, and its process CPU
    time (median), which a loaded machine inflates less; with the native libraries held to `threads`
    as the perception node holds them (perception/cpu_threads.py: OpenCV to `threads`, BLAS to one),
    so the time is the node's (OpenBLAS's default pool spins beside each small product).
`hands="ground_truth"` keeps the ground-truth hand pixels out of the objects, as a hand detector
would (the simulator's hands are no human hands for MediaPipe): the upper bound of that combination;
`hands="ground_truth_coarse"` passes them through the hand-mask error model first
(tools/evaluation/hand_mask_error.py: a frame late, polygon-smoothed, grown or shrunk and shifted by
1-3 pixels, seeded per episode), the masks a landmark detector gives.
"""
from __future__ import annotations

import dataclasses
import time
from collections import Counter

import numpy as np

from predrel_ros.core.entities import CONTAINER, HAND_ROLES, SURFACE
from predrel_ros.degradations.depth_noise import DepthNoiseConfig, noisy_depth
from predrel_ros.perception.cpu_threads import AUTO, hold_native_libraries, resolve_threads
from predrel_ros.perception.depth_objects import (
    CONTAINER_LABEL,
    DEPTH_LABELS,
    SURFACE_LABEL,
    DepthObjectConfig,
    DepthObjectSegmenter,
)
from predrel_ros.tools.evaluation.hand_mask_error import HandMaskError, HandMaskErrorConfig

HAND_MODES = ("none", "ground_truth", "ground_truth_coarse")
MATCH_IOU = 0.5
MOSTLY_VISIBLE = 0.5


def mask_ious(masks: np.ndarray, target: np.ndarray) -> np.ndarray:
    inter = (masks & target).reshape(len(masks), -1).sum(axis=1)
    union = (masks | target).reshape(len(masks), -1).sum(axis=1)
    return inter / np.maximum(union, 1)


def evaluate_depth_objects(episodes, config: DepthObjectConfig | None = None,
                           noise: DepthNoiseConfig | None = None, seed: int = 0, frame_step: int = 1,
                           hands: str = "none", min_pixels: int = 20,
                           hand_mask_error: HandMaskErrorConfig | None = None, threads: int = AUTO) -> dict:
    """Scores over `episodes` (sources.dataset episodes), every `frame_step`-th frame; `threads`: OpenCV's
    threads (0: the perception node's automatic choice)."""
    if hands not in HAND_MODES:
        raise ValueError(f"hands must be one of {HAND_MODES}, got {hands!r}")
    threads = resolve_threads(threads)
    hold_native_libraries(threads)
    segmenter = DepthObjectSegmenter(config)
    config = segmenter.config
    coarse = HandMaskError(hand_mask_error)
    counts, per_role = Counter(), {}
    times, cpu_times = [], []
    for index, episode in enumerate(episodes):
        rng = np.random.default_rng([seed, index])
        mask_rng = np.random.default_rng([seed, index, 1])  # apart from the depth noise's draws
        segmenter.reset()
        coarse.reset()
        for number, frame in enumerate(episode.frames()):
            exclude = None
            if hands == "ground_truth_coarse":  # on every frame, scored or not: the lag is a frame's
                exact = _hand_pixels(frame)
                exclude = coarse(np.zeros(frame.depth.shape, bool) if exact is None else exact, mask_rng)
            if number % frame_step:
                continue
            if hands == "ground_truth":
                exclude = _hand_pixels(frame)
            K = np.asarray(frame.camera.K, dtype=np.float64).reshape(3, 3)
            depth = noisy_depth(frame.depth, rng, noise)
            start, cpu_start = time.perf_counter(), time.process_time()
            found = segmenter.detect(depth, K, exclude, frame.rgb)
            times.append(time.perf_counter() - start)
            cpu_times.append(time.process_time() - cpu_start)
            _score_frame(frame, found, counts, per_role, min_pixels)
    objects, visible = counts["objects"], counts["visible_objects"]
    return {
        "frames": counts["frames"], "hands": hands, "seed": seed, "frame_step": frame_step,
        "object_recall": counts["found"] / objects if objects else None, "objects": objects,
        "object_recall_visible": counts["visible_found"] / visible if visible else None,
        "visible_objects": visible,
        "recall_per_role": {role: found / total for role, (found, total) in sorted(per_role.items())},
        "container_role_accuracy": (counts["role_right"] / counts["found"]) if counts["found"] else None,
        "surface_found_rate": counts["surface_found"] / counts["frames"] if counts["frames"] else None,
        "false_objects_per_frame": counts["false"] / max(counts["frames"], 1),
        "hand_detections_per_frame": counts["hand_hits"] / max(counts["frames"], 1),
        "ms_per_frame_median": 1000 * float(np.median(times)) if times else None,
        "ms_per_frame_p95": 1000 * float(np.percentile(times, 95)) if times else None,
        "cpu_ms_per_frame_median": 1000 * float(np.median(cpu_times)) if cpu_times else None,
        "threads": threads,
        "config": dataclasses.asdict(config),
    }


def _hand_pixels(frame) -> np.ndarray | None:
    """The union of the frame's ground-truth hand masks, None when it has none."""
    hand_masks = [e.mask for e in frame.entities if e.role in HAND_ROLES and e.mask is not None]
    return np.any(hand_masks, axis=0) if hand_masks else None


def _score_frame(frame, found, counts: Counter, per_role: dict, min_pixels: int) -> None:
    counts["frames"] += 1
    labels = [DEPTH_LABELS[c] for c in found.class_ids]
    is_surface = np.array([label == SURFACE_LABEL for label in labels], dtype=bool)
    matched = np.zeros(len(labels), dtype=bool)
    for entity in frame.entities:
        if entity.mask is None or not entity.mask.any():
            continue
        ious = mask_ious(found.masks, entity.mask) if len(labels) else np.zeros(0)
        if entity.role == SURFACE:
            counts["surface_found"] += bool(np.any(ious[is_surface] >= MATCH_IOU))
            continue
        candidates = np.where(is_surface, 0.0, ious)
        best = int(np.argmax(candidates)) if len(candidates) else -1
        hit = best >= 0 and candidates[best] >= MATCH_IOU
        if hit:
            matched[best] = True
        if entity.role in HAND_ROLES:
            counts["hand_hits"] += hit
            continue
        if int(entity.mask.sum()) < min_pixels:
            continue
        counts["objects"] += 1
        counts["found"] += hit
        role = per_role.setdefault(entity.role, [0, 0])
        role[0] += hit
        role[1] += 1
        if entity.visibility >= MOSTLY_VISIBLE:
            counts["visible_objects"] += 1
            counts["visible_found"] += hit
        if hit:
            counts["role_right"] += (labels[best] == CONTAINER_LABEL) == (entity.role == CONTAINER)
    counts["false"] += int((~matched & ~is_surface).sum())
