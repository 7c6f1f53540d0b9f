"""The exchange of `predrel transport-check` and `predrel bench transport` (tools/cli/transport_check.py
says what it checks): echo_relay started in its own process, random images of an encoding and a
pattern of PredicateArrays sent to it at a rate, every echo compared with what was sent; the counts,
round-trip latencies and DDS settings as a result dict.
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

from predrel_ros.core.errors import UserError

#: predicates sent with every frame: (name, subject, object, values cycled through over frames)
PREDICATE_PATTERN = (
    ("contact", 1, 4, ("N", "T", "T", "UNK")),
    ("static", 4, 7, ("none", "Sup", "In", "Ab", "Be", "Ar")),
    ("dynamic", 1, 4, ("S", "GC", "MA", "MT", "FMT", "HT")),
    ("grasp", 1, 4, ("N", "T")),
    ("active_hand", 1, -1, ("T", "N")),
)


def _validate(args: argparse.Namespace) -> None:
    from predrel_ros.ros.messages.images import image_encoding
    if args.frames < 1:
        raise UserError(f"--frames must be >= 1, got {args.frames}")
    if not 0 < args.rate <= 1000:
        raise UserError(f"--rate must lie in (0, 1000] Hz, got {args.rate}")
    if args.width < 1 or args.height < 1:
        raise UserError(f"--width and --height must be >= 1, got {args.width}x{args.height}")
    if args.timeout <= 0:
        raise UserError(f"--timeout must be > 0, got {args.timeout}")
    try:
        image_encoding(args.encoding)
    except ValueError as error:
        raise UserError(str(error)) from None


def make_frame(rng: np.random.Generator, encoding, height: int, width: int) -> np.ndarray:
    shape = (height, width) if encoding.channels == 1 else (height, width, encoding.channels)
    if encoding.dtype.kind == "f":
        return rng.uniform(0.2, 10.0, size=shape).astype(encoding.dtype)
    return rng.integers(0, np.iinfo(encoding.dtype).max, size=shape, dtype=encoding.dtype, endpoint=True)


def make_predicates(frame_index: int):
    """The PredicateEstimates sent with frame `frame_index` (float32-exact confidences)."""
    from predrel_ros.predicates.estimate import EVIDENCE_FACTORS, PredicateEstimate
    estimates = []
    for k, (name, subject, obj, values) in enumerate(PREDICATE_PATTERN):
        value = values[frame_index % len(values)]
        confidence = ((frame_index + 7 * k) % 65) / 64.0
        evidence = {factor: ((frame_index + j) % 33) / 32.0 for j, factor in enumerate(EVIDENCE_FACTORS)}
        estimates.append(PredicateEstimate(name, subject, obj, value, confidence, evidence, frame_index))
    return estimates


def measure(args: argparse.Namespace) -> dict:
    """Run the exchange; returns counts and latencies (raises UserError when echo_relay never connects)."""
    _validate(args)
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import Image
    from std_msgs.msg import Header

    from predrel_ros.msg import PredicateArray
    from predrel_ros.ros.kit.runtime import spin_until
    from predrel_ros.ros.messages.images import image_encoding, image_to_numpy, numpy_to_image
    from predrel_ros.ros.messages.predicates import predicates_from_msg, predicates_to_msg
    from predrel_ros.ros.run import dds, processes
    from predrel_ros.ros.run.echo_relay import ECHO_QOS

    encoding = image_encoding(args.encoding)
    rng = np.random.default_rng(args.seed)
    frames = [make_frame(rng, encoding, args.height, args.width) for _ in range(args.frames)]
    predicates = [make_predicates(i) for i in range(args.frames)]
    namespace = f"/predrel_transport_check_{os.getpid()}"
    env = dds.node_environment()
    os.environ.update(env)  # this process uses the same DDS settings as echo_relay

    echo = processes.start_node("echo_relay", ["-r", f"__ns:={namespace}"], env=env)
    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("transport_check", namespace=namespace, context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    sent_at: dict[int, float] = {}
    index_of_stamp: dict[tuple[int, int], int] = {}
    latencies: list[float] = []
    images_intact = images_changed = predicates_intact = predicates_changed = 0

    def on_image_echo(msg: Image) -> None:
        nonlocal images_intact, images_changed
        index = index_of_stamp[(msg.header.stamp.sec, msg.header.stamp.nanosec)]
        latencies.append(time.perf_counter() - sent_at[index])
        if np.array_equal(image_to_numpy(msg), frames[index]):
            images_intact += 1
        else:
            images_changed += 1

    def on_predicates_echo(msg: PredicateArray) -> None:
        nonlocal predicates_intact, predicates_changed
        if predicates_from_msg(msg) == predicates[msg.frame_index]:
            predicates_intact += 1
        else:
            predicates_changed += 1

    try:
        image_pub = node.create_publisher(Image, "image", ECHO_QOS)
        predicate_pub = node.create_publisher(PredicateArray, "predicates", ECHO_QOS)
        image_sub = node.create_subscription(Image, "image_echo", on_image_echo, ECHO_QOS)
        predicate_sub = node.create_subscription(PredicateArray, "predicates_echo", on_predicates_echo, ECHO_QOS)
        connected = spin_until(executor, lambda: echo.poll() is not None or min(
            image_pub.get_subscription_count(), predicate_pub.get_subscription_count(),
            image_sub.get_publisher_count(), predicate_sub.get_publisher_count()) > 0, args.timeout)
        if echo.poll() is not None:
            raise UserError(f"echo_relay exited with code {echo.returncode} before connecting")
        if not connected:
            raise UserError(f"echo_relay did not connect within {args.timeout:g} s (DDS discovery failed: "
                            f"check ROS_DOMAIN_ID, ROS_AUTOMATIC_DISCOVERY_RANGE and the Fast DDS profile)")
        period = 1.0 / args.rate
        start = time.perf_counter()
        for index in range(args.frames):
            spin_until(executor, lambda: time.perf_counter() >= start + index * period, period + 1.0)
            header = Header(frame_id="transport_check", stamp=node.get_clock().now().to_msg())
            index_of_stamp[(header.stamp.sec, header.stamp.nanosec)] = index
            sent_at[index] = time.perf_counter()
            image_pub.publish(numpy_to_image(frames[index], encoding.name, header=header))
            predicate_pub.publish(predicates_to_msg(
                predicates[index], frame_index=index, source="transport_check", header=header))
        spin_until(executor, lambda: len(latencies) >= args.frames
                   and predicates_intact + predicates_changed >= args.frames, args.timeout)
        send_seconds = time.perf_counter() - start
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown(context=context)
        processes.stop_node(echo)

    ms = np.asarray(latencies) * 1e3
    return {
        "frames": args.frames, "rate_hz": args.rate, "encoding": encoding.name,
        "width": args.width, "height": args.height, "image_bytes": int(frames[0].nbytes),
        "images_intact": images_intact, "images_changed": images_changed,
        "images_lost": args.frames - images_intact - images_changed,
        "predicate_arrays_intact": predicates_intact, "predicate_arrays_changed": predicates_changed,
        "predicate_arrays_lost": args.frames - predicates_intact - predicates_changed,
        "round_trip_ms": {"median": float(np.median(ms)), "p95": float(np.percentile(ms, 95)),
                          "max": float(ms.max())} if ms.size else None,
        "seconds": send_seconds,
        "fastdds_profile": env.get(dds.PROFILE_VARIABLE, ""),
        "discovery_range": env.get(dds.DISCOVERY_VARIABLE, ""),
        "domain_id": env.get("ROS_DOMAIN_ID", "0"),
    }


def passed(result: dict) -> bool:
    return (result["images_intact"] == result["frames"]
            and result["predicate_arrays_intact"] == result["frames"])
