"""`predrel bench pipeline`: the whole replay graph at 320x240, 30 Hz, against a bare image relay.

Two measurements in one run, one after the other, on the same machine and DDS settings:

1. relay (the baseline): this process publishes 320x240 rgb8 images at 30 Hz to `echo_relay` in its
   own process, which decodes each one and publishes it again (a bare rclpy image relay); this
   process receives the copies. Output rate, latency (publish stamp -> arrival), lost frames, CPU.
2. pipeline: config/replay_eval.run.yaml started by the runner (replay at real time, looping a
   controlled episode, both twins through perception -> predicates, reliability against the clean
   twin, action). After a warm-up (models loaded, first action seen) it measures for --seconds: the
   sustained rate of clean/predicates, degraded/predicates and degraded/action, their latency
   (replay publish stamp, carried in every header -> arrival here), the frames the replay published
   (FrameInfo) against the outputs, every node's dropped frames by reason (/diagnostics counter
   increments over the window) and each process's CPU (cores used, from /proc).

The result holds both and their ratios (pipeline / relay: latency median and p95, output rate).
The graph runs in a namespace of its own, so other graphs on the machine do not disturb it. The ROS
side of both (the relay, the graph and the node watching it) is ros/run/graph_probes.py.
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

from predrel_ros.core.errors import UserError
from predrel_ros.tools.benchmarks.report import summarize

WIDTH, HEIGHT, RATE_HZ = 320, 240, 30.0
RUN_FILE = "replay_eval.run.yaml"
#: outputs of the pipeline whose rate and latency are measured
OUTPUTS = ("clean/predicates", "degraded/predicates", "degraded/action")
#: frames of the looped episode (5 s at 30 fps)
EPISODE_FRAMES = 150


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seconds", type=float, default=20.0, help="measurement window of each part (default 20)")
    parser.add_argument("--warmup-timeout", type=float, default=180.0,
                        help="longest wait for the pipeline's first output (model loading; default 180 s)")
    parser.add_argument("--schedule", default="occlusion:3",
                        help="degradation of the degraded twin (default occlusion:3)")
    parser.add_argument("--model", default="", help="perception model; default: the embedded default model")
    parser.add_argument("--cache-dir", type=Path, default=None,
                        help="where the generated episode is kept (default: the demo's cache)")
    parser.add_argument("--skip-pipeline", action="store_true",
                        help="measure only the relay baseline (a quick check of the DDS setup)")


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of process `pid` so far (None once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class CpuMeter:
    """Cores used by each of some processes over a window (CPU seconds / wall seconds)."""

    def __init__(self, pids: dict[str, int]) -> None:
        self.pids = pids
        self.start = time.monotonic()
        self.before = {label: cpu_seconds(pid) for label, pid in pids.items()}

    def cores(self) -> dict[str, float]:
        seconds = time.monotonic() - self.start
        used = {}
        for label, pid in self.pids.items():
            now, before = cpu_seconds(pid), self.before[label]
            if now is not None and before is not None:
                used[label] = round((now - before) / seconds, 3)
        used["total"] = round(sum(used.values()), 3)
        return used


class Arrivals:
    """Arrival time and latency of the messages of one topic inside the measurement window."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self.latencies: list[float] = []
        self.recording = False

    def add(self, latency_s: float) -> None:
        if self.recording:
            self.times.append(time.monotonic())
            self.latencies.append(latency_s)

    def result(self, window_s: float) -> dict:
        return {"received": len(self.times), "rate_hz": round(len(self.times) / window_s, 2),
                "latency_ms": summarize(self.latencies) if self.latencies else None}


def measure_relay(seconds: float) -> dict:
    """The bare relay: this process -> echo_relay -> this process, 320x240 rgb8 at 30 Hz."""
    from predrel_ros.ros.run.graph_probes import ImageRelay

    arrivals = Arrivals()
    arrivals.recording = True                # on_echo keeps the echoes of frames sent in the window only
    in_window: set[tuple[int, int]] = set()  # stamps of the frames sent in the window
    frames = [np.random.default_rng(i).integers(0, 256, (HEIGHT, WIDTH, 3), dtype=np.uint8) for i in range(8)]

    def on_echo(stamp: tuple[int, int], latency_s: float) -> None:
        if stamp in in_window:
            arrivals.add(latency_s)
    with ImageRelay(on_echo) as relay:
        period = 1.0 / RATE_HZ
        meter = None
        start = time.monotonic()
        warmup_frames = int(RATE_HZ)  # one second before the window opens
        total = warmup_frames + int(seconds * RATE_HZ)
        for index in range(total):
            relay.spin_until(lambda: time.monotonic() >= start + index * period, period + 1.0)
            if index == warmup_frames:
                meter = CpuMeter({"relay": relay.pid, "benchmark": os.getpid()})
                window_start = time.monotonic()
            stamp = relay.publish(frames[index % len(frames)])  # its echo arrives while the relay spins
            if index >= warmup_frames:
                in_window.add(stamp)
        window = time.monotonic() - window_start + period  # the last frame's period included
        cores = meter.cores()
        relay.spin_until(lambda: len(arrivals.times) >= len(in_window), 5.0)  # the last copies arrive
    result = arrivals.result(window)
    sent = len(in_window)
    result.update({"sent": sent, "lost": max(sent - result["received"], 0), "cpu_cores": cores,
                   "qos": "reliable, keep last 10", "seconds": round(window, 2)})
    return result


