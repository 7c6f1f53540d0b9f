"""Generate, import and inspect datasets.

`generate` simulates scripted episodes of the controlled manipulation set (10 task templates over 5
scenario groups, MuJoCo scenes with exact ground truth), renders RGB and depth on the CPU and
writes them with ground-truth entities, predicates and primitives as rosbag2 MCAP bags and/or
dataset folders, split 70/15/15 by episode. `import` turns bags recorded on a robot into a dataset
folder, one episode per bag (`predrel_ros.sources.bag_import`; the camera topics found by type or
named with the same flags as `predrel detect`). `stats` counts predicate values and transitions per
scenario group.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from predrel_ros.core.errors import UserError
from predrel_ros.sources.bag import add_camera_topic_arguments, camera_topics_from_args
from predrel_ros.sources.dataset import SPLITS

EXAMPLES = """examples:
  predrel dataset generate --episodes 30 --seed 1 --out data/controlled
  predrel dataset generate --episodes 4 --seed 7 --out /tmp/tiny --size 160x120 --frames 60 --format folder
  predrel dataset generate --episodes 100 --seed 2 --out data/big --jobs 2 --templates insert,remove
  predrel dataset import robot_run1 robot_run2.mcap --out data/robot
  predrel dataset import kitchen_bag --out data/kitchen --image-topic /head_camera/rgb/image_raw/compressed
  predrel dataset stats data/controlled
  predrel dataset stats data/controlled --split test --json > stats.json

rendering uses MuJoCo's EGL backend when libEGL is present, else OSMesa; set MUJOCO_GL=egl|osmesa
to choose.
"""

#: the topics `import` names in its report, of those the bag's episode was read from
CAMERA_ROLES = ("color", "depth", "color_info")
FORMAT_CHOICES = {"mcap": ("mcap",), "sqlite3": ("sqlite3",), "folder": ("folder",), "both": ("mcap", "folder")}


def _size(text: str) -> tuple[int, int]:
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT such as 320x240, got {text!r}") from None
    if width <= 0 or height <= 0:
        raise argparse.ArgumentTypeError(f"image size must be positive, got {text!r}")
    return width, height


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="dataset_command", metavar="ACTION", required=True)
    generate = sub.add_parser("generate", help="simulate and write episodes",
                              description="Simulate, render and label episodes of the controlled set.",
                              epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    generate.add_argument("--episodes", type=int, required=True, help="number of episodes")
    generate.add_argument("--seed", type=int, required=True, help="dataset seed (same seed, same dataset)")
    generate.add_argument("--out", type=Path, required=True, help="new or empty output folder")
    generate.add_argument("--size", type=_size, default=(320, 240), help="image WIDTHxHEIGHT (default 320x240)")
    generate.add_argument("--fps", type=float, default=30.0, help="frame rate (default 30)")
    generate.add_argument("--frames", type=int, default=150, help="frames per episode (default 150)")
    generate.add_argument("--format", choices=sorted(FORMAT_CHOICES), default="both",
                          help="mcap bags, sqlite3 bags, dataset folders, or both mcap and folders (default)")
    generate.add_argument("--camera", choices=("front", "side"), default="front", help="viewpoint (default front)")
    generate.add_argument("--templates", default="",
                          help="comma-separated subset of the task templates (default: all)")
    generate.add_argument("--jobs", type=int, default=1, help="episodes generated in parallel (default 1)")
    generate.add_argument("--quiet", action="store_true", help="no progress bar")
    imported = sub.add_parser("import", help="bags from a robot -> a dataset folder (one episode per bag)",
                              description="Write each bag's camera frames (colour, depth, intrinsics, stamps, "
                                          "and ground truth when the bag has it) as an episode folder of a new "
                                          "dataset folder.",
                              epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    imported.add_argument("bags", nargs="+", type=Path, help="rosbag2 bags (folders, .mcap or .db3)")
    imported.add_argument("--out", type=Path, required=True, help="new or empty output folder")
    imported.add_argument("--split", choices=SPLITS, default="test",
                          help="the split the episodes go in (default test: what predrel eval evaluates)")
    imported.add_argument("--max-frames", type=int, default=None, help="import at most this many frames per bag")
    add_camera_topic_arguments(imported)
    stats = sub.add_parser("stats", help="predicate value and transition counts per scenario group",
                           description="Count predicate values and transitions per scenario group.",
                           epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    stats.add_argument("dataset", type=Path, help="dataset folder (with manifest.json)")
    stats.add_argument("--split", choices=("train", "val", "test"), help="only this split")
    stats.add_argument("--json", action="store_true", help="print JSON instead of tables")


def main(args: argparse.Namespace) -> int:
    if args.dataset_command == "generate":
        return _generate(args)
    if args.dataset_command == "import":
        return _import(args)
    return _stats(args)


def _import(args: argparse.Namespace) -> int:
    from predrel_ros.sources.bag_import import import_bags

    if args.max_frames is not None and args.max_frames < 1:
        raise UserError(f"--max-frames must be at least 1, got {args.max_frames}")
    manifest = json.loads(import_bags(args.bags, args.out, camera_topics_from_args(args), args.split,
                                      args.max_frames).read_text())
    for entry in manifest["episodes"]:
        topics = ", ".join(f"{role} {entry['topics'][role]}" for role in CAMERA_ROLES if role in entry["topics"])
        print(f"{entry['name']}: {entry['num_frames']} frames at {entry['fps']:g} fps from {topics}"
              f"{'; with ground truth' if entry['ground_truth'] else ''}", file=sys.stderr)
    print(f"wrote {len(manifest['episodes'])} episode(s) to {args.out} (split {args.split})", file=sys.stderr)
    return 0


def _generate(args: argparse.Namespace) -> int:
    from predrel_ros.tools.simulator.config import GenerationConfig
    from predrel_ros.tools.simulator.generate import generate_dataset
    from predrel_ros.tools.simulator.gl import configure_backend

    width, height = args.size
    config = GenerationConfig(width=width, height=height, fps=args.fps, frames=args.frames,
                              camera=args.camera, formats=FORMAT_CHOICES[args.format])
    templates = tuple(t.strip() for t in args.templates.split(",") if t.strip()) or None
    backend = configure_backend()
    print(f"predrel dataset: rendering with MUJOCO_GL={backend or 'glfw'}", file=sys.stderr)
    start = time.perf_counter()
    manifest = generate_dataset(args.out, args.episodes, args.seed, config, templates=templates,
                                jobs=args.jobs, progress=not args.quiet)
    seconds = time.perf_counter() - start
    data = json.loads(manifest.read_text())
    frames = sum(e["num_frames"] for e in data["episodes"])
    sizes = ", ".join(f"{k} {v / 1e6:.1f} MB" for k, v in data["mean_bytes_per_episode"].items())
    count = len(data["episodes"])
    print(f"wrote {count} episode{'s' if count != 1 else ''} ({frames} frames) to {args.out} in {seconds:.1f} s "
          f"({frames / seconds:.1f} frames/s); per episode on disk: {sizes}", file=sys.stderr)
    return 0


def _stats(args: argparse.Namespace) -> int:
    from predrel_ros.sources.dataset import open_dataset
    from predrel_ros.tools.simulator.stats import dataset_statistics, format_tables

    statistics = dataset_statistics(open_dataset(args.dataset), args.split)
    if args.json:
        print(json.dumps(statistics, indent=1, sort_keys=True))
    else:
        print(format_tables(statistics))
    return 0
