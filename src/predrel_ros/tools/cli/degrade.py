"""Apply a synthetic degradation (paper 4.3, Table 6) to an image or a video, or preview all of them.

Actions:
  apply (default)  degrade IMAGE or VIDEO with --kind/--severity (or a --schedule for videos)
  preview          contact sheet of IMAGE: kinds x severities 0..5, to check the severities by eye
  table            print the parameter table (Markdown)

Kinds: blur, occlusion (textured, shaped occluders), occlusion_flat (flat rectangles, for comparison),
illumination, low_resolution, frame_drop, detection_noise (entity level: use the Degrader API or the
replay node). Severity 0 is the clean frame. The same (seed, frame
index, kind, severity) always gives the same output. A video is written with its dropped frames left
out; the sidecar PATH.frames.csv keeps every frame index with its action (deliver/repeat/drop).
"""
from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

EXAMPLES = """examples:
  predrel degrade --input frame.png --kind blur --severity 3 --out blurred.png
  predrel degrade --input frame.png --kind occlusion --severity 5 --boxes 120,80,260,200 --out occ.png
  predrel degrade --input episode.mp4 --kind frame_drop --severity 4 --seed 7 --out dropped.mp4
  predrel degrade --input episode.mp4 --schedule sweep:blur:30 --out sweep.mp4
  predrel degrade --input frames_in/ --kind low_resolution --severity 2 --out frames_out/
  predrel degrade preview --input frame.png --boxes 120,80,260,200 --out sheet.png
  predrel degrade table
"""

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp"}
VIDEO_CODECS = {".mp4": "mp4v", ".avi": "MJPG", ".mkv": "mp4v", ".mov": "mp4v"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", nargs="?", default="apply", choices=("apply", "preview", "table"),
                        help="apply (default), preview or table")
    parser.add_argument("--input", type=Path, help="image, video, or folder of images")
    parser.add_argument("--out", type=Path, help="output image, video (.mp4/.avi/.mkv/.mov) or folder")
    parser.add_argument("--kind", help="blur|occlusion|occlusion_flat|illumination|low_resolution|frame_drop")
    parser.add_argument("--severity", type=int, help="0 (clean) .. 5")
    parser.add_argument("--schedule", help="instead of --kind/--severity: e.g. sweep:blur:30, "
                                           "segments:0=none,100=blur:3 (see predrel_ros.degradations.schedule)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random parts (default 0)")
    parser.add_argument("--frame-index", type=int, default=0,
                        help="frame index of a single image, or of a video's first frame (default 0)")
    parser.add_argument("--boxes", help="occlusion targets, x1,y1,x2,y2 separated by ';' or spaces")
    parser.add_argument("--table", type=Path, help="JSON file of table overrides, "
                                                   'e.g. {"blur": {"motion_sigma_px": [0, 1, 2, 3, 4, 5]}}')
    parser.add_argument("--illumination-mode", default="by_seed",
                        help="by_seed (default), low_light, overexposure or contrast")
    parser.add_argument("--cell-width", type=int, default=None,
                        help="preview: width of one cell in pixels (default: the image width, at most 640)")


def main(args: argparse.Namespace) -> int:
    from predrel_ros.core.errors import UserError

    try:
        return _run(args)
    except ValueError as error:
        raise UserError(str(error)) from None


def _run(args: argparse.Namespace) -> int:
    import cv2

    from predrel_ros.core.errors import UserError
    from predrel_ros.degradations.options import DegradationOptions
    from predrel_ros.tools.degradation_preview import contact_sheet

    table = _load_table(args.table)
    if args.action == "table":
        print(table.markdown())
        return 0
    options = DegradationOptions(illumination_mode=args.illumination_mode)
    if args.input is None or args.out is None:
        raise UserError(f"{args.action} needs --input and --out")
    if not args.input.exists():
        raise UserError(f"--input {args.input} does not exist")
    boxes = _parse_boxes(args.boxes)
    if args.action == "preview":
        image = _read_image(args.input)
        cell_width = args.cell_width or min(image.shape[1], 640)
        if cell_width < 32:
            raise UserError(f"--cell-width must be at least 32 pixels, got {cell_width}")
        sheet = contact_sheet(image, args.seed, boxes, cell_width, args.frame_index, table, options)
        _write_image(args.out, sheet)
        print(f"contact sheet {sheet.shape[1]}x{sheet.shape[0]} written to {args.out}")
        return 0
    degrader = _degrader(args, table, options)
    if args.input.is_dir():
        return _degrade_folder(args, degrader, boxes)
    if args.input.suffix.lower() in IMAGE_SUFFIXES:
        return _degrade_image(args, degrader, boxes)
    capture = cv2.VideoCapture(str(args.input))
    if not capture.isOpened():
        raise UserError(f"--input {args.input}: not an image ({', '.join(sorted(IMAGE_SUFFIXES))}) "
                        f"and not a video OpenCV can open")
    return _degrade_video(args, degrader, boxes, capture)


def _load_table(path: Path | None):
    from predrel_ros.core.errors import UserError
    from predrel_ros.degradations.table import DEFAULT_TABLE

    if path is None:
        return DEFAULT_TABLE
    try:
        overrides = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as error:
        raise UserError(f"--table {path}: {error}") from None
    if not isinstance(overrides, dict):
        raise UserError(f"--table {path}: expected a JSON object of kind -> parameter -> 6 values")
    return DEFAULT_TABLE.with_overrides(overrides)


