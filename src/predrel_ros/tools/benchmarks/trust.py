"""Trust signals per frame at 320x240: the whole self-mode reliability monitor, and its evidence by part.

The scripted scene of `predrel bench core` (8 entities with full-frame masks, the right hand
carrying a cube into a bowl) is drawn into a textured frame, and its predicates are extracted with
the shipped `config/predicates.yaml` (128 estimates per frame) before timing.

The whole (`monitor`): per frame what the reliability node does in self mode with the shipped trust
model, its defaults: the image's measures (`ImageQuality.measure`, the node's image callback), then
`ReliabilityMonitor.add_evaluated_entities` and `add_evaluated` (rolling metrics, logic rules,
identity switches, the evidence) and `report()` with its per-stream records (trust assessment, the
model's groups). Reported: wall-clock medians and p95 of the update, the report, the monitor
(update + report) and all trust signals together (image measures + monitor), and the CPU time of
the last two (`time.process_time`, which a loaded machine's scheduling does not inflate), against
the goal of 1 ms per frame for all trust signals together (`meets_goal`).

The evidence by part (`stages`): a clean evidence profile is fitted on a first pass, then each frame
is timed through `TrustEvidence.update` (scene memory, detection statistics, stream timing, image
quality) split into its parts, `TrustEvidence.features` (the window's evidence),
`EvidenceProfile.deviations` (against the clean profile) and the shipped trust model's assessment
of four groups (`TrustModel.assess`, which computes the deviations itself); `frame` is their sum.
As a baseline measured in the same run: one copy of the frame (what touching every pixel once costs).
"""
from __future__ import annotations

import argparse
import time
from typing import TYPE_CHECKING

import numpy as np

from predrel_ros.tools.benchmarks.core import (
    CAMERA_PERIOD_MS,
    add_scene_arguments,
    check_scene_arguments,
    scripted_scene,
)
from predrel_ros.tools.benchmarks.report import peak_rss_mb, summarize

if TYPE_CHECKING:
    from predrel_ros.reliability.trust_estimator import TrustModel

#: the per-frame goal of all trust signals together
GOAL_MS = 1.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_scene_arguments(parser, 320, 240)


def drawn_frames(scene: list[list], width: int, height: int, seed: int = 0) -> list[np.ndarray]:
    """A textured RGB frame per frame of the scene, each entity's mask painted in a colour of its own."""
    rng = np.random.default_rng(seed)
    texture = rng.integers(90, 160, (height, width, 3), dtype=np.uint8)
    colours = {entity.id: rng.integers(0, 256, 3, dtype=np.uint8) for entity in scene[0]}
    frames = []
    for entities in scene:
        image = texture.copy()
        for entity in entities:
            image[entity.mask] = colours[entity.id]
        frames.append(image)
    return frames


def whole_monitor(scene: list[list], images: list[np.ndarray], repeats: int, model: TrustModel) -> dict:
    """The reliability node's self-mode work per frame (see the module docstring) with `model` over
    its window, `repeats` passes with a fresh monitor each."""
    from predrel_ros.core.package_files import config_path
    from predrel_ros.predicates import PredicateConfig, PredicateExtractor
    from predrel_ros.reliability.image_quality import ImageQuality
    from predrel_ros.reliability.monitor import MonitorConfig, ReliabilityMonitor
    from predrel_ros.reliability.trust import TrustConfig

    path = config_path("predicates.yaml")
    predicates = PredicateConfig.load(path, section="predicates")
    trust = TrustConfig.load(path, section="trust")
    extractor = PredicateExtractor(predicates)
    estimates = [extractor.update(t, entities) for t, entities in enumerate(scene)]
    height, width = images[0].shape[:2]
    quality = ImageQuality()
    times = {name: [] for name in ("image_quality", "update", "report", "monitor", "all", "monitor_cpu", "all_cpu")}
    wall, cpu = time.perf_counter, time.process_time
    for _ in range(repeats):
        monitor = ReliabilityMonitor(MonitorConfig.for_predicates(predicates, window=model.window), trust, None,
                                     predicates, model)
        for t, (entities, image) in enumerate(zip(scene, images)):
            start, start_cpu = wall(), cpu()
            measures = quality.measure(image)
            measured, measured_cpu = wall(), cpu()
            monitor.add_evaluated_entities(t, entities, (width, height), measures)
            monitor.add_evaluated(t, estimates[t], tag=t)
            updated = wall()
            monitor.report()
            end, end_cpu = wall(), cpu()
            spans = (measured - start, updated - measured, end - updated, end - measured, end - start,
                     end_cpu - measured_cpu, end_cpu - start_cpu)
            for values, span in zip(times.values(), spans):
                values.append(span)
    result = {name: summarize(values) for name, values in times.items()}
    result["estimates_per_frame"] = float(np.median([len(frame) for frame in estimates]))
    return result


