"""The predicate stage alone per frame, against issue 13's goals: `PredicateExtractor.update` with the
shipped `config/predicates.yaml`.

- scene: the core benchmark's scripted 8-entity scene (`core.scripted_scene`, 640x480 masks with
  their crops by default; goal <= 0.5 ms median), timed without depth (the 2D rules) and with a depth image and
  intrinsics (boundary-depth contact, enclosed contact, 3D dynamic relations): a floor receding with
  the image rows and each entity flat at its own depth.
- crowd: `--crowd` entities (default 100; goal <= 20 ms median) of random 10-40 px rectangles with
  fixed scores (`--seed`), drifting one pixel a frame, without depth, each frame built untimed (masks
  with their crops, as decoded from Entity messages); the
  config's `max_entities` (32) bounds what is evaluated, the rest is dropped and reported per frame.
- episodes (with `--data DIR`, a dataset of `predrel dataset generate`): the first `--episodes`
  episodes' ground-truth entities, with their depth images and intrinsics and without, one fresh
  extractor per episode, each frame read untimed: the stage on the masks a camera of that
  resolution gives (hands and containers of tens of thousands of pixels at 640x480, where the
  scripted scene's are small). No goal of its own; it tells what the scene's numbers mean there.
Each case runs `--repeats` passes of `--frames` frames on a fresh extractor (the episodes case one
pass over its frames); the first frames of a
pass (before the window fills) are timed too. Each case reports wall-clock times and, as `cpu`, this
process's CPU time per frame (all its threads): on a shared machine the wall times also count the
time other jobs held the cores, the CPU times much less so; the goals are judged on the wall times.
"""
from __future__ import annotations

import argparse
import time
from typing import Callable

import numpy as np

from predrel_ros.tools.benchmarks.core import scripted_scene
from predrel_ros.tools.benchmarks.report import peak_rss_mb, summarize

#: median goals per frame, ms
SCENE_GOAL_MS = 0.5
CROWD_GOAL_MS = 20.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--frames", type=int, default=60, help="frames per pass (default 60)")
    parser.add_argument("--repeats", type=int, default=3, help="passes per case (default 3)")
    parser.add_argument("--width", type=int, default=640, help="image width (default 640)")
    parser.add_argument("--height", type=int, default=480, help="image height (default 480)")
    parser.add_argument("--crowd", type=int, default=100, help="entities of the crowd case (default 100)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the crowd's rectangles and scores (default 0)")
    parser.add_argument("--data", help="also time a dataset's episodes (ground-truth entities, with and without depth)")
    parser.add_argument("--episodes", type=int, default=2, help="episodes of --data timed (default 2)")


def crowd(count: int, width: int, height: int, seed: int) -> Callable[[int], list]:
    """frame t -> `count` objects (two of them hands, one a container) as random rectangles with fixed
    scores, drifting one pixel a frame; built per frame (a whole crowd sequence of 640x480 masks would
    take gigabytes)."""
    from predrel_ros.core.entities import CONTAINER, LEFT_HAND, MANIPULATED_OBJECT, RIGHT_HAND, Entity

    rng = np.random.default_rng(seed)
    roles = [RIGHT_HAND, LEFT_HAND, CONTAINER] + [MANIPULATED_OBJECT] * max(count - 3, 0)
    sizes = rng.integers(10, 41, size=(count, 2))
    corners = rng.integers(0, (max(width - 41, 1), max(height - 41, 1)), size=(count, 2))
    scores = rng.uniform(0.3, 1.0, size=count)

    def frame(t: int) -> list:
        entities = []
        for i in range(count):
            (w, h), (x, y) = sizes[i], corners[i]
            x = min(x + t, width - w)
            mask = np.zeros((height, width), bool)
            mask[y:y + h, x:x + w] = True
            entities.append(Entity(id=i + 1, label=roles[i], role=roles[i], box=[x, y, x + w - 1, y + h - 1],
                                   mask=mask, crop=(x, y, w, h), score=float(scores[i])))
        return entities
    return frame


def scene_depth(entities: list, width: int, height: int) -> np.ndarray:
    """A floor receding with the rows (1.5 m at the top, 0.9 m at the bottom), each entity at its own depth."""
    rows = np.linspace(1.5, 0.9, height, dtype=np.float32)[:, None]
    depth = np.repeat(rows, width, axis=1)
    for entity in entities:
        if entity.role != "surface":
            depth[entity.mask] = 0.8 + 0.02 * entity.id
    return depth


def _shipped_config():
    from predrel_ros.core.package_files import config_path
    from predrel_ros.predicates import PredicateConfig

    return PredicateConfig.load(config_path("predicates.yaml"), section="predicates")


def _timed(extractor, t: int, entities: list, depth_m: np.ndarray | None, camera, times: list, cpu_times: list
           ) -> list:
    """`extractor.update` of one frame, its wall-clock and process CPU time appended to `times` and
    `cpu_times`; returns its estimates."""
    start, cpu_start = time.perf_counter(), time.process_time()
    estimates = extractor.update(t, entities, depth_m=depth_m, camera=camera)
    times.append(time.perf_counter() - start)
    cpu_times.append(time.process_time() - cpu_start)
    return estimates


