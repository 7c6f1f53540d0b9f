"""Measurement probes of `predrel bench pipeline` (tools/benchmarks/pipeline.py): the ROS side of its
two measurements. The benchmark drives them and keeps the clock, the windows and the meters.

- `ImageRelay`: echo_relay started in its own process (in a namespace of its own) and a node of
  this process that publishes rgb8 images to it and hands every copy's latency (publish stamp ->
  arrival) to a callback.
- `WatchedGraph`: a run file's graph started by the runner in a thread of this process (in a
  namespace of its own), and a node here that hands the latency of every message on some of the
  graph's output topics to a callback (header stamp -> arrival), calls another for each FrameInfo
  the replay publishes (graphs with a replay) and keeps each node's counters from /diagnostics; for
  a graph without a replay it is the camera (`publish_camera`).

Both are context managers: leaving one stops what it started.
"""
from __future__ import annotations

import os
import signal
import subprocess
import threading
from contextlib import ExitStack
from pathlib import Path
from typing import Callable, Mapping, Sequence

from predrel_ros.core.errors import UserError

#: how long echo_relay may take to connect
RELAY_CONNECT_TIMEOUT_S = 30.0


def _stamp_latency(node, header) -> float:
    now = node.get_clock().now().nanoseconds
    return (now - (header.stamp.sec * 1_000_000_000 + header.stamp.nanosec)) / 1e9


class _Probe:
    """What the probes share: a node of this process spun by `spin_until`, and what leaving stops."""

    def __init__(self) -> None:
        self._stack = ExitStack()
        self._executor = None

    def __exit__(self, *exc_info) -> None:
        self._stack.close()

    def spin_until(self, condition: Callable[[], bool], timeout_s: float) -> bool:
        from predrel_ros.ros.kit.runtime import spin_until

        return spin_until(self._executor, condition, timeout_s)


