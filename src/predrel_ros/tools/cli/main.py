"""The `predrel` command.

Each subcommand lives in the module of its concept and exposes `add_arguments(parser)` and
`main(args) -> int`; those modules import heavy dependencies (torch, mujoco, rclpy) inside `main`
only, so `predrel --help` stays fast. Exit codes: 0 success, 1 failure, 2 usage error.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from predrel_ros import __version__
from predrel_ros.core.errors import UserError

#: subcommand -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "action": ("predrel_ros.tools.cli.action",
               "train and evaluate the manipulation-primitive recognizer (accuracy, macro-F1, confusion)"),
    "bench": ("predrel_ros.tools.cli.bench", "measure speed and memory; results go to a JSON file"),
    "dataset": ("predrel_ros.tools.cli.dataset",
                "generate the controlled manipulation set (MuJoCo) and count its predicates"),
    "demo": ("predrel_ros.tools.cli.demo",
             "replay a controlled episode through clean and degraded pipelines: live dashboard, summary, plot"),
    "eval": ("predrel_ros.tools.cli.eval",
             "degradation sweep on a dataset or bags: reliability metrics, paper tables, plots, HTML report"),
    "detect": ("predrel_ros.tools.cli.detect",
               "detect, segment and track entities in a video, bag or folder; JSON + overlays per frame"),
    "profile": ("predrel_ros.tools.cli.profile",
                "measure the clean profile (confidence, TPC-S, UNK, violations, calibration) for reference-free trust"),
    "run": ("predrel_ros.tools.cli.run",
            "start the nodes of a run file as processes (the graph a launch file starts), stop them together"),
    "track-eval": ("predrel_ros.tools.cli.track_eval",
                   "tracker IDF1 and identity switches on controlled episodes, clean and degraded"),
    "train": ("predrel_ros.tools.cli.train",
              "train, export and evaluate the default instance-segmentation model"),
    "degrade": ("predrel_ros.tools.cli.degrade",
                "apply synthetic degradations (blur, occlusion, ...) to images or videos; preview sheet"),
    "transport-check": ("predrel_ros.tools.cli.transport_check",
                        "check that images and predicates cross DDS between processes intact; latency"),
}

EPILOG = """examples:
  predrel bench core                      time predicate extraction + metrics per frame
  predrel <command> --help                details and examples of one command
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="predrel", description="Visual manipulation predicates and their reliability.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"predrel {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (module_name, help_text) in COMMANDS.items():
        module = importlib.import_module(module_name)
        command = sub.add_parser(name, help=help_text, description=(module.__doc__ or help_text).strip(),
                                 epilog=getattr(module, "EXAMPLES", None),
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