def _counter_increments(before: dict[str, dict[str, int]], after: dict[str, dict[str, int]]) -> dict:
    increments = {}
    for name, counters in sorted(after.items()):
        base = before.get(name, {})
        changed = {key: value - base.get(key, 0) for key, value in counters.items() if value - base.get(key, 0)}
        if changed:
            increments[name] = changed
    return increments


def measure_pipeline(bag: Path, seconds: float, warmup_timeout: float, schedule: str, model: str,
                     log_dir: Path) -> dict:
    from predrel_ros.core.package_files import config_file
    from predrel_ros.ros.run.graph_probes import WatchedGraph

    arrivals = {topic: Arrivals() for topic in OUTPUTS}
    frames_published = Arrivals()
    first_action = Arrivals()
    first_action.recording = True

    def on_output(topic: str, latency_s: float) -> None:
        arrivals[topic].add(latency_s)
        if topic == "degraded/action":
            first_action.add(0.0)
    values = {"bag": str(bag), "schedule": schedule, "rate": "1.0", "loop": "true", "passes": "0", "model": model}
    with WatchedGraph(config_file(RUN_FILE), values, f"predrel_bench_pipeline_{os.getpid()}", log_dir, OUTPUTS,
                      on_output, lambda: frames_published.add(0.0)) as graph:
        if not graph.spin_until(lambda: bool(first_action.times) or not graph.running(), warmup_timeout):
            raise UserError(f"the pipeline produced no action within {warmup_timeout:g} s; logs in {log_dir}")
        if not graph.running():
            raise UserError(f"the pipeline stopped before the measurement (status {graph.status}); logs in {log_dir}")
        graph.spin_until(lambda: False, 3.0)  # past the first frames' start-up costs
        before = {name: dict(values) for name, values in graph.counters.items()}
        meter = CpuMeter({**graph.process_ids(), "benchmark": os.getpid()})
        window_start = time.monotonic()
        for target in (*arrivals.values(), frames_published):
            target.recording = True
        graph.spin_until(lambda: not graph.running(), seconds)
        for target in (*arrivals.values(), frames_published):
            target.recording = False
        window = time.monotonic() - window_start
        cores = meter.cores()
        graph.spin_until(lambda: False, 1.5)  # one more /diagnostics round
        dropped = _counter_increments(before, graph.counters)
        if not graph.running():
            raise UserError(f"the pipeline stopped during the measurement (status {graph.status}); logs in {log_dir}")
    published = len(frames_published.times)
    outputs = {topic: arrivals[topic].result(window) for topic in OUTPUTS}
    return {"frames_published": published, "input_rate_hz": round(published / window, 2), "outputs": outputs,
            "outputs_per_published_frame": {topic: round(o["received"] / published, 3) if published else None
                                            for topic, o in outputs.items()},
            "counter_increments": dropped, "cpu_cores": cores, "schedule": schedule, "seconds": round(window, 2),
            "logs": str(log_dir)}


def _ratio(a, b) -> float | None:
    return None if not a or not b else round(a / b, 2)


def run(args: argparse.Namespace) -> dict:
    from predrel_ros.ros.run import dds
    from predrel_ros.tools.demo import default_cache_dir, demo_episode

    if args.seconds <= 0 or args.warmup_timeout <= 0:
        raise UserError("--seconds and --warmup-timeout must be > 0")
    os.environ.update(dds.node_environment())  # this process uses the nodes' DDS settings
    relay = measure_relay(args.seconds)
    result = {"image": f"{WIDTH}x{HEIGHT} rgb8", "target_rate_hz": RATE_HZ, "relay": relay,
              "fastdds_profile": os.environ.get(dds.PROFILE_VARIABLE, "")}
    if args.skip_pipeline:
        return result
    bag = demo_episode(args.cache_dir or default_cache_dir(), EPISODE_FRAMES)
    log_dir = Path("bench-results") / f"pipeline-logs-{time.strftime('%Y%m%dT%H%M%S')}"
    pipeline = measure_pipeline(bag, args.seconds, args.warmup_timeout, args.schedule, args.model, log_dir)
    result["pipeline"] = pipeline
    degraded = pipeline["outputs"]["degraded/predicates"]
    action = pipeline["outputs"]["degraded/action"]
    relay_latency = relay["latency_ms"] or {}
    result["ratios"] = {
        "latency_median_predicates_over_relay": _ratio((degraded["latency_ms"] or {}).get("median_ms"),
                                                       relay_latency.get("median_ms")),
        "latency_p95_predicates_over_relay": _ratio((degraded["latency_ms"] or {}).get("p95_ms"),
                                                    relay_latency.get("p95_ms")),
        "latency_median_action_over_relay": _ratio((action["latency_ms"] or {}).get("median_ms"),
                                                   relay_latency.get("median_ms")),
        "rate_predicates_over_relay": _ratio(degraded["rate_hz"], relay["rate_hz"]),
        "cpu_pipeline_over_relay": _ratio(pipeline["cpu_cores"]["total"], relay["cpu_cores"]["total"]),
    }
    return result