class ImageRelay(_Probe):
    """This process -> echo_relay (another process) -> this process, for rgb8 images.

    `on_echo(stamp, latency_s)` gets each copy, `stamp` being what `publish` returned for it; copies
    arrive while `spin_until` spins."""

    def __init__(self, on_echo: Callable[[tuple[int, int], float], None]) -> None:
        super().__init__()
        self._on_echo = on_echo

    def __enter__(self) -> ImageRelay:
        import rclpy
        from sensor_msgs.msg import Image

        from predrel_ros.ros.kit.runtime import fresh_context
        from predrel_ros.ros.run import processes
        from predrel_ros.ros.run.echo_relay import ECHO_QOS

        namespace = f"/predrel_bench_relay_{os.getpid()}"
        with ExitStack() as stack:
            self.process = processes.start_node("echo_relay", ["-r", f"__ns:={namespace}"],
                                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            stack.callback(processes.stop_node, self.process)
            context, self._executor = stack.enter_context(fresh_context())
            self._node = rclpy.create_node("bench_relay", namespace=namespace, context=context)
            stack.callback(self._node.destroy_node)
            self._executor.add_node(self._node)

            def on_echo(msg: Image) -> None:
                self._on_echo((msg.header.stamp.sec, msg.header.stamp.nanosec), _stamp_latency(self._node, msg.header))
            self._publisher = self._node.create_publisher(Image, "image", ECHO_QOS)
            subscription = self._node.create_subscription(Image, "image_echo", on_echo, ECHO_QOS)
            if not self.spin_until(lambda: self.process.poll() is None and self._publisher.get_subscription_count() > 0
                                   and subscription.get_publisher_count() > 0, RELAY_CONNECT_TIMEOUT_S):
                raise UserError(f"echo_relay did not connect within {RELAY_CONNECT_TIMEOUT_S:g} s "
                                f"(DDS discovery failed)")
            self._stack = stack.pop_all()
        return self

    @property
    def pid(self) -> int:
        """echo_relay's process id."""
        return self.process.pid

    def publish(self, image) -> tuple[int, int]:
        """Publish `image` (rgb8) stamped now; returns the stamp (sec, nanosec)."""
        from std_msgs.msg import Header

        from predrel_ros.ros.messages.images import numpy_to_image

        header = Header(frame_id="bench", stamp=self._node.get_clock().now().to_msg())
        self._publisher.publish(numpy_to_image(image, "rgb8", header=header))
        return header.stamp.sec, header.stamp.nanosec


class WatchedGraph(_Probe):
    """The graph of `run_file` (with argument `values`) under `namespace`, its logs and the
    runner's in `log_dir`. `on_output(topic, latency_s)` gets each message of the `outputs` (topics
    relative to the namespace: PredicateArray, or ActionEstimate for topics ending in "action"),
    `on_frame_info()` each message on `frame_info_topic` (None: no FrameInfo to count); both while
    `spin_until` spins. With `camera_topic`, `publish_camera` publishes rgb8 images on it."""

    def __init__(self, run_file: Path, values: Mapping[str, str], namespace: str, log_dir: Path,
                 outputs: Sequence[str], on_output: Callable[[str, float], None],
                 on_frame_info: Callable[[], None] = lambda: None, frame_info_topic: str | None = None,
                 camera_topic: str | None = None) -> None:
        self.run_file, self.values, self.namespace, self.log_dir = run_file, values, namespace, log_dir
        self.outputs, self._on_output, self._on_frame_info = outputs, on_output, on_frame_info
        self.frame_info_topic, self.camera_topic = frame_info_topic, camera_topic
        self._camera = None
        #: node name (without the namespace) -> its counters, from the latest /diagnostics
        self.counters: dict[str, dict[str, int]] = {}
        #: the runner's exit status, once it has ended
        self.status: list[int] = []
        super().__init__()

    def __enter__(self) -> WatchedGraph:
        import rclpy
        from diagnostic_msgs.msg import DiagnosticArray
        from sensor_msgs.msg import Image

        from predrel_ros.msg import ActionEstimate, FrameInfo, PredicateArray
        from predrel_ros.ros.kit.qos import SENSOR_DATA, STREAM_QOS, image_qos
        from predrel_ros.ros.kit.runtime import fresh_context
        from predrel_ros.ros.nodes.dashboard_node import node_status
        from predrel_ros.ros.run.run_file import load_run_file
        from predrel_ros.ros.run.runner import Runner

        run = load_run_file(self.run_file, dict(self.values), namespace=self.namespace)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        with ExitStack() as stack:
            runner_log = stack.enter_context(open(self.log_dir / "runner.log", "w"))
            self._runner = Runner(run, self.log_dir, out=runner_log, err=runner_log)
            self._thread = threading.Thread(target=lambda: self.status.append(self._runner.run()),
                                            name="pipeline runner", daemon=True)
            context, self._executor = stack.enter_context(fresh_context())
            self._node = node = rclpy.create_node("bench_pipeline", namespace=f"/{self.namespace}", context=context)
            stack.callback(node.destroy_node)
            self._executor.add_node(node)
            prefix = f"/{self.namespace}/"

            def on_diagnostics(msg: DiagnosticArray) -> None:
                for status_msg in msg.status:
                    if status_msg.name.startswith(prefix):
                        view = node_status(status_msg)
                        if view.counters:
                            self.counters[status_msg.name[len(prefix):]] = dict(view.counters)

            for topic in self.outputs:
                kind = ActionEstimate if topic.endswith("action") else PredicateArray
                node.create_subscription(kind, topic, lambda msg, t=topic: self._on_output(
                    t, _stamp_latency(node, msg.header)), STREAM_QOS)
            if self.frame_info_topic:
                node.create_subscription(FrameInfo, self.frame_info_topic, lambda msg: self._on_frame_info(),
                                         STREAM_QOS)
            if self.camera_topic:
                self._camera = node.create_publisher(Image, self.camera_topic, image_qos(SENSOR_DATA, 5))  # a driver's
            node.create_subscription(DiagnosticArray, "/diagnostics", on_diagnostics, 10)
            self._thread.start()
            stack.callback(self._thread.join, run.shutdown_timeout_s + 10)
            stack.callback(self._runner.request_stop, signal.SIGINT)
            self._stack = stack.pop_all()
        return self

    def publish_camera(self, image) -> None:
        """Publish `image` (rgb8) on the camera topic, stamped now (the latency's start)."""
        from std_msgs.msg import Header

        from predrel_ros.ros.messages.images import numpy_to_image

        header = Header(frame_id="camera", stamp=self._node.get_clock().now().to_msg())
        self._camera.publish(numpy_to_image(image, "rgb8", header=header))

    def camera_subscribers(self) -> int:
        return self._camera.get_subscription_count()

    def running(self) -> bool:
        """Whether the run is still going on (the runner has not ended)."""
        return self._thread.is_alive()

    def process_ids(self) -> dict[str, int]:
        """Node label (without the namespace) -> process id."""
        return {process.spec.label[len(self.namespace) + 1:]: process.process.pid
                for process in self._runner.processes}