def run(args: argparse.Namespace) -> dict:
    from predrel_ros.core.errors import UserError
    from predrel_ros.reliability.evidence_profile import EvidenceProfile
    from predrel_ros.reliability.trust_estimator import DEFAULT_TRUST_MODEL_FILE, TrustModel
    from predrel_ros.reliability.trust_evidence import TrustEvidence

    check_scene_arguments(args)
    model = TrustModel.load(DEFAULT_TRUST_MODEL_FILE)
    if model.window != args.window:
        raise UserError(f"the shipped trust model was fitted over {model.window}-frame windows; give --window "
                        f"{model.window}")
    scene = scripted_scene(args.frames, args.width, args.height)
    images = drawn_frames(scene, args.width, args.height)
    whole = whole_monitor(scene, images, args.repeats, model)
    fitting = TrustEvidence(args.window)
    clean = []
    for t, (entities, image) in enumerate(zip(scene, images)):
        fitting.update(t, entities, image)
        clean.append(fitting.features())
    profile = EvidenceProfile.fit(clean)
    signals = dict.fromkeys(model.groups, {"confidence": 0.8, "tpc_s": 0.9, "unk_rate": 0.1, "violation_rate": 0.0})

    stages = {name: [] for name in ("scene_memory", "detection_statistics", "image_quality", "update",
                                    "features", "deviations", "model", "frame")}
    baseline = []
    clock = time.perf_counter
    for _ in range(args.repeats):
        evidence = TrustEvidence(args.window)
        size = (args.width, args.height)
        for t, (entities, image) in enumerate(zip(scene, images)):
            start = clock()
            evidence.scene.update(t, entities, size)
            scened = clock()
            evidence.detections.update(entities)
            detected = clock()
            evidence.image.measure(image)
            measured = clock()
            stages["scene_memory"].append(scened - start)
            stages["detection_statistics"].append(detected - scened)
            stages["image_quality"].append(measured - detected)
        evidence = TrustEvidence(args.window)
        for t, (entities, image) in enumerate(zip(scene, images)):
            start = clock()
            evidence.update(t, entities, image)
            updated = clock()
            features = evidence.features()
            featured = clock()
            profile.deviations(features)
            deviated = clock()
            model.assess(signals, features)
            end = clock()
            stages["update"].append(updated - start)
            stages["features"].append(featured - updated)
            stages["deviations"].append(deviated - featured)
            stages["model"].append(end - deviated)
            stages["frame"].append(end - start)
    for image in images:          # the baseline, in its own pass
        start = clock()
        image.copy()
        baseline.append(clock() - start)
    return {
        "entities": len(scene[0]),
        "image": f"{args.width}x{args.height}",
        "frames": args.frames,
        "repeats": args.repeats,
        "rolling_window": args.window,
        "monitor": whole,
        "stages": {name: summarize(times) for name, times in stages.items()},
        "goal_ms": GOAL_MS,
        "meets_goal": whole["all"]["median_ms"] <= GOAL_MS,
        "monitor_meets_goal": whole["monitor"]["median_ms"] <= GOAL_MS,
        "share_of_camera_period": whole["all"]["median_ms"] / CAMERA_PERIOD_MS,
        "baseline_frame_copy": summarize(baseline),
        "peak_rss_mb": peak_rss_mb(),
    }
