"""Evaluate a perception stack on recorded data: the paper's predicate-reliability diagnosis for it.

For every degradation kind and severity: perception (the network once per image condition, cached on
disk), predicates with confidence, PRS / PDS / TPC / CWS / DIS, the downstream recognizer under the
paper's conditions, baselines and ablations (Table 7). Thresholds and confidence weights are selected
on the clean validation split and then fixed. Writes JSON and CSV of everything, Markdown tables in
the shapes of the paper's Tables 8-15, PNG plots and one HTML report. Runs without ROS, from a
dataset folder (splits), an episode folder, a rosbag2 bag or a folder of bags.
"""
from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from predrel_ros.sources.bag import add_camera_topic_arguments, camera_topics_from_args

EXAMPLES = """examples:
  predrel eval --data data/controlled --out runs/eval --jobs 2
  predrel eval --data data/controlled --out runs/eval-oracle --perception oracle
  predrel eval --data data/controlled --out runs/eval-s3 --kinds blur occlusion --severities 3
  predrel eval --data data/controlled --out runs/clean --perception oracle --kinds none --action-model none
  predrel eval --data run.mcap --out runs/bag --reference clean --predicate-config config/predicates.yaml \\
      --action-model none
  predrel eval --data data/controlled --out runs/mine --perception /models/best.onnx \\
      --perception-config my-perception.yaml
  predrel eval --data data/controlled --out runs/eval --scheduler local:4   (4 Dask workers on this machine)
  predrel eval --data /shared/data --out /shared/runs/eval --scheduler tcp://scheduler:8786
  predrel eval --data data/controlled --out runs/noisy --perception oracle --kinds none --depth-noise
                                                        (the predicates with a consumer depth camera's noise)
  predrel eval --rebuild runs/eval                      (tables, plots, report again from the saved sequences)

outputs in --out: report.html (everything on one page), tables.md (Tables 8-15 and the findings),
agreement.json (the clean condition's agreement by group, value, event and episode, and why it
disagrees; docs/predicates.md),
summary.json / summary.csv (every cell with std and 95 % CI), rows.csv (per episode), action.csv and
dis.csv (recognizer), plots/*.png, sequences/*.npz (the per-frame sequences every number comes
from), predicates.selected.yaml (reusable with --predicate-config), action-models/, timing.json,
cache/ (detections; delete it to force a cold run).
"""


