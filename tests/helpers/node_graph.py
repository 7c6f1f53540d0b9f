"""Helpers for tests that run predrel_ros nodes in this process over DDS (`from node_graph import ...`:
pytest.ini puts tests/helpers on sys.path).

- `Probe`: a plain rclpy node collecting the messages of the topics a test watches;
- `scene_model(path)`: a tiny ONNX YOLO-seg model (tests/helpers/model_builders.py) that
  detects the same cube, bowl and hand in every frame, so perception nodes run without the default
  model and their output is known;
- `run_until(executor, condition, timeout_s)`: spin, failing the test with a message on timeout;
- `activated(node, executor)`: spin a lifecycle node (autostart) until it is active, failing the test
  with its transition error if it ends anywhere else;
- `call(executor, client, request)`: one service call over DDS, with how long it took;
  `set_parameters(executor, probe, node, values)`: what `ros2 param set` does (SetParameters);
- `fuzz(...)`: publish malformed messages one at a time, each until the node counted it;
  `frames_to_recover(...)`: how many good frames a node needs after a malformed burst to process
  one again (the fuzz goal: at most FUZZ_RECOVERY_FRAMES);
  `resident_bytes()`, `assert_memory_bounded(before, what)`: the fuzz goal of at most
  FUZZ_MEMORY_BOUND growth of the resident memory (the nodes under test run in this process);
- `entity_msg(frame)`, `malformed_entities(frames, count)`: EntityArrays of dataset frames, good and
  malformed in many ways (for every node that subscribes to entities);
- `FAR_STAMP_NS`, `FAR_INDEX`, `with_far_future(...)`: a stream with one value far in the future, and
  the frames a node must still take by the stream-order policy.
"""
from __future__ import annotations

import math
from collections import defaultdict
from typing import Callable, Sequence

import model_builders
import numpy as np
from rclpy.qos import QoSProfile, ReliabilityPolicy

from predrel_ros.ros.kit.runtime import spin_until

#: what the probe and the fuzzers use: reliable, deep enough for a whole tiny episode
PROBE_QOS = QoSProfile(depth=200, reliability=ReliabilityPolicy.RELIABLE)


#: a header stamp far in the future (builtin_interfaces/Time sec = 2**31 - 1), a frame_index as far
FAR_STAMP_NS = (2**31 - 1) * 10**9
FAR_INDEX = 2**64 - 1


def with_far_future(normal: Sequence, far, first: bool) -> tuple[list, list]:
    """(what to send: the `normal` values with `far` among them, first or after the third; the normal
    values a node must take: all of them when an accepted frame came before `far`, else all but the
    first RESTART_AFTER - 1, the bound of the stream-order policy)."""
    from predrel_ros.core.stream_order import RESTART_AFTER

    normal = list(normal)
    if first:
        return [far] + normal, normal[RESTART_AFTER - 1:]
    return normal[:3] + [far] + normal[3:], normal


#: a tiny ONNX YOLO-seg model folder (tests/helpers/model_builders.py)
scene_model = model_builders.scene_model


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


def activated(node, executor, timeout_s: float = 30.0):
    """`node` (a PredrelLifecycleNode with autostart), added to `executor` and spun until active."""
    executor.add_node(node)
    run_until(executor, lambda: node.lifecycle_state == "active" or (
        not node._busy and node.last_transition_error != ""), timeout_s, f"{node.get_name()} to become active")
    if node.lifecycle_state != "active":
        raise AssertionError(f"{node.get_name()}: {node.last_transition_error} (state {node.lifecycle_state})")
    return node


def call(executor, client, request, timeout_s=10.0):
    """(response, seconds) of one service call over DDS."""
    import time

    run_until(executor, lambda: client.service_is_ready(), 10, f"service {client.srv_name}")
    start = time.monotonic()
    future = client.call_async(request)
    run_until(executor, future.done, timeout_s, f"the response of {client.srv_name}")
    return future.result(), time.monotonic() - start


def set_parameters(executor, probe: Probe, node_name: str, values: dict) -> list:
    """The SetParametersResults of setting `values` on node `node_name` (fully qualified) over its
    set_parameters service, one parameter per call as `ros2 param set` does."""
    from rcl_interfaces.srv import SetParameters
    from rclpy.parameter import Parameter

    client = probe.node.create_client(SetParameters, f"{node_name}/set_parameters")
    results = []
    for name, value in values.items():
        response, _ = call(executor, client, SetParameters.Request(
            parameters=[Parameter(name, value=value).to_parameter_msg()]))
        results.append(response.results[0])
    probe.node.destroy_client(client)
    return results


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


