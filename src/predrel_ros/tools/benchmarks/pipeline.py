"""`predrel bench pipeline`: the live graphs at camera rate against a bare image relay, in one run.

Three graphs, one after the other, on the same machine and DDS settings, fed 30 frames a second at
`--size` (320x240 by default; the frames of a controlled episode generated at that size):

1. relay (the baseline): this process publishes the frames (rgb8) to `echo_relay` in its own
   process, which decodes each one and publishes it again (a bare rclpy image relay); this process
   receives the copies. Output rate, latency (publish stamp -> arrival), lost frames, CPU.
2. single: config/perception.run.yaml, the robot's graph (perception -> predicates -> reliability in
   self mode -> action); this process is the camera (camera/color/image_raw, sensor-data QoS).
3. twins: config/replay_eval.run.yaml, the replay at real time looping the episode in lockstep
   (`--lockstep`, frames the pipelines cannot take are skipped by the replay for both twins), both
   twins through perception -> predicates, reliability against the clean twin, action.

For 2 and 3, after a warm-up (models loaded, first action seen) it measures for --seconds: rate and
latency (the camera's or the replay's stamp, carried in every header -> arrival here) of the
outputs, every node's counter increments over the window (`dropped`: frames lost by reason), each
process's CPU (cores, from /proc) and the perception nodes' CPU per processed frame. The same frames
also go through `Perceiver` in this process (`in_process`: what `predrel bench perception` times)
so the in-graph perception cost has its reference from the same run. The graphs run in namespaces of
their own, so other graphs on the machine do not disturb them. The ROS side (relay, graphs and the
node watching them) is ros/run/graph_probes.py.
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

from predrel_ros.core.errors import UserError
from predrel_ros.tools.benchmarks.report import parse_size, summarize

RATE_HZ = 30.0
DEFAULT_SIZE = "320x240"
SINGLE_RUN_FILE = "perception.run.yaml"
TWINS_RUN_FILE = "replay_eval.run.yaml"
CAMERA_TOPIC = "camera/color/image_raw"
#: outputs whose rate and latency are measured; the first is the graph's rate and end-to-end latency
SINGLE_OUTPUTS = ("action", "predicates")
TWINS_OUTPUTS = ("degraded/action", "degraded/predicates", "clean/predicates")
#: frames of the looped episode (5 s at 30 fps)
EPISODE_FRAMES = 150
#: frames through the in-process Perceiver (after as many untimed ones)
IN_PROCESS_FRAMES = 60
PARTS = ("relay", "single", "twins")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seconds", type=float, default=20.0, help="measurement window of each part (default 20)")
    parser.add_argument("--size", default=DEFAULT_SIZE, help="frame size WxH (default 320x240)")
    parser.add_argument("--parts", nargs="+", default=list(PARTS), choices=PARTS,
                        help="graphs to measure (default: all three; relay alone is a quick DDS check)")
    parser.add_argument("--warmup-timeout", type=float, default=180.0,
                        help="longest wait for a graph's first output (model loading; default 180 s)")
    parser.add_argument("--schedule", default="occlusion:3",
                        help="degradation of the degraded twin (default occlusion:3)")
    parser.add_argument("--lockstep", type=int, default=2,
                        help="twins: frames in flight in lockstep (default 2; 0: each twin drops its own)")
    parser.add_argument("--model", default="", help="perception model; default: the embedded default model")
    parser.add_argument("--backends", nargs="+", default=[""], metavar="BACKEND",
                        help="inference backends to measure the graphs with, one after the other (onnxruntime, "
                             "pytorch, tensorrt; device auto: CUDA where available); default: the config's. The "
                             "first fills single / twins / in_process, the others `other_backends`")
    parser.add_argument("--cache-dir", type=Path, default=None,
                        help="where the generated episode is kept (default: the demo's cache)")


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


def publish_at_camera_rate(probe, publish, frames: list[np.ndarray], count: int | None = None,
                           stop=lambda: False, timeout_s: float = float("inf")) -> int:
    """publish(frame) for `frames` in turn at RATE_HZ, `probe` spinning in between, `count` times (None:
    until stop() or timeout_s); returns how many were published."""
    period = 1.0 / RATE_HZ
    start = time.monotonic()
    index = 0
    while (index < count) if count is not None else (not stop() and time.monotonic() - start < timeout_s):
        # spin exactly until the frame is due: a spin waiting for callbacks past it would send the
        # late frame and the next one together, which no camera does
        probe.spin_until(lambda: False, start + index * period - time.monotonic())
        publish(frames[index % len(frames)])
        index += 1
    return index


def measure_relay(frames: list[np.ndarray], seconds: float) -> dict:
    """The bare relay: this process -> echo_relay -> this process, the frames (rgb8) at 30 Hz."""
    from predrel_ros.ros.run.graph_probes import ImageRelay

    arrivals = Arrivals()
    arrivals.recording = True                # on_echo keeps the echoes of frames sent in the window only
    in_window: set[tuple[int, int]] = set()  # stamps of the frames sent in the window

    def on_echo(stamp: tuple[int, int], latency_s: float) -> None:
        if stamp in in_window:
            arrivals.add(latency_s)
    with ImageRelay(on_echo) as relay:
        publish_at_camera_rate(relay, relay.publish, frames, count=int(RATE_HZ))  # one second of warm-up
        meter = CpuMeter({"relay": relay.pid, "benchmark": os.getpid()})
        window_start = time.monotonic()
        publish_at_camera_rate(relay, lambda frame: in_window.add(relay.publish(frame)), frames,
                               count=int(seconds * RATE_HZ))  # echoes arrive while the relay spins
        window = time.monotonic() - window_start + 1.0 / RATE_HZ  # the last frame's period included
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


def dropped_by_reason(increments: dict[str, dict[str, int]]) -> dict[str, int]:
    """Counter increments of every outcome but `processed` (and frames in), summed per reason."""
    reasons: dict[str, int] = {}
    for counters in increments.values():
        for key, value in counters.items():
            reason = key.rsplit(".", 1)[-1]
            if reason not in ("processed", "in") and value > 0:
                reasons[reason] = reasons.get(reason, 0) + value
    return dict(sorted(reasons.items()))


def _perception_cpu_ms(cores: dict[str, float], increments: dict, window_s: float) -> dict[str, float | None]:
    """CPU milliseconds per processed frame of each perception node over the window."""
    result = {}
    for node, used in cores.items():
        if node.endswith("perception"):
            processed = increments.get(node, {}).get("frames.processed", 0)
            result[node] = round(1e3 * used * window_s / processed, 2) if processed else None
    return result


def measure_graph(part: str, run_file: str, values: dict[str, str], outputs: tuple[str, ...], seconds: float,
                  warmup_timeout: float, log_dir: Path, camera_frames: list[np.ndarray] | None = None,
                  frame_info_topic: str | None = None) -> dict:
    """One graph of a run file for `seconds` after its warm-up; fed by this process as the camera when
    `camera_frames` are given. Rate and latency of the graph: those of outputs[0]."""
    from predrel_ros.core.package_files import config_file
    from predrel_ros.ros.run.graph_probes import WatchedGraph

    arrivals = {topic: Arrivals() for topic in outputs}
    frame_infos = Arrivals()
    first_output = Arrivals()
    first_output.recording = True

    def on_output(topic: str, latency_s: float) -> None:
        arrivals[topic].add(latency_s)
        if topic == outputs[0]:
            first_output.add(0.0)
    with WatchedGraph(config_file(run_file), values, f"predrel_bench_{part}_{os.getpid()}", log_dir, outputs,
                      on_output, lambda: frame_infos.add(0.0), frame_info_topic,
                      CAMERA_TOPIC if camera_frames else None) as graph:
        def advance(stop, timeout_s: float) -> int:
            """Spin (publishing camera frames at 30 Hz, if this process is the camera); frames published."""
            if camera_frames is None:
                graph.spin_until(stop, timeout_s)
                return 0
            return publish_at_camera_rate(graph, graph.publish_camera, camera_frames, stop=stop, timeout_s=timeout_s)
        advance(lambda: bool(first_output.times) or not graph.running(), warmup_timeout)
        if not graph.running():
            raise UserError(f"{part}: the graph stopped before the measurement (status {graph.status}); "
                            f"logs in {log_dir}")
        if not first_output.times:
            raise UserError(f"{part}: no {outputs[0]} within {warmup_timeout:g} s; logs in {log_dir}")
        advance(lambda: False, 3.0)  # past the first frames' start-up costs
        before = {name: dict(values) for name, values in graph.counters.items()}
        meter = CpuMeter({**graph.process_ids(), "benchmark": os.getpid()})
        window_start = time.monotonic()
        for target in (*arrivals.values(), frame_infos):
            target.recording = True
        published = advance(lambda: not graph.running(), seconds)
        for target in (*arrivals.values(), frame_infos):
            target.recording = False
        window = time.monotonic() - window_start
        cores = meter.cores()
        advance(lambda: False, 1.5)  # one more /diagnostics round
        increments = _counter_increments(before, graph.counters)
        if not graph.running():
            raise UserError(f"{part}: the graph stopped during the measurement (status {graph.status}); "
                            f"logs in {log_dir}")
    results = {topic: arrivals[topic].result(window) for topic in outputs}
    frames_in = published if camera_frames is not None else len(frame_infos.times)
    return {"rate_hz": results[outputs[0]]["rate_hz"], "latency_ms": results[outputs[0]]["latency_ms"],
            "input_rate_hz": round(frames_in / window, 2), "outputs": results,
            "dropped": dropped_by_reason(increments), "counter_increments": increments, "cpu_cores": cores,
            "perception_cpu_ms_per_frame": _perception_cpu_ms(cores, increments, window),
            "seconds": round(window, 2), "logs": str(log_dir)}


def matched_share(increments: dict[str, dict[str, int]]) -> float | None:
    """Share of the degraded predicate frames the reliability node matched to their clean twin."""
    counters = increments.get("reliability", {})
    matched, unmatched = counters.get("predicates.processed", 0), counters.get("predicates.unmatched", 0)
    return round(matched / (matched + unmatched), 3) if matched + unmatched else None


def measure_in_process(frames: list[np.ndarray], model: str, backend: str) -> dict:
    """The frames through `Perceiver` in this process, configured as the perception node is:
    wall and CPU milliseconds per frame (medians of the frames' own times)."""
    import dataclasses

    from predrel_ros.core.package_files import config_file
    from predrel_ros.perception.config import PerceptionConfig
    from predrel_ros.perception.perceiver import Perceiver

    config = PerceptionConfig.load(config_file("perceiver.yaml"), section="perception")
    if model:
        config = dataclasses.replace(config, model=str(Path(model).expanduser()))
    if backend:
        config = dataclasses.replace(config, backend=dataclasses.replace(config.backend, name=backend))
    wall, cpu = [], []
    with Perceiver(config) as perceiver:
        for index in range(2 * IN_PROCESS_FRAMES):
            start, start_cpu = time.perf_counter(), time.process_time()
            perceiver.process(frames[index % len(frames)], index, bgr=False)
            if index >= IN_PROCESS_FRAMES:
                wall.append(time.perf_counter() - start)
                cpu.append(time.process_time() - start_cpu)
        description = perceiver.describe()
    return {"wall_ms": summarize(wall), "cpu_ms": summarize(cpu), "threads": config.backend.threads,
            **{key: description.get(key) for key in ("backend", "provider", "device")}}


def _ratio(a, b) -> float | None:
    return None if not a or not b else round(a / b, 2)


def ratios(result: dict) -> dict:
    """Each graph against the relay and the camera rate, the in-graph perception CPU against in-process."""
    relay = (result.get("relay") or {}).get("latency_ms") or {}
    in_process = (result.get("in_process") or {}).get("cpu_ms", {}).get("median_ms")
    found = {}
    for part in ("single", "twins"):
        graph = result.get(part)
        if not graph:
            continue
        latency = graph["latency_ms"] or {}
        found[f"{part}_rate_over_camera"] = _ratio(graph["rate_hz"], RATE_HZ)
        found[f"{part}_latency_median_over_relay"] = _ratio(latency.get("median_ms"), relay.get("median_ms"))
        found[f"{part}_latency_p95_over_relay"] = _ratio(latency.get("p95_ms"), relay.get("p95_ms"))
        for node, ms in graph["perception_cpu_ms_per_frame"].items():
            found[f"{part}_{node.replace('/', '_')}_cpu_per_frame_over_in_process"] = _ratio(ms, in_process)
    return found


def measure_graphs(args: argparse.Namespace, bag: Path, frames: list[np.ndarray], backend: str, logs: Path) -> dict:
    """single, twins (as args.parts ask) and in_process with one inference backend ("": the config's)."""
    result: dict = {}
    common = {"model": args.model, "backend": backend}
    if "single" in args.parts:
        result["single"] = measure_graph("single", SINGLE_RUN_FILE, common, SINGLE_OUTPUTS, args.seconds,
                                         args.warmup_timeout, logs / "single", camera_frames=frames)
    if "twins" in args.parts:
        values = {**common, "bag": str(bag), "schedule": args.schedule, "rate": "1.0", "loop": "true",
                  "passes": "0", "lockstep": str(args.lockstep)}
        twins = measure_graph("twins", TWINS_RUN_FILE, values, TWINS_OUTPUTS, args.seconds, args.warmup_timeout,
                              logs / "twins", frame_info_topic="degraded/frame_info")
        twins["rate_hz"] = min(twins["outputs"][topic]["rate_hz"] for topic in ("degraded/predicates",
                                                                                "clean/predicates"))
        twins.update({"matched_share": matched_share(twins["counter_increments"]), "schedule": args.schedule,
                      "lockstep": args.lockstep})
        result["twins"] = twins
    if result:
        result["in_process"] = measure_in_process(frames, args.model, backend)
    return result


def run(args: argparse.Namespace) -> dict:
    from predrel_ros.ros.run import dds
    from predrel_ros.sources.open_source import open_frames
    from predrel_ros.tools.demo import default_cache_dir, demo_episode

    if args.seconds <= 0 or args.warmup_timeout <= 0 or args.lockstep < 0:
        raise UserError("--seconds and --warmup-timeout must be > 0, --lockstep >= 0")
    width, height = parse_size(args.size)
    os.environ.update(dds.node_environment())  # this process uses the nodes' DDS settings
    bag = demo_episode(args.cache_dir or default_cache_dir(), EPISODE_FRAMES, size=(width, height))
    frames = [frame.rgb for frame in open_frames(bag)]
    result: dict = {"image": f"{width}x{height} rgb8", "camera_rate_hz": RATE_HZ, "episode": str(bag),
                    "fastdds_profile": os.environ.get(dds.PROFILE_VARIABLE, ""), "parts": list(args.parts)}
    logs = Path("bench-results") / f"pipeline-logs-{time.strftime('%Y%m%dT%H%M%S')}"
    if "relay" in args.parts:
        result["relay"] = measure_relay(frames, args.seconds)
    first, *others = args.backends
    result.update(measure_graphs(args, bag, frames, first, logs / (first or "default")))
    result["ratios"] = ratios(result)
    if others:
        result["other_backends"] = {}
        for backend in others:
            graphs = measure_graphs(args, bag, frames, backend, logs / backend)
            result["other_backends"][backend] = {**graphs, "ratios": ratios({"relay": result.get("relay"), **graphs})}
    return result
