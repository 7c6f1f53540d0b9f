"""Check that two processes exchange camera images and predicates over DDS intact, and how fast.

Starts echo_relay in its own process, sends it FRAMES images (random pixels, a new image each
frame) and one PredicateArray per frame at RATE Hz, and compares every echo with what was sent:
pixel for pixel and predicate for predicate. Reports the round-trip latency (this process ->
echo_relay -> this process, both conversions included) and exits 1 when anything was lost or
changed. It uses the DDS settings of this shell (scripts/predrel-env.sh: the shipped shared-memory
profile, localhost discovery); run it on a robot to check its own DDS profile.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from predrel_ros.core.errors import UserError

EXAMPLES = """examples:
  predrel transport-check                         90 frames of 640x480 rgb8 at 30 Hz
  predrel transport-check --width 1280 --height 720 --frames 300
  predrel transport-check --encoding 32FC1        a depth stream
  FASTDDS_DEFAULT_PROFILES_FILE=my_profile.xml predrel transport-check
"""

#: predicates sent with every frame: (name, subject, object, values cycled through over frames)
PREDICATE_PATTERN = (
    ("contact", 1, 4, ("N", "T", "T", "UNK")),
    ("static", 4, 7, ("none", "Sup", "In", "Ab", "Be", "Ar")),
    ("dynamic", 1, 4, ("S", "GC", "MA", "MT", "FMT", "HT")),
    ("grasp", 1, 4, ("N", "T")),
    ("active_hand", 1, -1, ("T", "N")),
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--frames", type=int, default=90, help="frames to send (default 90)")
    parser.add_argument("--rate", type=float, default=30.0, help="frames per second (default 30)")
    parser.add_argument("--width", type=int, default=640, help="image width (default 640)")
    parser.add_argument("--height", type=int, default=480, help="image height (default 480)")
    parser.add_argument("--encoding", default="rgb8",
                        help="image encoding: rgb8, bgr8, rgba8, bgra8, mono8, mono16, 16UC1, 32FC1")
    parser.add_argument("--timeout", type=float, default=30.0,
                        help="seconds to wait for echo_relay to connect and for the last echo (default 30)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random images (default 0)")


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
    from predrel_ros.ros.messages.images import image_encoding, image_to_numpy, numpy_to_image
    from predrel_ros.ros.messages.predicates import predicates_from_msg, predicates_to_msg
    from predrel_ros.ros.run import dds, processes
    from predrel_ros.ros.run.echo_relay import ECHO_QOS
    from predrel_ros.ros.kit.runtime import spin_until

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


def run(args: argparse.Namespace) -> dict:
    """`predrel bench transport`: the measurement as a result dict."""
    return measure(args)


def main(args: argparse.Namespace) -> int:
    result = measure(args)
    rt = result["round_trip_ms"]
    print(f"transport check: {result['frames']} frames of {result['width']}x{result['height']} "
          f"{result['encoding']} ({result['image_bytes'] / 1e6:.2f} MB) + PredicateArray at "
          f"{result['rate_hz']:g} Hz through echo_relay (another process)")
    print(f"  DDS: profile {result['fastdds_profile'] or '(Fast DDS defaults)'}, discovery "
          f"{result['discovery_range'] or 'default'}, domain {result['domain_id']}")
    print(f"  images:     {result['images_intact']} intact, {result['images_changed']} changed, "
          f"{result['images_lost']} lost")
    print(f"  predicates: {result['predicate_arrays_intact']} intact, "
          f"{result['predicate_arrays_changed']} changed, {result['predicate_arrays_lost']} lost")
    if rt:
        print(f"  image round trip (encode, DDS, decode + encode in echo_relay, DDS, decode): median "
              f"{rt['median']:.1f} ms, p95 {rt['p95']:.1f} ms, max {rt['max']:.1f} ms")
    ok = passed(result)
    print("  result: " + ("PASS, every echo equals what was sent" if ok else "FAIL"),
          file=sys.stdout if ok else sys.stderr)
    return 0 if ok else 1
