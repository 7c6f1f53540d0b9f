"""Measure a clean profile: what the predicates look like on clean data, for reference-free trust.

The reliability node judges a live stream (reference_mode self) by whether it is worse than clean
data gets: per predicate the lowest TPC-S, confidence and expected agreement and the highest UNK and
logic-rule violation rates any clean window showed, and the calibration of confidence against ground
truth (`reliability.trust.CleanProfile`, measured by `reliability.clean_profile`). This command runs
the predicate extractor over the clean episodes of a dataset folder, exactly as the predicate node
would, with entities from the ground truth (`--source oracle`) or from the perception model the robot
runs (`--source perception`; its entities are associated with the ground-truth entities per frame
for the calibration), and writes the profile (JSON or YAML by suffix) for the node's `clean_profile`
parameter. Measure it on data of the same setup as the robot (camera, model, scenes, predicate
config), with the node's window.
"""
from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import Iterable

EXAMPLES = """examples:
  predrel profile --data data/controlled --split val --out clean_profile.json
  predrel profile --data data/controlled --split val --source perception --out perception_profile.json
  ros2 run predrel_ros reliability_node --ros-args -p clean_profile:=$PWD/clean_profile.json
"""

#: frame indices between two chained episodes: the logic rules (memory 15 frames) never look across
EPISODE_GAP = 1000


def dataset_profile(episodes: Iterable, source, extractor, n_bins: int = 10, progress: bool = False,
                    window: int = 30, quantile: float = 1.0, depth: bool = False):
    """The clean profile of `extractor` on the entities `source` gives for each episode
    (`downstream.streams` entity sources), calibrated against the episodes' ground-truth predicates,
    over rolling windows of `window` frames (`clean_profile.build_clean_profile`). Episodes are
    chained with increasing frame indices and a gap, each starting a new sequence. depth: the
    extractor gets each frame's depth image and intrinsics, as a predicate_node with use_depth."""
    from predrel_ros.core.errors import UserError
    from predrel_ros.reliability.clean_profile import CleanFrame, build_clean_profile

    episodes = list(episodes)
    if progress:
        from tqdm import tqdm
        episodes = tqdm(episodes, desc=f"clean profile ({source.name})", unit="episode")

    def rows():
        offset = 0
        for episode in episodes:
            source.reset()
            extractor.reset()
            last = offset
            for frame in episode.frames(images=source.needs_images or depth):
                if frame.predicates is None:
                    raise UserError(f"{episode.directory}: frame {frame.index} has no ground-truth predicates; the "
                                    f"profile's calibration needs them (a controlled-set dataset has them)")
                index = offset + frame.index
                references = [dataclasses.replace(p, frame_index=index) for p in frame.predicates]
                entities = source.entities(frame)
                estimates = extractor.update(index, entities, depth_m=frame.depth if depth else None,
                                             camera=frame.camera if depth else None)
                yield CleanFrame(index, estimates, references, entities, frame.entities)
                last = index
            offset = last + EPISODE_GAP
    config = extractor.config
    return build_clean_profile(rows(), n_bins=n_bins, memory=config.event_memory, window=config.window,
                               rolling_window=window, quantile=quantile, track_memory=config.track_memory,
                               min_visibility=config.confidence.min_visibility)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", type=Path, required=True, help="dataset folder (predrel dataset generate)")
    parser.add_argument("--out", type=Path, required=True, help="profile file to write (.json or .yaml)")
    parser.add_argument("--split", choices=("train", "val", "test", "all"), default="val",
                        help="clean episodes to measure (default: val)")
    parser.add_argument("--source", choices=("oracle", "perception"), default="oracle",
                        help="entities: ground truth (oracle) or the perception model's")
    parser.add_argument("--perception-config", help="perception YAML for --source perception (default model otherwise)")
    parser.add_argument("--predicate-config", type=Path,
                        help="predicate YAML (section 'predicates'); default: config/predicates.yaml's values")
    parser.add_argument("--depth", action="store_true",
                        help="predicates from the frames' depth and intrinsics too, as a predicate_node with use_depth")
    parser.add_argument("--bins", type=int, default=10, help="calibration bins on [0, 1] (default 10)")
    parser.add_argument("--window", type=int, default=30,
                        help="rolling window in frames: the reliability node's `window` (default 30)")
    parser.add_argument("--quantile", type=float, default=1.0,
                        help="1.0 (default): each baseline is the worst clean window; 0.99 leaves the worst 1 %% out")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def main(args: argparse.Namespace) -> int:
    from predrel_ros.action.streams import make_source
    from predrel_ros.core.errors import UserError
    from predrel_ros.predicates import PredicateConfig, PredicateExtractor
    from predrel_ros.sources.dataset import open_dataset

    if args.bins < 1:
        raise UserError(f"--bins must be >= 1, got {args.bins}")
    if args.window < 2:
        raise UserError(f"--window must be >= 2 frames, got {args.window}")
    if not 0.5 <= args.quantile <= 1.0:
        raise UserError(f"--quantile must lie in [0.5, 1], got {args.quantile}")
    if args.out.suffix not in (".json", ".yaml", ".yml"):
        raise UserError(f"--out must end in .json, .yaml or .yml, got {args.out}")
    config = None
    if args.predicate_config is not None:
        try:
            config = PredicateConfig.load(args.predicate_config, section="predicates")
        except (OSError, ValueError) as error:
            raise UserError(f"--predicate-config: {error}") from None
    episodes = open_dataset(args.data).episodes(None if args.split == "all" else args.split)
    if not episodes:
        raise UserError(f"{args.data} has no episodes in split {args.split!r}")
    source = make_source(args.source, args.perception_config)
    profile = dataset_profile(episodes, source, PredicateExtractor(config), args.bins, progress=not args.no_progress,
                              window=args.window, quantile=args.quantile, depth=args.depth)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    profile.save(args.out)
    print(format_profile(profile.baselines.items()))
    print(f"wrote {args.out} ({len(episodes)} {args.split} episodes, source {args.source})")
    return 0


def format_profile(baselines: Iterable) -> str:
    """One line per (predicate, baseline) pair: its clean bounds (the worst clean window) and the
    calibration's mean agreement with ground truth."""
    lines = [f"{'predicate':18s} {'confidence>=':>12s} {'TPC-S>=':>8s} {'UNK<=':>6s} {'violations<=':>12s} "
             f"{'exp.agr>=':>9s} {'agree>=':>8s} {'mean agr':>8s} {'samples':>7s}"]
    for name, baseline in baselines:
        calibration = baseline.calibration
        mean = f"{calibration.agreement_rate:8.3f}" if calibration is not None else f"{'-':>8s}"
        samples = calibration.samples if calibration is not None else 0
        lines.append(f"{name:18s} {baseline.confidence:12.3f} {baseline.tpc_s:8.3f} {baseline.unk_rate:6.3f} "
                     f"{baseline.violation_rate:12.3f} {baseline.expected_agreement:9.3f} {baseline.agreement:8.3f} "
                     f"{mean} {samples:7d}")
    return "\n".join(lines)
