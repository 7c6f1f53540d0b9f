"""What the replay and perception nodes cost on top of the libraries they wrap (`predrel bench nodes`).

One process, one SingleThreadedExecutor, real DDS: a replay_node plays a synthetic 320x240 bag (RGB,
depth, camera info, ground-truth entities with masks) paced by the degraded perception_node's
entities (rate 0), with a subscriber on every twin image, so every message is built and sent.

- replay: seconds per frame to degrade and publish the clean and degraded twins (image, depth,
  camera info, FrameInfo) plus the ground truth, per schedule; baseline in the same run: one bare
  `numpy_to_image` + `publish` of a 320x240 rgb8 image to one subscriber.
- perception: per frame, the worker's time outside `Perceiver.process` (conversions, detection
  noise, EntityArray, publish) and the receive-to-publish latency minus inference (adds the
  executor callbacks: validation, synchronisation, FrameInfo matching, hand-off to the worker).

The model is the embedded default model when installed, else the default architecture with random
weights (inference time is the model's, the node overhead does not depend on the weights). The
nodes are timed by ros/run/node_probes.py's `time_replay_and_perception`.
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np

from predrel_ros.tools.benchmarks.report import peak_rss_mb, summarize

WIDTH, HEIGHT = 320, 240


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--frames", type=int, default=120, help="frames per schedule (default: %(default)s)")
    parser.add_argument("--schedules", nargs="+", default=["none", "blur:3", "detection_noise:3"],
                        help="degradation schedules of the degraded twin (default: %(default)s)")
    parser.add_argument("--model", default=None, help="model folder (default: the embedded model, else a stand-in)")


def _synthetic_bag(path: Path, frames: int) -> Path:
    from predrel_ros.core.entities import Entity
    from predrel_ros.core.frame import CameraIntrinsics, Frame
    from predrel_ros.sources.bag import write_bag

    rng = np.random.default_rng(0)
    camera = CameraIntrinsics(WIDTH, HEIGHT, 300.0, 300.0, WIDTH / 2, HEIGHT / 2)

    def entity(k: int, t: int) -> Entity:
        x, y = 20 + 50 * k + t % 20, 60 + 10 * k
        mask = np.zeros((HEIGHT, WIDTH), bool)
        mask[y:y + 40, x:x + 30] = True
        return Entity(id=k + 1, label="cube", role="manipulated_object", box=np.array([x, y, x + 30, y + 40], float),
                      mask=mask, frame_index=t)
    base = rng.integers(0, 256, (HEIGHT, WIDTH, 3), dtype=np.uint8)
    return write_bag(path, (Frame(index=t, stamp_ns=10**9 + t * 33_333_333, rgb=np.roll(base, t, axis=1),
                                  depth=np.full((HEIGHT, WIDTH), 1.2, np.float32), camera=camera,
                                  entities=[entity(k, t) for k in range(5)]) for t in range(frames)))


def _schedule_row(schedule: str, times) -> dict:
    """The summaries of one schedule's `ReplayPerceptionTimes`; the perception node's overhead is
    its times minus inference, frame by frame."""
    n = min(len(times.receive_to_publish), len(times.inference))
    return {"schedule": schedule, "frames_published": times.frames_published, "entity_arrays": times.entity_arrays,
            "replay_frame": summarize(times.replay_frame),
            "perception_inference": summarize(times.inference),
            "perception_worker_outside_perceiver": summarize(np.subtract(times.worker[:n], times.inference[:n])),
            "perception_receive_to_publish_minus_inference": summarize(
                np.subtract(times.receive_to_publish[:n], times.inference[:n]))}


def run(args: argparse.Namespace) -> dict:
    from predrel_ros.core.errors import UserError
    from predrel_ros.perception.config import DEFAULT_MODEL_DIR
    from predrel_ros.ros.run.node_probes import time_replay_and_perception
    from predrel_ros.tools.benchmarks.perception import _stand_in_model

    if args.frames < 10:
        raise UserError("--frames must be at least 10")
    with tempfile.TemporaryDirectory(prefix="predrel-bench-nodes-") as scratch:
        scratch = Path(scratch)
        bag = _synthetic_bag(scratch / "bag", args.frames)
        given = args.model or (DEFAULT_MODEL_DIR if (DEFAULT_MODEL_DIR / "model.onnx").is_file() else None)
        model = {"path": str(given), "weights": "trained"} if given else _stand_in_model(
            scratch / "model", HEIGHT, WIDTH)
        model_dir = Path(given) if given else scratch / "model"
        publish_seconds, passes = time_replay_and_perception(bag, model_dir, args.schedules, args.frames, WIDTH,
                                                             HEIGHT)
    baseline = summarize(publish_seconds)
    rows = [_schedule_row(schedule, times) for schedule, times in zip(args.schedules, passes)]
    for row in rows:
        row["replay_frame_ratio_to_bare_image_publish"] = round(
            row["replay_frame"]["median_ms"] / baseline["median_ms"], 2)
    return {"frame": f"{WIDTH}x{HEIGHT}", "model": model, "bare_image_publish": baseline, "results": rows,
            "peak_rss_mb": round(peak_rss_mb(), 1)}
