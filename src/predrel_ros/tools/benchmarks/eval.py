"""Evaluator overhead against perception time (`predrel bench eval`): a cold sweep (fresh detection
cache) over the first N test episodes, with the phase times of every worker.

Perception = the detector (network + decoding) + tracking and entity assembly. Everything else is the
evaluator's overhead: reading the episode, synthesising the degradations, predicate extraction,
associating entities with the reference, metrics, the recognizer conditions, writing and the
aggregation / plots / report of the main process. The goal is overhead < 10 % of perception time.
Threshold selection and recognizer fitting are one-off set-up and reported apart (here they are
skipped: the thresholds come from --predicate-config and the recognizer is the packaged one).

Throughput (frames per second of the sweep's wall time; the cluster's start is not in it) compares
parallel set-ups of the same data: `--scheduler local:1` against `--scheduler local:2` (Dask workers,
docs/fleet-evaluation.md), or `--jobs 1` against `--jobs 2`.
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", type=Path, required=True, help="dataset folder with a test split")
    parser.add_argument("--episodes", type=int, default=2, help="test episodes (default 2)")
    parser.add_argument("--perception", default="default", help="default, or a model (.onnx or folder)")
    parser.add_argument("--predicate-config", default=None,
                        help="predicate YAML (default: config/predicates.yaml of the checkout, else the defaults)")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--scheduler", default=None,
                        help="a Dask cluster instead of --jobs: local:N (N local workers) or a scheduler address")


def run(args: argparse.Namespace) -> dict:
    from predrel_ros.core.config_io import write_data
    from predrel_ros.core.errors import UserError
    from predrel_ros.predicates.config import PredicateConfig
    from predrel_ros.tools.evaluation.config import COMMITTED, EvaluationConfig
    from predrel_ros.tools.evaluation.sweep import run_sweep

    with tempfile.TemporaryDirectory(prefix="predrel-bench-eval-") as folder:
        predicates = args.predicate_config or str(write_data(Path(folder) / "predicates.yaml",
                                                             {"predicates": PredicateConfig().to_dict()}))
        try:
            config = EvaluationConfig(perception=args.perception, predicate_config=predicates, action_model=COMMITTED,
                                      jobs=args.jobs, max_episodes=args.episodes, scheduler=args.scheduler)
        except ValueError as error:
            raise UserError(str(error)) from None
        summary = run_sweep(config, args.data, Path(folder) / "out", cache_dir=Path(folder) / "cache", progress=False,
                            log=lambda message: None)
    timing = summary["timing"]
    perception = timing["perception_seconds"]
    per_frame = {phase: 1e3 * seconds / max(timing["test_frames"], 1) for phase, seconds in
                 timing["phases_seconds"].items()}
    return {"episodes": timing["test_episodes"], "frames": timing["test_frames"], "jobs": args.jobs,
            "scheduler": args.scheduler, "dask_workers": timing["dask_workers"],
            "throughput_frames_per_s": timing["test_frames"] / timing["sweep_wall_seconds"],
            "perception": args.perception, "perception_s": perception,
            "evaluator_overhead_s": timing["evaluator_overhead_seconds"],
            "overhead_share_of_perception": timing["overhead_share_of_perception"],
            "predicate_extraction_s": timing["predicate_extraction_seconds"],
            "overhead_without_predicate_extraction_s": timing["overhead_without_predicate_extraction_seconds"],
            "aggregation_and_outputs_s": timing["aggregation_and_outputs_seconds"],
            "phases_s": timing["phases_seconds"], "phases_ms_per_episode_frame": per_frame,
            "sweep_wall_s": timing["sweep_wall_seconds"], "conditions": 1 + 6 * 5}
