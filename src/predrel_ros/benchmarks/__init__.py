"""Benchmarks (`predrel bench TARGET`): speed and memory goals are met here, not in timed tests.

A target module exposes `add_arguments(parser)` and `run(args) -> dict`; the dict is written with
the hardware description to a JSON file and summarised on stdout.
"""

#: target -> (module, one-line help)
TARGETS: dict[str, tuple[str, str]] = {
    "core": ("predrel_ros.benchmarks.core",
             "predicate extraction + confidence + rolling metrics per frame (8 entities, 640x480 masks)"),
    "perception": ("predrel_ros.benchmarks.perception",
                   "per-backend perception latency (median, p95) at 320x240 and 640x480"),
    "degradations": ("predrel_ros.benchmarks.degradations",
                     "per-frame cost of each degradation kind and severity at 320x240 and 640x480"),
}
