"""Benchmarks (`predrel bench TARGET`): speed and memory goals are met here, not in timed tests.

A target module exposes `add_arguments(parser)` and `run(args) -> dict`; the dict is written with
the hardware description to a JSON file and summarised on stdout.
"""

#: target -> (module, one-line help)
TARGETS: dict[str, tuple[str, str]] = {
    "core": ("predrel_ros.tools.benchmarks.core",
             "predicate extraction + confidence + rolling metrics per frame (8 entities, 640x480 masks)"),
    "trust": ("predrel_ros.tools.benchmarks.trust",
              "all trust signals per frame at 320x240: the self-mode reliability monitor (update + report) and "
              "its evidence by part"),
    "predicates": ("predrel_ros.tools.benchmarks.predicates",
                   "the predicate stage alone per frame: 8 entities at 640x480 with and without depth, and a "
                   "crowd of 100 entities (issue 13's goals)"),
    "perception": ("predrel_ros.tools.benchmarks.perception",
                   "per-backend perception latency (median, p95) at 320x240 and 640x480"),
    "degradations": ("predrel_ros.tools.benchmarks.degradations",
                     "per-frame cost of each degradation kind and severity at 320x240 and 640x480"),
    "conversions": ("predrel_ros.tools.benchmarks.conversions",
                    "ROS message <-> numpy/record conversions (640x480 images, entities, predicates)"),
    "transport": ("predrel_ros.tools.benchmarks.transport",
                  "image + predicate round trip between two processes over DDS"),
    "action": ("predrel_ros.tools.benchmarks.action",
               "action recognizer per frame (encoding, model, trust gate) vs predicate extraction"),
    "nodes": ("predrel_ros.tools.benchmarks.nodes",
              "replay and perception node cost beyond their libraries at 320x240 vs a bare image publish"),
    "predicate-nodes": ("predrel_ros.tools.benchmarks.predicate_nodes",
                        "predicate, reliability and action node cost per frame vs their libraries (8 entities)"),
    "pipeline": ("predrel_ros.tools.benchmarks.pipeline",
                 "live graphs at 30 Hz (single pipeline, lockstep twins): rate, latency, drops, CPU vs a bare relay"),
    "eval": ("predrel_ros.tools.benchmarks.eval",
             "evaluation sweep: evaluator overhead vs perception time (cold cache, first N test episodes)"),
    "controlled": ("predrel_ros.tools.benchmarks.controlled",
                   "seconds per controlled episode (150 frames, 320x240) and its size on disk"),
}