def _kinds(values: list[str]) -> tuple[str, ...]:
    from predrel_ros.degradations import ALL_KINDS, KINDS
    names = [name for value in values for name in value.split(",") if name]
    if names == ["all"]:
        return KINDS
    if names == ["none"]:
        return ()
    unknown = [name for name in names if name not in ALL_KINDS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown kinds {unknown}; expected 'all', 'none' or some of "
                                         f"{list(ALL_KINDS)}")
    return tuple(names)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", type=Path,
                        help="dataset folder (with splits), episode folder, rosbag2 bag, or folder of bags")
    parser.add_argument("--out", type=Path, help="output folder (created)")
    parser.add_argument("--rebuild", type=Path, metavar="OUT",
                        help="rebuild tables, plots and the report of a finished run in OUT from its saved "
                             "sequences (no perception); the other options are ignored")
    parser.add_argument("--kinds", nargs="+", default=["all"],
                        help="degradation kinds (space or comma separated; default all; none: the clean "
                             "condition alone)")
    parser.add_argument("--severities", default="1-5",
                        help="severities, e.g. 0-5, 1-5, 3 or 1,3,5 (the clean condition always runs)")
    parser.add_argument("--reference", choices=("gt", "clean"), default="gt",
                        help="ground-truth predicates (default) or the clean pipeline's own predicates")
    parser.add_argument("--perception", default="default",
                        help="default (the embedded model), oracle (ground-truth entities), or a model "
                             "(.onnx file or model folder)")
    parser.add_argument("--perception-config", help="perception YAML (section 'perception') for the model")
    parser.add_argument("--predicate-config",
                        help="predicate YAML (section 'predicates') to use as is instead of selecting on val")
    parser.add_argument("--action-model", default="fit",
                        help="fit (on the clean train split of this pipeline; default), committed (the packaged "
                             "model), none, or a model file")
    parser.add_argument("--jobs", type=int, default=1, help="episodes evaluated in parallel (processes)")
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="evaluate on a Dask cluster instead of --jobs: a scheduler address (tcp://host:8786) "
                             "or local:N (N worker processes here, one thread each); --data, --out and --cache "
                             "must be paths the workers share (docs/fleet-evaluation.md)")
    parser.add_argument("--max-episodes", type=int, help="evaluate only the first N test episodes (a quick estimate)")
    parser.add_argument("--trust-profile", metavar="FILE",
                        help="clean profile (predrel profile) of the reference-free trust measured in trust.json "
                             "(default: none, absolute trust bounds and no expected agreement)")
    parser.add_argument("--trust-model", metavar="FILE",
                        help="trust estimator (predrel trust fit) measured in trust.json instead of the trust bounds")
    parser.add_argument("--trust-window", type=int, default=30,
                        help="rolling window (frames) of trust.json, as the reliability node's (default 30)")
    parser.add_argument("--seed", type=int, default=0, help="degradation seed; episode i of a split uses seed + i")
    parser.add_argument("--depth-noise", action="store_true",
                        help="run every depth image through the RGB-D sensor model (axial noise, disparity steps, "
                             "holes at edges; seeded by --seed) before perception and predicates")
    parser.add_argument("--cache", type=Path, help="detection cache folder (default OUT/cache)")
    parser.add_argument("--split", default="test",
                        help="split evaluated (default test; 'all': every episode, with thresholds and models "
                             "from files)")
    parser.add_argument("--selection-split", default="val", help="clean split for threshold selection (default val)")
    parser.add_argument("--train-split", default="train", help="clean split the recognizers are fitted on")
    parser.add_argument("--match-iou", type=float, default=0.3,
                        help="least box IoU for an evaluated entity to stand for a reference entity")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    add_camera_topic_arguments(parser)


def main(args: argparse.Namespace) -> int:
    from predrel_ros.core.errors import UserError
    from predrel_ros.tools.evaluation.config import EvaluationConfig, parse_severities
    from predrel_ros.tools.evaluation.sweep import rebuild_outputs, run_sweep

    if args.rebuild is not None:
        summary = rebuild_outputs(args.rebuild)
        _print_findings(summary)
        return 0
    if args.data is None or args.out is None:
        raise UserError("--data and --out are required (or --rebuild OUT)")
    try:
        config = EvaluationConfig(
            kinds=_kinds(args.kinds), severities=parse_severities(args.severities), reference=args.reference,
            perception=args.perception, perception_config=args.perception_config,
            predicate_config=args.predicate_config, seed=args.seed, match_iou=args.match_iou,
            test_split=args.split, selection_split=args.selection_split, train_split=args.train_split,
            action_model=args.action_model, jobs=args.jobs, max_episodes=args.max_episodes,
            scheduler=args.scheduler, trust_profile=args.trust_profile, trust_window=args.trust_window,
            trust_model=args.trust_model, depth_noise=args.depth_noise)
    except (ValueError, argparse.ArgumentTypeError) as error:
        raise UserError(str(error)) from None
    command = "predrel eval " + " ".join(shlex.quote(a) for a in sys.argv[2:]) if len(sys.argv) > 2 else ""
    summary = run_sweep(config, args.data, args.out, args.cache, progress=not args.no_progress, command=command,
                        camera=camera_topics_from_args(args))
    _print_findings(summary)
    return 0


def _print_findings(summary: dict) -> None:
    for finding in summary["findings"]:
        verdict = {True: "holds", False: "does not hold", None: "not testable here"}[finding["holds"]]
        print(f"{verdict}: {finding['finding']}")
