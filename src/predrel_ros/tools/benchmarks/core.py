"""Predicate core per frame: extraction + confidence, rolling metrics, logic rules, trust levels.

A scripted scene with 8 entities (two hands, four objects, a bowl, the table) and full-frame masks
(640x480 by default) is built before timing; then each frame is timed through
`PredicateExtractor.update` (extraction and confidence), `RollingReliability.update` against a clean
twin reference, `LogicMonitor.update`, and a trust assessment from the pooled rolling metrics.
Reported: medians and p95 per stage, for the core (extraction + confidence + rolling metrics; goal
2 ms) and for the full frame, their shares of a 33.3 ms camera period (30 Hz), and, as a baseline
measured in the same run (in a pass of its own, so that it does not evict the caches between timed
frames), one full-frame distance transform per entity: what a naive contact test would cost before
any pair is compared.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from predrel_ros.tools.benchmarks.report import peak_rss_mb, summarize

CAMERA_PERIOD_MS = 1000.0 / 30.0
#: the per-frame goal of extraction + confidence + rolling metrics (the "core" stages)
GOAL_MS = 2.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_scene_arguments(parser, 640, 480)


def add_scene_arguments(parser: argparse.ArgumentParser, width: int, height: int) -> None:
    """The options of a benchmark over the scripted scene (also `predrel bench trust`)."""
    parser.add_argument("--frames", type=int, default=300, help="frames per repeat (default 300)")
    parser.add_argument("--repeats", type=int, default=3, help="passes over the sequence (default 3)")
    parser.add_argument("--width", type=int, default=width, help=f"image width (default {width})")
    parser.add_argument("--height", type=int, default=height, help=f"image height (default {height})")
    parser.add_argument("--window", type=int, default=30, help="rolling-metric window in frames (default 30)")


def check_scene_arguments(args: argparse.Namespace) -> None:
    from predrel_ros.core.errors import UserError

    if args.frames < 10 or args.repeats < 1 or args.width < 64 or args.height < 48 or args.window < 1:
        raise UserError("need --frames >= 10, --repeats >= 1, --width >= 64, --height >= 48, --window >= 1")


def scripted_scene(frames: int, width: int, height: int) -> list[list]:
    """Entities of every frame: the right hand grasps a cube and carries it into the bowl, the left
    hand approaches and touches a second object, two more objects stand on the table, one stacked.
    Each mask comes with its crop (`Entity.crop`), as the entities decoded from Entity messages do."""
    from predrel_ros.core.entities import CONTAINER, LEFT_HAND, MANIPULATED_OBJECT, RIGHT_HAND, SURFACE, Entity

    sx, sy = width / 640.0, height / 480.0

    def entity(track_id, role, x, y, w, h, holes=()):
        x, y, w, h = int(x * sx), int(y * sy), max(int(w * sx), 1), max(int(h * sy), 1)
        mask = np.zeros((height, width), bool)
        mask[y:y + h, x:x + w] = True
        for hx, hy, hw, hh in holes:
            mask[int(hy * sy):int((hy + hh) * sy), int(hx * sx):int((hx + hw) * sx)] = False
        crop = (x, y, min(x + w, width) - x, min(y + h, height) - y)    # as an Entity.msg's RLE gives it
        return Entity(id=track_id, label=role, role=role, box=[x, y, x + w - 1, y + h - 1], mask=mask, crop=crop,
                      centroid=[x + w / 2.0, y + h / 2.0], score=0.9, track_quality=0.95, mask_quality=0.9)

    scene = []
    for t in range(frames):
        phase = (t % 150) / 150.0
        # right hand: approach the cube (0-0.3), carry it up and right (0.3-0.7), lower it into the bowl
        cube_x, cube_y = 120.0, 340.0
        if phase < 0.3:
            hand_x, hand_y = 40 + phase / 0.3 * 80, 300.0
        else:
            carry = min((phase - 0.3) / 0.4, 1.0)
            cube_x, cube_y = 120 + carry * 330, 340 - 120 * np.sin(np.pi * carry) + 10 * carry
            hand_x, hand_y = cube_x, cube_y - 40
        left_x = 560 - 120 * min(phase / 0.5, 1.0)
        bowl = (420, 330, 110, 70)
        inside = cube_x > 430 and cube_y > 340
        scene.append([
            entity(1, RIGHT_HAND, hand_x, hand_y, 40, 40),
            entity(2, LEFT_HAND, left_x, 260, 40, 40),
            entity(3, MANIPULATED_OBJECT, cube_x, cube_y, 40, 40),
            entity(4, MANIPULATED_OBJECT, 400, 300, 30, 40),
            entity(5, MANIPULATED_OBJECT, 220, 350, 50, 50),
            entity(6, MANIPULATED_OBJECT, 230, 310, 30, 40),
            entity(7, CONTAINER, *bowl, holes=[(cube_x, cube_y, 40, 40)] if inside else ()),
            entity(8, SURFACE, 0, 400, 640, 80),
        ])
    return scene


def run(args: argparse.Namespace) -> dict:
    import cv2

    from predrel_ros.predicates import PredicateExtractor
    from predrel_ros.predicates.logic_rules import LogicMonitor
    from predrel_ros.reliability.rolling import RollingReliability
    from predrel_ros.reliability.trust import CLEAN_TWIN, TrustAssessor

    check_scene_arguments(args)
    scene = scripted_scene(args.frames, args.width, args.height)
    reference_extractor = PredicateExtractor()
    references = [reference_extractor.update(t, entities) for t, entities in enumerate(scene)]

    stages = {"extract_and_confidence": [], "rolling_metrics": [], "logic_rules": [], "trust": [],
              "core_frame": [], "full_frame": []}
    baseline = []
    estimates_per_frame = []
    clock = time.perf_counter
    for _ in range(args.repeats):
        extractor = PredicateExtractor()
        rolling = RollingReliability(window=args.window, mode="reference")
        monitor = LogicMonitor(rate_window=args.window)
        assessor = TrustAssessor(reference=CLEAN_TWIN)   # the rolling metrics compare with a reference
        for t, entities in enumerate(scene):
            start = clock()
            estimates = extractor.update(t, entities)
            extracted = clock()
            rolling.update(t, estimates, references[t])
            rolled = clock()
            monitor.update(t, estimates)
            checked = clock()
            assessor.assess(rolling.by_predicate(with_tpc=False), monitor.compute())
            end = clock()
            stages["extract_and_confidence"].append(extracted - start)
            stages["rolling_metrics"].append(rolled - extracted)
            stages["logic_rules"].append(checked - rolled)
            stages["trust"].append(end - checked)
            stages["core_frame"].append(rolled - start)
            stages["full_frame"].append(end - start)
            estimates_per_frame.append(len(estimates))
    for entities in scene:        # the baseline, in its own pass so that it does not evict the caches
        start = clock()
        for entity in entities:
            cv2.distanceTransform(np.equal(entity.mask, False).view(np.uint8), cv2.DIST_L2, cv2.DIST_MASK_5)
        baseline.append(clock() - start)
    core = summarize(stages["core_frame"])
    full = summarize(stages["full_frame"])
    naive = summarize(baseline)
    return {
        "entities": 8,
        "image": f"{args.width}x{args.height}",
        "frames": args.frames,
        "repeats": args.repeats,
        "rolling_window": args.window,
        "estimates_per_frame": float(np.median(estimates_per_frame)),
        "stages": {name: summarize(times) for name, times in stages.items()},
        "camera_period_ms": CAMERA_PERIOD_MS,
        "core_share_of_camera_period": core["median_ms"] / CAMERA_PERIOD_MS,
        "full_share_of_camera_period": full["median_ms"] / CAMERA_PERIOD_MS,
        "goal_ms": GOAL_MS,
        "core_meets_goal": core["median_ms"] < GOAL_MS,
        "baseline_full_frame_distance_transforms": naive,
        "core_over_baseline": core["median_ms"] / naive["median_ms"],
        "peak_rss_mb": peak_rss_mb(),
    }
