"""Helpers for tests that run predrel_ros nodes in this process over DDS (imported by file path:
`from node_graph import ...` works because conftest.py puts this folder on sys.path).

- `Probe`: a plain rclpy node collecting the messages of the topics a test watches;
- `scene_model(path)`: a tiny ONNX YOLO-seg model (tests/perception/conftest.py's builders) that
  detects the same cube, bowl and hand in every frame, so perception nodes run without the default
  model and their output is known;
- `run_until(executor, condition, timeout_s)`: spin, failing the test with a message on timeout;
- `fuzz(...)`: publish malformed messages one at a time, each until the node counted it.
"""
from __future__ import annotations

import importlib.util
from collections import defaultdict
from pathlib import Path
from typing import Callable, Sequence

from rclpy.qos import QoSProfile, ReliabilityPolicy

from predrel_ros.nodes.runtime import spin_until

#: what the probe and the fuzzers use: reliable, deep enough for a whole tiny episode
PROBE_QOS = QoSProfile(depth=200, reliability=ReliabilityPolicy.RELIABLE)


def _perception_builders():
    path = Path(__file__).resolve().parents[1] / "perception" / "conftest.py"
    spec = importlib.util.spec_from_file_location("perception_test_builders", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def scene_model(directory: Path) -> Path:
    """A model folder: model.onnx giving three fixed detections for any frame; labels cube, bowl, hand."""
    builders = _perception_builders()
    directory.mkdir(parents=True, exist_ok=True)
    builders.yoloseg_onnx(directory / "model.onnx", builders.yolo_output0(builders.SCENE_ROWS, 3),
                          builders.yolo_protos(64, 80, builders.SCENE_REGIONS))
    (directory / "labels.txt").write_text("cube\nbowl\nhand\n")
    (directory / "roles.yaml").write_text("bowl: container\n")
    return directory


class Probe:
    def __init__(self, context, name: str = "probe", namespace: str = "") -> None:
        import rclpy

        self.node = rclpy.create_node(name, namespace=namespace, context=context)
        self.messages: dict[str, list] = defaultdict(list)

    def watch(self, msg_type, topic: str, callback: Callable | None = None, qos: QoSProfile = PROBE_QOS) -> list:
        """Collect `topic`; `callback(msg)` also runs on each message. Returns the list."""
        received = self.messages[topic]

        def on_message(msg) -> None:
            received.append(msg)
            if callback is not None:
                callback(msg)
        self.node.create_subscription(msg_type, topic, on_message, qos)
        return received


def run_until(executor, condition: Callable[[], bool], timeout_s: float, what: str) -> None:
    if not spin_until(executor, condition, timeout_s):
        raise AssertionError(f"timed out after {timeout_s:g} s waiting for {what}")


def fuzz(executor, publisher, messages: Sequence, counted: Callable[[], int], burst: int = 1,
         timeout_s: float = 5.0) -> int:
    """Publish the messages `burst` at a time (no more than the subscription's queue holds), each time
    spinning until `counted()` grew by as many; returns how many were sent."""
    sent = 0
    for start in range(0, len(messages), burst):
        chunk = messages[start:start + burst]
        before = counted()
        for msg in chunk:
            publisher.publish(msg)
        run_until(executor, lambda: counted() >= before + len(chunk), timeout_s,
                  f"messages {start}..{start + len(chunk) - 1} to be counted on {publisher.topic_name}")
        sent += len(chunk)
    return sent
