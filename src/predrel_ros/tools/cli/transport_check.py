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
import sys

EXAMPLES = """examples:
  predrel transport-check                         90 frames of 640x480 rgb8 at 30 Hz
  predrel transport-check --width 1280 --height 720 --frames 300
  predrel transport-check --encoding 32FC1        a depth stream
  FASTDDS_DEFAULT_PROFILES_FILE=my_profile.xml predrel transport-check
"""


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


def main(args: argparse.Namespace) -> int:
    from predrel_ros.ros.run.transport_check import measure, passed

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
