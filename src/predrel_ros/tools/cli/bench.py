"""Measure speed and memory of one part of the product; results are written to a JSON file.

Each target repeats its measurement, reports medians and p95 and, where it makes sense, the ratio to
a baseline measured in the same run (these machines are shared and noisy).
"""
from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path

from predrel_ros.tools.benchmarks import TARGETS
from predrel_ros.tools.benchmarks.report import write_result

EXAMPLES = """examples:
  predrel bench core                       predicate extraction + confidence + rolling metrics
  predrel bench core --out results.json    choose the result file
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="target", metavar="TARGET", required=True)
    for name, (module_name, help_text) in TARGETS.items():
        module = importlib.import_module(module_name)
        target = sub.add_parser(name, help=help_text, description=(module.__doc__ or help_text).strip(),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
        target.add_argument("--out", type=Path, default=None,
                            help="result file (default: bench-results/TARGET-<utc stamp>.json)")
        module.add_arguments(target)
        target.set_defaults(_run=module.run)


def main(args: argparse.Namespace) -> int:
    result = args._run(args)
    path = write_result(args.target, result, args.out)
    json.dump(result, sys.stdout, indent=2, sort_keys=True)
    print(f"\nwritten to {path}")
    return 0
