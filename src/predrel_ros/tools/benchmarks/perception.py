"""Per-frame perception latency per inference backend at 320x240 and 640x480 (median, p95).

Stages timed separately on the same frames: preprocess (letterbox), inference (backend.run),
decode (YOLO-seg decoding with masks) and the whole `Perceiver.process` (all stages + tracking,
roles, visibility). Ratios compare each backend's inference median with ONNX Runtime's at the
same size, measured in the same run.

The MediaPipe hand models (optional hand path) are timed too, with ONNX Runtime.

Model: the embedded default model when it is installed (its fixed input size serves both frame
sizes). Until then, the default model's network architecture with RANDOM, UNTRAINED weights,
exported at each frame size's own input (320x256, 640x480): inference time does not depend on
the weights, but a random network detects almost nothing, so decode and end-to-end times are then
lower than with a trained model. The result says which model was used (`model.weights`).
"""
from __future__ import annotations

import argparse
import dataclasses
import logging
import tempfile
import time
from pathlib import Path

import numpy as np

from predrel_ros.tools.benchmarks.report import parse_size, peak_rss_mb, summarize

SIZES = ("320x240", "640x480")
BACKENDS = ("onnxruntime", "pytorch", "tensorrt")
#: classes of the stand-in network (a plausible tabletop vocabulary)
STAND_IN_CLASSES = ("cube", "ball", "cylinder", "bowl", "box", "plate", "left_hand", "right_hand")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sizes", nargs="+", default=list(SIZES), help="frame sizes WxH (default: %(default)s)")
    parser.add_argument("--backends", nargs="+", default=list(BACKENDS), choices=BACKENDS,
                        help="backends to time; unavailable ones are reported as skipped")
    parser.add_argument("--repeats", type=int, default=30, help="timed frames per backend and size")
    parser.add_argument("--warmup", type=int, default=5, help="untimed frames first")
    parser.add_argument("--threads", type=int, default=0, help="CPU threads per backend (0: runtime default)")
    parser.add_argument("--model", type=Path, default=None,
                        help="model folder to time instead (model.onnx / model.pt2 + labels.txt)")
    parser.add_argument("--no-hands", action="store_true", help="skip timing the hand-landmark models")


def _stand_in_model(folder: Path, height: int, width: int) -> dict:
    """The default architecture with random weights, exported (ONNX + .pt2) for a WxH frame."""
    import torch

    from predrel_ros.perception import letterbox
    from predrel_ros.tools.training.export import export_onnx, export_program
    from predrel_ros.tools.training.network import NetworkConfig, SegmentationNet, count_parameters

    torch.manual_seed(0)
    net = SegmentationNet(NetworkConfig(num_classes=len(STAND_IN_CLASSES))).eval()
    input_hw = letterbox.input_size_for(height, width)
    folder.mkdir(parents=True, exist_ok=True)
    export_onnx(net, STAND_IN_CLASSES, folder / "model.onnx", input_hw)
    export_program(net, STAND_IN_CLASSES, folder / "model.pt2", input_hw)
    (folder / "labels.txt").write_text("\n".join(STAND_IN_CLASSES) + "\n")
    return {"weights": "random (untrained stand-in for the default model: timing only)",
            "architecture": "predrel_ros.tools.training.network.SegmentationNet (default config)",
            "parameters": count_parameters(net), "classes": len(STAND_IN_CLASSES),
            "onnx_mb": round((folder / "model.onnx").stat().st_size / 2**20, 2)}


def _time_backend(model_dir: Path, backend: str, threads: int, width: int, height: int,
                  repeats: int, warmup: int) -> dict:
    from predrel_ros.perception import letterbox
    from predrel_ros.perception.config import PerceptionConfig
    from predrel_ros.perception.perceiver import Perceiver

    config = PerceptionConfig.from_dict({"model": str(model_dir),
                                         "backend": {"name": backend, "num_threads": threads}})
    rng = np.random.default_rng(0)
    frames = [rng.integers(0, 256, (height, width, 3), dtype=np.uint8) for _ in range(4)]
    timings = {"preprocess": [], "inference": [], "decode": [], "end_to_end": []}
    with Perceiver(config) as perceiver:
        geometry = perceiver.letterbox_for(height, width)
        for i in range(warmup + repeats):
            frame = frames[i % len(frames)]
            t0 = time.perf_counter()
            tensor = letterbox.apply(frame, geometry)
            t1 = time.perf_counter()
            outputs = perceiver.backend.run(tensor)
            t2 = time.perf_counter()
            perceiver.decoder.decode(outputs, geometry)
            t3 = time.perf_counter()
            perceiver.process(frame, i)
            t4 = time.perf_counter()
            if i >= warmup:
                for name, seconds in zip(timings, (t1 - t0, t2 - t1, t3 - t2, t4 - t3)):
                    timings[name].append(seconds)
        description = perceiver.backend.describe()
    return {"backend": backend, "provider": description.provider, "device": description.device,
            "precision": description.precision, "threads": description.details.get("threads"),
            "frame": f"{width}x{height}", "network_input": f"{geometry.input_width}x{geometry.input_height}",
            **{name: summarize(values) for name, values in timings.items()}}


