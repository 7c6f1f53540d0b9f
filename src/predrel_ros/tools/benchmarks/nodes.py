"""What the replay and perception nodes cost on top of the libraries they wrap (`predrel bench nodes`).

One process, one SingleThreadedExecutor, real DDS: a replay_node plays a synthetic 320x240 bag (RGB,
depth, camera info, ground-truth entities with masks) paced by the degraded perception_node's
entities (rate 0), with a subscriber on every twin image, so every message is built and sent.

- replay: seconds per frame to degrade and publish the clean and degraded twins (image, depth,
  camera info, FrameInfo) plus the ground truth, per schedule; baseline in the same run: one bare
  `numpy_to_image` + `publish` of a 320x240 rgb8 image to one subscriber.
- perception: per frame, the worker's time outside `Perceiver.process` (conversions, detection
  noise, EntityArray, publish) and the receive-to-publish latency minus inference (adds the
  executor callbacks: validation, synchronisation, FrameInfo matching, hand-off to the worker).

The model is the embedded default model when installed, else the default architecture with random
weights (inference time is the model's, the node overhead does not depend on the weights).
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from predrel_ros.tools.benchmarks.report import peak_rss_mb, summarize

WIDTH, HEIGHT = 320, 240


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--frames", type=int, default=120, help="frames per schedule (default: %(default)s)")
    parser.add_argument("--schedules", nargs="+", default=["none", "blur:3", "detection_noise:3"],
                        help="degradation schedules of the degraded twin (default: %(default)s)")
    parser.add_argument("--model", default=None, help="model folder (default: the embedded model, else a stand-in)")


def _synthetic_bag(path: Path, frames: int) -> Path:
    from predrel_ros.core.entities import Entity
    from predrel_ros.sources.bag import write_bag
    from predrel_ros.core.frame import CameraIntrinsics, Frame

    rng = np.random.default_rng(0)
    camera = CameraIntrinsics(WIDTH, HEIGHT, 300.0, 300.0, WIDTH / 2, HEIGHT / 2)

    def entity(k: int, t: int) -> Entity:
        x, y = 20 + 50 * k + t % 20, 60 + 10 * k
        mask = np.zeros((HEIGHT, WIDTH), bool)
        mask[y:y + 40, x:x + 30] = True
        return Entity(id=k + 1, label="cube", role="manipulated_object", box=np.array([x, y, x + 30, y + 40], float),
                      mask=mask, frame_index=t)
    base = rng.integers(0, 256, (HEIGHT, WIDTH, 3), dtype=np.uint8)
    return write_bag(path, (Frame(index=t, stamp_ns=10**9 + t * 33_333_333, rgb=np.roll(base, t, axis=1),
                                  depth=np.full((HEIGHT, WIDTH), 1.2, np.float32), camera=camera,
                                  entities=[entity(k, t) for k in range(5)]) for t in range(frames)))


def _bare_publish(context, executor, repeats: int = 200) -> dict:
    """Baseline: one 320x240 rgb8 image converted and published to one subscriber."""
    import rclpy
    from sensor_msgs.msg import Image

    from predrel_ros.ros.messages.fields import header_at
    from predrel_ros.ros.messages.images import numpy_to_image
    from predrel_ros.ros.kit.qos import image_qos
    from predrel_ros.ros.kit.runtime import spin_until

    node = rclpy.create_node("bare_publish", context=context)
    qos = image_qos("reliable", 50)
    publisher = node.create_publisher(Image, "bare", qos)
    received = []
    node.create_subscription(Image, "bare", received.append, qos)
    executor.add_node(node)
    spin_until(executor, lambda: publisher.get_subscription_count() > 0, 10)
    rgb = np.random.default_rng(1).integers(0, 256, (HEIGHT, WIDTH, 3), dtype=np.uint8)
    header = header_at(1, "cam")
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        publisher.publish(numpy_to_image(rgb, "rgb8", header))
        seconds.append(time.perf_counter() - start)
        executor.spin_once(timeout_sec=0.01)
    executor.remove_node(node)
    node.destroy_node()
    return summarize(seconds)


def _run_schedule(context, executor, bag: Path, model_dir: Path, schedule: str, frames: int) -> dict:
    import rclpy
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import Image

    from predrel_ros.msg import EntityArray
    from predrel_ros.ros.nodes.perception_node import PerceptionNode
    from predrel_ros.ros.nodes.replay_node import ReplayNode
    from predrel_ros.ros.kit.runtime import spin_until

    def params(**values):
        return [Parameter(k, value=v) for k, v in values.items()]
    perception = PerceptionNode(context=context, namespace="degraded", parameter_overrides=params(
        model_path=str(model_dir), use_depth=True, image_qos="reliable"))
    process, inference, worker = perception.perceiver.process, [], []

    def timed_process(*args, **kwargs):
        start = time.perf_counter()
        try:
            return process(*args, **kwargs)
        finally:
            inference.append(time.perf_counter() - start)
    perception.perceiver.process = timed_process
    node_process = perception._process

    def timed_worker(item):
        start = time.perf_counter()
        node_process(item)
        worker.append(time.perf_counter() - start)
    perception.worker._process = timed_worker
    latency: list[float] = []
    publish = perception.entities_publisher.publish

    def stamped_publish(msg):
        publish(msg)
        latency.append(time.monotonic())
    perception.entities_publisher.publish = stamped_publish
    received_at: dict[int, float] = {}
    on_frame = perception.inputs._on_frame

    def note_received(frame):
        received_at[frame.stamp_ns] = frame.received
        on_frame(frame)
    perception.inputs._on_frame = note_received

    sink = rclpy.create_node("sink", context=context)
    for topic in ("clean/image_raw", "clean/depth/image_raw", "degraded/image_raw", "degraded/depth/image_raw"):
        sink.create_subscription(Image, topic, lambda msg: None, 10)
    entities = []
    sink.create_subscription(EntityArray, "degraded/entities", entities.append, 50)
    replay = ReplayNode(context=context, parameter_overrides=params(
        source=str(bag), rate=0.0, pace_topic="degraded/entities", pace_type="entities", schedule=schedule,
        shutdown_when_done=True, wait_for_subscribers=1, image_qos="reliable", image_qos_depth=10))
    replay_seconds: list[float] = []
    replay_publish = replay._publish

    def timed_publish(item):
        start = time.perf_counter()
        try:
            return replay_publish(item)
        finally:
            replay_seconds.append(time.perf_counter() - start)
    replay._publish = timed_publish
    nodes = (perception, sink, replay)
    for node in nodes:
        executor.add_node(node)
    try:
        spin_until(executor, lambda: replay.exit_code is not None, 60 + frames)
        spin_until(executor, lambda: len(entities) >= frames, 10)
    finally:
        for node in nodes:
            executor.remove_node(node)
            node.destroy_node()
    stamps = [m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for m in entities]
    end_to_end = [done - received_at[stamp] for stamp, done in zip(stamps, latency) if stamp in received_at]
    n = min(len(end_to_end), len(inference))
    return {"schedule": schedule, "frames_published": replay.next_index, "entity_arrays": len(entities),
            "replay_frame": summarize(replay_seconds),
            "perception_inference": summarize(inference),
            "perception_worker_outside_perceiver": summarize(np.subtract(worker[:n], inference[:n])),
            "perception_receive_to_publish_minus_inference": summarize(np.subtract(end_to_end[:n], inference[:n]))}


def run(args: argparse.Namespace) -> dict:
    import rclpy
    from rclpy.executors import SingleThreadedExecutor

    from predrel_ros.tools.benchmarks.perception import _stand_in_model
    from predrel_ros.core.errors import UserError
    from predrel_ros.perception.config import DEFAULT_MODEL_DIR

    if args.frames < 10:
        raise UserError("--frames must be at least 10")
    context = rclpy.Context()
    rclpy.init(context=context)
    executor = SingleThreadedExecutor(context=context)
    try:
        with tempfile.TemporaryDirectory(prefix="predrel-bench-nodes-") as scratch:
            scratch = Path(scratch)
            bag = _synthetic_bag(scratch / "bag", args.frames)
            given = args.model or (DEFAULT_MODEL_DIR if (DEFAULT_MODEL_DIR / "model.onnx").is_file() else None)
            model = {"path": str(given), "weights": "trained"} if given else _stand_in_model(
                scratch / "model", HEIGHT, WIDTH)
            model_dir = Path(given) if given else scratch / "model"
            baseline = _bare_publish(context, executor)
            rows = [_run_schedule(context, executor, bag, model_dir, schedule, args.frames)
                    for schedule in args.schedules]
    finally:
        executor.shutdown()
        rclpy.try_shutdown(context=context)
    for row in rows:
        row["replay_frame_ratio_to_bare_image_publish"] = round(
            row["replay_frame"]["median_ms"] / baseline["median_ms"], 2)
    return {"frame": f"{WIDTH}x{HEIGHT}", "model": model, "bare_image_publish": baseline, "results": rows,
            "peak_rss_mb": round(peak_rss_mb(), 1)}
