"""Per-frame cost of the action recognizer, as the action node runs it.

The predicate core benchmark's scripted scene (8 entities, two hands, four objects, a bowl, the
table) goes through `PredicateExtractor` once, before timing; then each frame's estimates are timed
through `encode_frame` alone and through the whole `ActionRecognizer.update` (encoding, temporal
window, model, reliance and trust gate, with a trust level for every predicate). The baseline,
measured in the same run, is the predicate extraction of the same frames: the recognizer's cost is
reported as a ratio to it and as a share of a 33.3 ms camera period.
"""
from __future__ import annotations

import argparse
import time

from predrel_ros.tools.benchmarks.report import peak_rss_mb, summarize

CAMERA_PERIOD_MS = 1000.0 / 30.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--frames", type=int, default=300, help="frames per repeat (default 300)")
    parser.add_argument("--repeats", type=int, default=3, help="passes over the sequence (default 3)")
    parser.add_argument("--model", help="model file (default: the packaged model)")


def run(args: argparse.Namespace) -> dict:
    from predrel_ros.action.encoding import encode_frame
    from predrel_ros.action.model import PrimitiveModel
    from predrel_ros.action.recognizer import ActionRecognizer
    from predrel_ros.core.errors import UserError
    from predrel_ros.predicates import PredicateExtractor, vocabulary
    from predrel_ros.tools.benchmarks.core import scripted_scene

    if args.frames < 10 or args.repeats < 1:
        raise UserError("need --frames >= 10 and --repeats >= 1")
    model = PrimitiveModel.load(args.model)
    scene = scripted_scene(args.frames, 640, 480)
    clock = time.perf_counter
    extraction, encoding, update = [], [], []
    trust = {name: "OK" for name in vocabulary.PREDICATES}
    frames = []
    for _ in range(args.repeats):
        extractor = PredicateExtractor()
        frames = []
        for t, entities in enumerate(scene):
            start = clock()
            frames.append((t, extractor.update(t, entities)))
            extraction.append(clock() - start)
    for _ in range(args.repeats):
        recognizer = ActionRecognizer(model)
        for t, estimates in frames:
            start = clock()
            encode_frame(estimates, model.confidence_weighted)
            encoded = clock()
            recognizer.update(t, estimates, trust)
            end = clock()
            encoding.append(encoded - start)
            update.append(end - encoded)
    full = summarize(update)
    baseline = summarize(extraction)
    return {
        "model": str(args.model or "packaged"),
        "features": model.n_features,
        "hidden": model.hidden,
        "frames": args.frames,
        "repeats": args.repeats,
        "estimates_per_frame": sum(len(estimates) for _, estimates in frames) / len(frames),
        "stages": {"encode_frame": summarize(encoding), "recognizer_update": full,
                   "baseline_predicate_extraction": baseline},
        "update_over_extraction": full["median_ms"] / baseline["median_ms"],
        "update_share_of_camera_period": full["median_ms"] / CAMERA_PERIOD_MS,
        "peak_rss_mb": peak_rss_mb(),
    }