def _time_hands(threads: int, width: int, height: int, repeats: int, warmup: int) -> dict:
    """The MediaPipe hand models (ONNX Runtime): palm detection alone (no hand in view), palm
    detection + two landmark runs (thresholds at 0 so that noise yields two "hands": timing only), and
    two hands followed from the frame before (two landmark runs, no palm detection: MediaPipe's video
    mode once both hands are found)."""
    from predrel_ros.perception.backends import BackendConfig
    from predrel_ros.perception.hands import HandLandmarkConfig, HandLandmarker

    backend = BackendConfig(name="onnxruntime", num_threads=threads)
    frame = np.random.default_rng(0).integers(0, 256, (height, width, 3), dtype=np.uint8)
    row = {"frame": f"{width}x{height}", "backend": "onnxruntime"}
    permissive = HandLandmarkConfig(enabled=True, min_palm_score=0.0, min_presence=0.0, duplicate_iou=1.0)
    for name, config in (("palm_only", HandLandmarkConfig(enabled=True, track=False)),
                         ("palm_and_two_hands", dataclasses.replace(permissive, track=False)),
                         ("two_hands_followed", permissive)):
        landmarker = HandLandmarker(config, backend)
        landmarker.detect(frame)                # untimed: the hands to follow are found first
        seconds = []
        for i in range(warmup + repeats):
            start = time.perf_counter()
            found = landmarker.detect(frame)
            if i >= warmup:
                seconds.append(time.perf_counter() - start)
        landmarker.close()
        row[name] = {**summarize(seconds), "hands": len(found)}
    return row


def run(args: argparse.Namespace) -> dict:
    """Time every available backend; perception's per-model info logs are quiet meanwhile."""
    logger = logging.getLogger("predrel_ros.perception")
    previous = logger.level
    logger.setLevel(logging.WARNING)
    try:
        return _measure(args)
    finally:
        logger.setLevel(previous)


def _measure(args: argparse.Namespace) -> dict:
    from predrel_ros.core.errors import UserError
    from predrel_ros.perception.backends import BACKENDS as BACKEND_CLASSES
    from predrel_ros.perception.config import DEFAULT_MODEL_DIR

    if args.repeats < 1 or args.warmup < 0:
        raise UserError("--repeats must be >= 1 and --warmup >= 0")
    sizes = [parse_size(text) for text in args.sizes]
    skipped = {}
    backends = []
    for name in args.backends:
        reason = BACKEND_CLASSES[name].unavailable_reason()
        if reason:
            skipped[name] = reason
        else:
            backends.append(name)
    given = args.model or (DEFAULT_MODEL_DIR if (DEFAULT_MODEL_DIR / "model.onnx").is_file() else None)
    rows, models = [], {}
    with tempfile.TemporaryDirectory(prefix="predrel-bench-") as scratch:
        for width, height in sizes:
            if given is not None:
                model_dir = Path(given)
                models[f"{width}x{height}"] = {"path": str(model_dir), "weights": "trained"}
            else:
                model_dir = Path(scratch) / f"{width}x{height}"
                models[f"{width}x{height}"] = _stand_in_model(model_dir, height, width)
            for backend in backends:
                rows.append(_time_backend(model_dir, backend, args.threads, width, height,
                                          args.repeats, args.warmup))
    for row in rows:
        baseline = next((r for r in rows if r["frame"] == row["frame"] and r["backend"] == "onnxruntime"), None)
        if baseline is not None:
            row["inference_ratio_to_onnxruntime"] = round(
                row["inference"]["median_ms"] / baseline["inference"]["median_ms"], 3)
    hands = [] if args.no_hands or "onnxruntime" not in backends else [
        _time_hands(args.threads, width, height, args.repeats, args.warmup) for width, height in sizes]
    return {"models": models, "results": rows, "hand_landmarks": hands, "skipped_backends": skipped,
            "repeats": args.repeats, "warmup": args.warmup, "peak_rss_mb": round(peak_rss_mb(), 1)}