def _time(frames: int, scene: Callable[[int], list], repeats: int, depth: Callable[[int], np.ndarray] | None = None,
          camera=None) -> tuple[dict, list[int], list[int]]:
    """Timings of `frames` frames (entities `scene(t)`, depth image `depth(t)`, both made before the
    clock starts; wall clock, and the process's CPU time as "cpu"), estimates and dropped entities per frame."""
    from predrel_ros.predicates import PredicateExtractor

    config = _shipped_config()
    times, cpu_times, estimates, dropped = [], [], [], []
    for _ in range(repeats):
        extractor = PredicateExtractor(config)
        for t in range(frames):
            entities = scene(t)
            depth_m = None if depth is None else depth(t)
            out = _timed(extractor, t, entities, depth_m, camera, times, cpu_times)
            estimates.append(len(out))
            dropped.append(len(extractor.dropped_entities))
    return {**summarize(times), "cpu": summarize(cpu_times)}, estimates, dropped


def _time_episodes(data: str, count: int) -> dict:
    """Timings of the first `count` episodes of the dataset `data`, ground-truth entities with
    depth and intrinsics (`with_depth`) and without (`without_depth`), and what they held."""
    from predrel_ros.core.errors import UserError
    from predrel_ros.predicates import PredicateExtractor
    from predrel_ros.sources.dataset import open_dataset

    episodes = open_dataset(data).episodes()[:count]      # UserError where `data` is no dataset
    config = _shipped_config()
    cases = {"with_depth": ([], []), "without_depth": ([], [])}
    entities_per_frame, sizes = [], set()
    for episode in episodes:
        extractors = {case: PredicateExtractor(config) for case in cases}
        for t, frame in enumerate(episode.frames()):
            if frame.entities is None:
                raise UserError(f"--data {data}: episode {episode.meta.name} has no ground-truth entities")
            entities_per_frame.append(len(frame.entities))
            sizes.add(f"{frame.rgb.shape[1]}x{frame.rgb.shape[0]}")
            for case, (times, cpu_times) in cases.items():
                depth = frame.depth if case == "with_depth" else None
                _timed(extractors[case], t, frame.entities, depth, frame.camera if depth is not None else None,
                       times, cpu_times)
    if not entities_per_frame:
        raise UserError(f"--data {data}: no episode with frames")
    return {"data": str(data), "episodes": len(episodes), "image": sorted(sizes),
            "entities_per_frame": float(np.mean(entities_per_frame)),
            **{case: {**summarize(times), "cpu": summarize(cpu_times)} for case, (times, cpu_times) in cases.items()}}


def run(args: argparse.Namespace) -> dict:
    from predrel_ros.core.errors import UserError
    from predrel_ros.core.frame import CameraIntrinsics

    if args.frames < 10 or args.repeats < 1 or args.width < 64 or args.height < 48 or args.crowd < 3 \
            or args.episodes < 1:
        raise UserError("need --frames >= 10, --repeats >= 1, --width >= 64, --height >= 48, --crowd >= 3, "
                        "--episodes >= 1")
    scene = scripted_scene(args.frames, args.width, args.height)
    depths = [scene_depth(entities, args.width, args.height) for entities in scene]
    focal = 0.8 * args.width
    camera = CameraIntrinsics(args.width, args.height, focal, focal, (args.width - 1) / 2, (args.height - 1) / 2)
    image_only, image_estimates, _ = _time(args.frames, scene.__getitem__, args.repeats)
    with_depth, depth_estimates, _ = _time(args.frames, scene.__getitem__, args.repeats, depths.__getitem__, camera)
    crowded, crowd_estimates, crowd_dropped = _time(
        args.frames, crowd(args.crowd, args.width, args.height, args.seed), args.repeats)
    return {
        "image": f"{args.width}x{args.height}",
        "frames": args.frames,
        "repeats": args.repeats,
        "scene": {"entities": 8, "estimates_per_frame": float(np.median(image_estimates)),
                  "without_depth": image_only, "with_depth": with_depth,
                  "with_depth_estimates_per_frame": float(np.median(depth_estimates)),
                  "goal_ms": SCENE_GOAL_MS, "meets_goal_without_depth": image_only["median_ms"] <= SCENE_GOAL_MS,
                  "meets_goal_with_depth": with_depth["median_ms"] <= SCENE_GOAL_MS},
        "crowd": {"entities": args.crowd, "seed": args.seed, "estimates_per_frame": float(np.median(crowd_estimates)),
                  "dropped_per_frame": float(np.median(crowd_dropped)), "per_frame": crowded,
                  "goal_ms": CROWD_GOAL_MS, "meets_goal": crowded["median_ms"] <= CROWD_GOAL_MS},
        **({"episodes": _time_episodes(args.data, args.episodes)} if args.data else {}),
        "peak_rss_mb": peak_rss_mb(),
    }