#: issue 15: a node processes a valid frame again within this many frames after a malformed burst
FUZZ_RECOVERY_FRAMES = 10


def frames_to_recover(executor, publish_good: Callable[[int], None], processed: Callable[[], int],
                      what: str) -> int:
    """Publish good frames (`publish_good(n)`, n = 0, 1, ...) one at a time until `processed()`
    grows; returns how many it took, failing beyond FUZZ_RECOVERY_FRAMES."""
    import sys

    before = processed()
    for n in range(FUZZ_RECOVERY_FRAMES):
        publish_good(n)
        if spin_until(executor, lambda: processed() > before, 2.0):
            print(f"{what}: a good frame processed after {n + 1}", file=sys.__stderr__)
            return n + 1
    raise AssertionError(f"{what}: no good frame processed in {FUZZ_RECOVERY_FRAMES} after a malformed burst")


#: issue 15: how much the resident memory may grow while a node takes 1,000 malformed messages per topic
FUZZ_MEMORY_BOUND = 50 * 2**20


def resident_bytes() -> int:
    """This process's resident set size (Linux /proc/self/statm) after a garbage collection."""
    import gc
    import os

    gc.collect()
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def assert_memory_bounded(before: int, what: str) -> int:
    """The growth since `before` (resident_bytes()), printed for the record; fails beyond
    FUZZ_MEMORY_BOUND. Measure `before` after building the messages, so that only what the node
    (and DDS) keeps counts."""
    import sys

    growth = resident_bytes() - before
    # the process's own stderr: a test may have replaced sys.stdout (the dashboard's display)
    print(f"resident memory growth, {what}: {growth / 2**20:+.1f} MiB", file=sys.__stderr__)
    assert growth < FUZZ_MEMORY_BOUND, f"{what}: resident memory grew {growth / 2**20:.1f} MiB"
    return growth


def entity_msg(frame, index=None, degradation=None):
    """The EntityArray of a dataset frame's ground-truth entities (`frame_index` = index, else the frame's)."""
    from predrel_ros.ros.messages.entities import entities_to_msg

    height, width = frame.entities[0].mask.shape
    return entities_to_msg(frame.entities, frame_index=frame.index if index is None else index,
                           image_width=width, image_height=height, source="ground_truth",
                           degradation=degradation)


def malformed_entities(episode, count):
    """`count` malformed EntityArrays of many kinds (each refused before it changes anything)."""
    rng = np.random.default_rng(0)

    def nan_box(msg):
        msg.entities[0].box[2] = math.nan

    def corrupt_runs(msg):
        msg.entities[0].mask_rle[-1] += 3                     # runs no longer sum to the crop

    def empty_runs(msg):
        msg.entities[0].mask_rle = []

    def crop_outside(msg):
        msg.entities[0].mask_x = msg.image_width             # crop leaves the image

    def nan_centroid(msg):
        msg.entities[1].centroid[0] = math.nan

    def nan_point(msg):
        msg.entities[1].has_point3d = True
        msg.entities[1].point3d[2] = math.inf

    def score_out_of_range(msg):
        msg.entities[0].score = 1.5

    def negative_visibility(msg):
        msg.entities[2].visibility = -0.1

    def unknown_role(msg):
        msg.entities[0].role = "robot"

    def duplicate_id(msg):
        msg.entities[1].id = msg.entities[0].id

    def no_image_size(msg):
        msg.image_height = 0                                 # masks cannot lie in an empty image

    def bad_degradation(msg):
        msg.degradation.severity = 9

    def unknown_degradation(msg):
        msg.degradation.kind = "fog"

    def inverted_box(msg):
        msg.entities[0].box = [50.0, 50.0, 10.0, 10.0]

    kinds = [nan_box, corrupt_runs, empty_runs, crop_outside, nan_centroid, nan_point, score_out_of_range,
             negative_visibility, unknown_role, duplicate_id, no_image_size, bad_degradation,
             unknown_degradation, inverted_box]
    for i in range(count):
        msg = entity_msg(episode[int(rng.integers(len(episode)))], index=100_000 + i)
        kinds[i % len(kinds)](msg)
        yield msg
