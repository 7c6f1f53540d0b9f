"""The `predrel` command.

Each subcommand is the module predrel_ros.tools.cli.<subcommand> (dashes as underscores), which
exposes `add_arguments(parser)`, `main(args) -> int` and `EXAMPLES`, and whose docstring is the
subcommand's description; the logic lives in the modules of its concept. Command modules import
heavy dependencies (torch, mujoco, rclpy and the ROS subtree) inside `main` only, so `predrel --help`
stays fast. Exit codes: 0 success, 1 failure, 2 usage error.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from predrel_ros import __version__
from predrel_ros.core.errors import UserError

#: subcommand -> one-line help; its module is `command_module(subcommand)`
COMMANDS: dict[str, str] = {
    "action": "train and evaluate the manipulation-primitive recognizer (accuracy, macro-F1, confusion)",
    "bench": "measure speed and memory; results go to a JSON file",
    "dataset": "generate the controlled manipulation set (MuJoCo), import robot bags as a dataset, count predicates",
    "depth-eval": "model-free RGB-D objects on controlled episodes with sensor-noise depth: recall, surface, ms",
    "demo": "replay a controlled episode through clean and degraded pipelines: live dashboard, summary, plot",
    "eval": "degradation sweep on a dataset or bags: reliability metrics, paper tables, plots, HTML report",
    "detect": "detect, segment and track entities in a video, bag or folder; JSON + overlays per frame",
    "profile": "measure the clean profile (confidence, TPC-S, UNK, violations, calibration) for reference-free trust",
    "run": "start the nodes of a run file as processes (the graph a launch file starts), stop them together",
    "trust": "fit and judge the trust estimator (expected agreement per group without a reference) on eval runs",
    "track-eval": "tracker IDF1 and identity switches on controlled episodes, clean and degraded",
    "train": "train, export and evaluate the default instance-segmentation model",
    "degrade": "apply synthetic degradations (blur, occlusion, ...) to images or videos; preview sheet",
    "transport-check": "check that images and predicates cross DDS between processes intact; latency",
}

EPILOG = """examples:
  predrel bench core                      time predicate extraction + metrics per frame
  predrel <command> --help                details and examples of one command
"""


def command_module(name: str) -> str:
    return "predrel_ros.tools.cli." + name.replace("-", "_")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="predrel", description="Visual manipulation predicates and their reliability.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"predrel {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, help_text in COMMANDS.items():
        module = importlib.import_module(command_module(name))
        command = sub.add_parser(name, help=help_text, description=(module.__doc__ or help_text).strip(),
                                 epilog=module.EXAMPLES,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
        module.add_arguments(command)
        command.set_defaults(_main=module.main)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args._main(args) or 0)
    except UserError as error:
        print(f"predrel {args.command}: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"predrel {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