def _degrader(args: argparse.Namespace, table, options):
    from predrel_ros.core.errors import UserError
    from predrel_ros.degradations.schedule import Condition, ConstantSchedule, ScheduledDegrader, parse_schedule
    from predrel_ros.degradations.table import DETECTION_NOISE

    if args.kind == DETECTION_NOISE:
        raise UserError("detection_noise acts on perception output (entities), not on pixels: use "
                        "predrel_ros.degradations.Degrader.apply_entities or the replay node")
    if args.schedule is not None:
        if args.kind is not None or args.severity is not None:
            raise UserError("give either --schedule or --kind/--severity, not both")
        schedule = parse_schedule(args.schedule, start_frame=args.frame_index)
    else:
        if args.kind is None or args.severity is None:
            raise UserError("apply needs --kind and --severity (or --schedule)")
        schedule = ConstantSchedule(Condition(args.kind, args.severity))
    return ScheduledDegrader(schedule, args.seed, table, options)


def _parse_boxes(text: str | None):
    import numpy as np

    if text is None:
        return None
    try:
        boxes = [[float(v) for v in item.split(",")] for item in text.replace(";", " ").split()]
    except ValueError:
        raise ValueError(f"--boxes must be x1,y1,x2,y2 groups separated by ';' or spaces, got {text!r}") from None
    if not boxes or any(len(box) != 4 for box in boxes):
        raise ValueError(f"--boxes must be x1,y1,x2,y2 groups separated by ';' or spaces, got {text!r}")
    return np.array(boxes)


def _read_image(path: Path):
    import cv2

    from predrel_ros.core.errors import UserError

    image = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if image is None:
        raise UserError(f"{path}: not an image OpenCV can read")
    return image


def _write_image(path: Path, image) -> None:
    import cv2

    from predrel_ros.core.errors import UserError

    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() not in IMAGE_SUFFIXES:
        raise UserError(f"--out {path}: use an image suffix ({', '.join(sorted(IMAGE_SUFFIXES))})")
    if not cv2.imwrite(str(path), image):
        raise UserError(f"--out {path}: could not write the image")


def _degrade_image(args: argparse.Namespace, degrader, boxes) -> int:
    from predrel_ros.degradations.frame_drop import FrameAction

    image = _read_image(args.input)
    current = degrader.degrader_at(args.frame_index)
    # a single image is a stream of one frame: a repeat has nothing to repeat and becomes a drop
    if current.decide_frame(args.frame_index, stream_start=args.frame_index).action != FrameAction.DELIVER:
        print(f"frame {args.frame_index} is dropped under {current}; nothing written", file=sys.stderr)
        return 0
    _write_image(args.out, current.apply_image(image, args.frame_index, boxes))
    print(f"{current} -> {args.out}")
    return 0


def _degrade_folder(args: argparse.Namespace, degrader, boxes) -> int:
    from tqdm import tqdm

    from predrel_ros.core.errors import UserError

    paths = sorted(p for p in args.input.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
    if not paths:
        raise UserError(f"--input {args.input}: no images in the folder")
    if args.out.suffix:
        raise UserError(f"--out {args.out}: a folder input needs a folder output")
    args.out.mkdir(parents=True, exist_ok=True)
    frames = ((args.frame_index + i, _read_image(path)) for i, path in enumerate(paths))
    names = {args.frame_index + i: path.name for i, path in enumerate(paths)}
    return _write_stream(args, degrader, boxes, tqdm(frames, total=len(paths), unit="frame", file=sys.stderr),
                         lambda index, image: _write_image(args.out / names[index], image), args.out / "frames.csv")


def _degrade_video(args: argparse.Namespace, degrader, boxes, capture) -> int:
    import cv2
    from tqdm import tqdm

    from predrel_ros.core.errors import UserError

    codec = VIDEO_CODECS.get(args.out.suffix.lower())
    if codec is None:
        raise UserError(f"--out {args.out}: use a video suffix ({', '.join(VIDEO_CODECS)})")
    fps = capture.get(cv2.CAP_PROP_FPS) or 30.0
    total = int(capture.get(cv2.CAP_PROP_FRAME_COUNT)) or None
    writer = None

    def frames():
        index = args.frame_index
        while True:
            ok, image = capture.read()
            if not ok:
                return
            yield index, image
            index += 1

    def write(index, image):
        nonlocal writer
        if writer is None:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            writer = cv2.VideoWriter(str(args.out), cv2.VideoWriter_fourcc(*codec), fps,
                                     (image.shape[1], image.shape[0]))
            if not writer.isOpened():
                raise UserError(f"--out {args.out}: OpenCV cannot write this video format here")
        writer.write(image)

    try:
        return _write_stream(args, degrader, boxes, tqdm(frames(), total=total, unit="frame", file=sys.stderr),
                             write, Path(str(args.out) + ".frames.csv"))
    finally:
        capture.release()
        if writer is not None:
            writer.release()


def _write_stream(args, degrader, boxes, frames, write, sidecar: Path) -> int:
    from predrel_ros.degradations.stream import degrade_stream

    counts: dict[str, int] = {}
    with sidecar.open("w", newline="") as handle:
        table = csv.writer(handle)
        table.writerow(["frame_index", "kind", "severity", "seed", "action", "source_index"])
        for frame in degrade_stream(frames, degrader, None if boxes is None else (lambda index: boxes)):
            if frame.image is not None:
                write(frame.frame_index, frame.image)
            table.writerow([frame.frame_index, frame.degrader.kind, frame.degrader.severity, frame.degrader.seed,
                            frame.action.value, "" if frame.source_index is None else frame.source_index])
            counts[frame.action.value] = counts.get(frame.action.value, 0) + 1
    print(f"{sum(counts.values())} frames ({', '.join(f'{n} {a}' for a, n in sorted(counts.items()))}) "
          f"-> {args.out}; per-frame actions in {sidecar}")
    return 0

