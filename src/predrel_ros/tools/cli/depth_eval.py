"""Score the model-free RGB-D objects (support plane, object clusters, roles from geometry) on controlled
episodes whose exact depth goes through the RGB-D sensor noise model: object recall at mask IoU 0.5,
surface-found rate, false objects per frame, milliseconds per frame (tools/evaluation/depth_objects.py)."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from predrel_ros.core.errors import UserError
from predrel_ros.perception.config import PerceptionConfig
from predrel_ros.sources.dataset import open_dataset
from predrel_ros.tools.evaluation.depth_objects import HAND_MODES, evaluate_depth_objects

EXAMPLES = """examples:
  predrel depth-eval --dataset data/rgbd                               every frame, depth alone
  predrel depth-eval --dataset data/rgbd --frame-step 5 --hands ground_truth --out depth-objects.json
  predrel depth-eval --dataset data/rgbd --hands ground_truth_coarse      hand masks as coarse as MediaPipe's
  predrel depth-eval --dataset data/rgbd --hands ground_truth_coarse --perception-config mine.yaml
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dataset", type=Path, required=True, help="controlled dataset folder (with depth)")
    parser.add_argument("--split", choices=("train", "val", "test"), default=None, help="split (default: all)")
    parser.add_argument("--frame-step", type=int, default=1, help="score every N-th frame (default: 1)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the depth noise (default: 0)")
    parser.add_argument("--hands", choices=HAND_MODES, default="none",
                        help="none: depth alone; ground_truth: hand pixels kept out, as a hand detector would; "
                             "ground_truth_coarse: through the hand-mask error model (a frame late, smoothed, "
                             "grown or shrunk and shifted by 1-3 px) first, as MediaPipe's masks are")
    parser.add_argument("--perception-config", type=Path, default=None,
                        help="perception YAML whose depth_objects section is scored, with its backend's threads "
                             "(section 'perception'; default: the package's defaults, as "
                             "config/perceiver_rgbd.yaml sets them)")
    parser.add_argument("--out", type=Path, default=None, help="also write the scores to this JSON file")


def main(args: argparse.Namespace) -> int:
    if args.frame_step < 1:
        raise UserError(f"--frame-step must be at least 1, got {args.frame_step}")
    dataset = open_dataset(args.dataset)
    perception = PerceptionConfig() if args.perception_config is None else \
        PerceptionConfig.load(args.perception_config, section="perception")
    config = None if args.perception_config is None else perception.depth_objects
    scores = evaluate_depth_objects(dataset.episodes(split=args.split), config=config, seed=args.seed,
                                    frame_step=args.frame_step, hands=args.hands,
                                    threads=perception.backend.num_threads)
    text = json.dumps(scores, indent=2, sort_keys=True)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")
    return 0
