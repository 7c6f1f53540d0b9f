"""Run perception (detection, segmentation, tracking) over a video, a bag, an episode folder, a
dataset or an image folder; write entity JSON and overlay images per frame.

Output in OUT: entities/NNNNNN.json (one document per frame: entities with ids, labels, roles,
boxes, run-length masks, scores, visibility, track quality, 3D points when the source has depth
and intrinsics), overlays/NNNNNN.png (masks, boxes, ids, labels), summary.json (backend, model,
frames, entities per label, per-frame time median and p95). A dataset root (manifest.json) gets
one such folder per episode, OUT/<episode>/.
"""
from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections import Counter
from pathlib import Path

from predrel_ros.sources.bag import add_camera_topic_arguments, camera_topics_from_args

EXAMPLES = """examples:
  predrel detect --input demo.mp4 --out runs/demo
  predrel detect --input data/controlled/episodes/ep0003 --out runs/ep0003 --backend onnxruntime
  predrel detect --input run.mcap --out runs/bag --model my_yolo11n-seg.onnx --config perception.yaml
  predrel detect --input robot_bag --out runs/robot --image-topic /head_camera/rgb/image_raw/compressed
  predrel detect --input data/controlled --split test --out runs/test --no-overlays
  predrel detect --input photos/ --out runs/photos --score-threshold 0.4 --max-frames 50
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--input", required=True, type=Path,
                        help="video file, rosbag2 bag (.mcap/.db3 or folder), episode folder, dataset root "
                             "or image folder")
    parser.add_argument("--out", required=True, type=Path, help="output folder")
    parser.add_argument("--model", default=None,
                        help="model file or folder (default: the config's, else the embedded default model)")
    parser.add_argument("--config", type=Path, default=None,
                        help="perception settings (YAML or JSON; a top-level 'perception:' section is used "
                             "when present)")
    parser.add_argument("--backend", choices=("auto", "tensorrt", "onnxruntime", "pytorch"), default=None,
                        help="inference backend (default: the config's, else auto)")
    parser.add_argument("--device", default=None, help="auto, cpu or cuda[:N] (onnxruntime / pytorch)")
    parser.add_argument("--score-threshold", type=float, default=None, help="detection score threshold")
    parser.add_argument("--split", choices=("train", "val", "test"), default=None,
                        help="with a dataset root: only this split")
    parser.add_argument("--max-frames", type=int, default=None, help="stop after this many frames per sequence")
    parser.add_argument("--fps", type=float, default=None, help="frame rate for image folders / override a video's")
    parser.add_argument("--no-overlays", action="store_true", help="write entity JSON only")
    add_camera_topic_arguments(parser)


def load_perception_config(path: Path | None, overrides: dict):
    """PerceptionConfig from an optional file plus dotted-key overrides ({"backend.name": "onnxruntime"})."""
    from predrel_ros.core.config_io import read_data
    from predrel_ros.core.errors import UserError
    from predrel_ros.perception.config import PerceptionConfig

    data: dict = {}
    if path is not None:
        try:
            data = read_data(path) or {}
        except ValueError as error:
            raise UserError(str(error)) from None
        if not isinstance(data, dict):
            raise UserError(f"{path}: expected a mapping of perception settings")
        data = data.get("perception", data)
    for dotted, value in overrides.items():
        if value is None:
            continue
        node = data
        *parents, leaf = dotted.split(".")
        for key in parents:
            node = node.setdefault(key, {})
        node[leaf] = value
    try:
        return PerceptionConfig.from_dict(data)
    except ValueError as error:
        raise UserError(str(error)) from None


def sequences(path: Path, split: str | None, fps: float | None, topics=None):
    """(name, frames) pairs: one per episode of a dataset root, else the single source (a bag's
    camera topics: `topics`, a CameraTopics)."""
    from predrel_ros.sources.dataset import MANIFEST_FILE, open_dataset
    from predrel_ros.sources.open_source import open_frames

    if path.is_dir() and (path / MANIFEST_FILE).is_file():
        for episode in open_dataset(path).episodes(split):
            yield episode.meta.name, episode.frames()
    else:
        yield "", open_frames(path, fps=fps, topics=topics)


def main(args: argparse.Namespace) -> int:
    import cv2
    from tqdm import tqdm

    from predrel_ros.core.errors import UserError
    from predrel_ros.perception.entity_json import frame_to_json
    from predrel_ros.perception.overlay import draw_entities
    from predrel_ros.perception.perceiver import Perceiver
    from predrel_ros.tools.benchmarks.report import summarize

    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    if args.max_frames is not None and args.max_frames < 1:
        raise UserError("--max-frames must be at least 1")
    config = load_perception_config(args.config, {"model": args.model, "backend.name": args.backend,
                                                  "backend.device": args.device,
                                                  "decoder.score_threshold": args.score_threshold})
    totals = Counter()
    with Perceiver(config) as perceiver:
        for name, frames in sequences(args.input, args.split, args.fps, camera_topics_from_args(args)):
            out = args.out / name if name else args.out
            (out / "entities").mkdir(parents=True, exist_ok=True)
            if not args.no_overlays:
                (out / "overlays").mkdir(parents=True, exist_ok=True)
            perceiver.reset()
            seconds, labels, count = [], Counter(), 0
            for frame in tqdm(frames, desc=name or args.input.name, unit="frame", total=args.max_frames,
                              file=sys.stderr):
                start = time.perf_counter()
                entities = perceiver.process(frame.rgb, frame.index, depth=frame.depth,
                                             camera=frame.camera if frame.depth is not None else None,
                                             bgr=False)
                seconds.append(time.perf_counter() - start)
                height, width = frame.rgb.shape[:2]
                document = frame_to_json(entities, frame.index, width, height, frame.stamp_ns)
                (out / "entities" / f"{frame.index:06d}.json").write_text(json.dumps(document))
                if not args.no_overlays:
                    overlay = draw_entities(cv2.cvtColor(frame.rgb, cv2.COLOR_RGB2BGR), entities)
                    cv2.imwrite(str(out / "overlays" / f"{frame.index:06d}.png"), overlay)
                labels.update(e.label for e in entities if e.attributes.get("track_state") != "lost")
                count += 1
                if args.max_frames is not None and count >= args.max_frames:
                    break
            if count == 0:
                raise UserError(f"{args.input}{'/' + name if name else ''}: no frames")
            summary = {"input": str(args.input), "sequence": name, "frames": count,
                       "perception": perceiver.describe(), "config": config.to_dict(),
                       "detections_per_label": dict(labels), "frame_time": summarize(seconds),
                       "track_ids_issued": perceiver.tracker.ids_issued}
            (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str) + "\n")
            totals["frames"] += count
            totals["sequences"] += 1
            print(f"{name or args.input}: {count} frames, median {summary['frame_time']['median_ms']:.1f} ms "
                  f"per frame -> {out}")
    print(f"wrote {totals['frames']} frames of {totals['sequences']} sequence(s) to {args.out}")
    return 0

