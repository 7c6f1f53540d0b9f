"""The demo: a controlled episode through clean and degraded pipelines, watched live.

1. Generates a controlled-set episode (MuJoCo, exact ground truth) as a rosbag2 MCAP bag, once:
   it is cached under --cache-dir, keyed by the generator's code, its settings and the message
   definitions, so a code change that alters the episode regenerates it and nothing else does.
2. Starts config/demo.run.yaml with `predrel run`'s runner: the replay node plays the episode once
   per severity (the degraded twin under a severity sweep, the clean twin untouched), perception ->
   predicates in each namespace, the reliability node compares degraded with clean (clean_twin), a
   second one judges the degraded predicates without reference (self, as a robot has to: against
   a clean profile of the model, see below), the action node recognises the primitive from the
   degraded predicates and their reference-free trust, and the dashboard shows it live (per-group
   trust, degradation, action against ground truth, counters).
3. At the end the dashboard writes OUT/summary.json (per severity: agreement and PRS per predicate group, trust
   level counts, action accuracy, frame accounting) and OUT/sweep.png, and this command prints the
   table. Needs no camera, GPU or download.

The reference-free node needs to know how clean data of the setup looks (`reliability.clean_profile`):
`demo_profile` measures it once per model, with the perception and predicate configs the nodes use,
on other generated episodes of the demo's kind (never the demo episode itself), and caches it.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from predrel_ros.core.errors import UserError
from predrel_ros.degradations.table import ALL_KINDS, SEVERITIES
from predrel_ros.tools.demo import (
    DEFAULT_FRAMES,
    RUN_FILE,
    TEMPLATE,
    default_cache_dir,
    demo_episode,
    demo_profile,
    format_summary,
    sweep_schedule,
)

EXAMPLES = """examples:
  predrel demo                                   occlusion sweep 0..5, live dashboard, summary + plot
  predrel demo --kinds blur,low_resolution       other degradations, one pass per kind and severity
  predrel demo --model runs/train/model.onnx     perception with your own model
  predrel demo --out /tmp/demo --display lines   periodic lines instead of a redrawn screen
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--kinds", default="occlusion",
                        help="degradation kinds to sweep, comma-separated (default occlusion); each kind plays "
                             "the episode once per severity 0..5")
    parser.add_argument("--frames", type=int, default=DEFAULT_FRAMES,
                        help=f"frames of the demo episode (default {DEFAULT_FRAMES}, "
                             f"{DEFAULT_FRAMES / 30:g} s at 30 fps)")
    parser.add_argument("--model", default="",
                        help="perception model (directory or .onnx); default: the package's default model")
    parser.add_argument("--out", type=Path, default=Path("demo-results"),
                        help="folder of summary.json, sweep.png and the node logs (default demo-results/)")
    parser.add_argument("--cache-dir", type=Path, default=None,
                        help="where the generated episode is kept (default ~/.cache/predrel/demo)")
    parser.add_argument("--regenerate", action="store_true",
                        help="generate the episode and measure the clean profile even if they are cached")
    parser.add_argument("--display", choices=("auto", "screen", "lines"), default="auto",
                        help="dashboard: redrawn screen on a terminal (auto), or periodic lines")
    parser.add_argument("--rate", type=float, default=0.0,
                        help="replay speed factor; 0 (default) = as fast as the degraded pipeline keeps up")


def main(args: argparse.Namespace) -> int:
    from predrel_ros.core.package_files import config_file
    from predrel_ros.ros.run.run_file import load_run_file
    from predrel_ros.ros.run.runner import run_nodes

    kinds = [kind.strip() for kind in args.kinds.split(",") if kind.strip()]
    unknown = [kind for kind in kinds if kind not in ALL_KINDS]
    if not kinds or unknown:
        raise UserError(f"--kinds must name some of {', '.join(ALL_KINDS)}; got {args.kinds!r}")
    if args.frames < 24:
        raise UserError(f"--frames must be at least 24 (an episode holds its primitives), got {args.frames}")
    if args.rate < 0:
        raise UserError(f"--rate must be >= 0, got {args.rate}")
    start = time.monotonic()
    cache_dir = args.cache_dir or default_cache_dir()
    bag = demo_episode(cache_dir, args.frames, regenerate=args.regenerate)
    profile = demo_profile(cache_dir, args.model, args.frames, regenerate=args.regenerate)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    summary_path = out / "summary.json"
    summary_path.unlink(missing_ok=True)
    passes = len(kinds) * len(SEVERITIES)
    run = load_run_file(config_file(RUN_FILE), {
        "bag": str(bag), "schedule": sweep_schedule(kinds, args.frames), "passes": str(passes),
        "model": args.model, "clean_profile": str(profile), "summary_dir": str(out), "display": args.display,
        "rate": str(args.rate),
        "title": f"predrel demo: {TEMPLATE} episode, {', '.join(kinds)} severities 0-5"})
    print(f"demo: {passes} passes of {args.frames} frames ({', '.join(kinds)} x severities 0..5); "
          f"logs in {out / 'logs'}", file=sys.stderr)
    status = run_nodes(run, out / "logs")
    if not summary_path.is_file():
        print(f"demo: no summary was written (run status {status}); see the logs in {out / 'logs'}", file=sys.stderr)
        return status or 1
    summary = json.loads(summary_path.read_text())
    print()
    print(format_summary(summary))
    accounting = summary["frame_accounting"]["dashboard"]
    print(f"\nframes: {accounting['degraded_predicate_frames']} degraded / {accounting['clean_predicate_frames']} "
          f"clean predicate frames, {accounting['matched']} matched; per node: {summary_path} (frame_accounting)")
    print(f"summary: {summary_path}\nplot:    {out / 'sweep.png'}\nwall time: {time.monotonic() - start:.0f} s")
    return status
