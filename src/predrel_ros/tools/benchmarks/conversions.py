"""Cost of the message conversions a node pays per frame (predrel_ros.ros.messages.conversions).

Images: 640x480 (or --width/--height) decode of a received message (the message as rclpy delivers it
after deserialization) and encode into a new message, per encoding, plus padded rows and
big-endian data; the baseline is the common `msg.data = array.array('B', frame.tobytes())`, also
with the last 10 messages kept alive as in a publisher's queue (the allocator then behaves differently).
rclpy's own serialize/deserialize of the same message is shown for scale (it is paid on every
publish/receive whatever the conversion does). Records: an EntityArray of --entities entities with
masks and a PredicateArray of --predicates estimates, both directions. The calls timed are
ros/run/conversion_probes.py's. Compressed depth: a 16UC1 compressedDepth message of a depth image
like a sensor's (a sloped surface with noise, 5 % invalid pixels scattered and a 100 x 100 hole),
png and rvl, both directions, with the compressed size.
"""
from __future__ import annotations

import argparse
import time
from typing import Callable

import numpy as np

from predrel_ros.core.entities import Entity
from predrel_ros.tools.benchmarks.report import peak_rss_mb, summarize

ENCODINGS = ("rgb8", "bgra8", "mono8", "16UC1", "32FC1")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--width", type=int, default=640)
    parser.add_argument("--height", type=int, default=480)
    parser.add_argument("--repeats", type=int, default=200, help="timed repeats per case (default 200)")
    parser.add_argument("--entities", type=int, default=10, help="entities per EntityArray (default 10)")
    parser.add_argument("--predicates", type=int, default=60, help="estimates per PredicateArray (default 60)")


def _time(fn: Callable[[int], object], repeats: int) -> dict:
    fn(0)  # warm up
    seconds = []
    for i in range(repeats):
        start = time.perf_counter()
        fn(i)
        seconds.append(time.perf_counter() - start)
    return summarize(seconds)


def _queued(call: Callable[[int], object]) -> Callable[[int], None]:
    """`call` whose results stay alive for the next 10 calls, like messages in a publisher's queue."""
    alive: list = []

    def step(i: int) -> None:
        alive.append(call(i))
        del alive[:-10]
    return step


def _entity(k: int, width: int, height: int) -> Entity:
    y, x = divmod(k * 53, max(1, width - 80))
    mask = np.zeros((height, width), bool)
    yy, xx = np.ogrid[:height, :width]
    cy, cx = 40 + (y * 37) % (height - 80), 40 + x
    mask[(yy - cy) ** 2 + (xx - cx) ** 2 < 35 ** 2] = True
    return Entity(id=k, label="cube", role="manipulated_object", box=(cx - 35, cy - 35, cx + 35, cy + 35),
                  mask=mask, score=0.9)


def run(args: argparse.Namespace) -> dict:
    from predrel_ros.ros.run import conversion_probes as probes
    from predrel_ros.ros.run.transport_check import make_predicates

    rng = np.random.default_rng(0)
    h, w, n = args.height, args.width, args.repeats
    few = max(20, n // 5)  # repeats of the slower cases
    result: dict = {"width": w, "height": h, "images": {}}
    for name in ENCODINGS:
        calls = probes.image_calls(probes.random_images(rng, name, h, w, 4), name)
        result["images"][name] = {case: _time(call, few if case.startswith("rclpy_") else n)
                                  for case, call in calls.items()}
    rgb = probes.random_images(rng, "rgb8", h, w, 4)
    encode, baseline = probes.encoder(rgb, "rgb8"), probes.array_baseline(rgb)
    rgb8 = result["images"]["rgb8"]
    rgb8["baseline_array_tobytes"] = _time(baseline, n)
    rgb8["encode_10_alive"] = _time(_queued(encode), n)
    rgb8["baseline_array_tobytes_10_alive"] = _time(_queued(baseline), n)
    rgb8["encode_vs_baseline"] = rgb8["encode"]["median_ms"] / rgb8["baseline_array_tobytes"]["median_ms"]
    rgb8["encode_vs_baseline_10_alive"] = (rgb8["encode_10_alive"]["median_ms"]
                                           / rgb8["baseline_array_tobytes_10_alive"]["median_ms"])
    rgb8["decode_padded_rows"] = _time(probes.padded_rows_decode(rgb[0], pad=64), n)
    result["images"]["16UC1"]["decode_big_endian_swap"] = _time(
        probes.big_endian_decode(probes.random_images(rng, "16UC1", h, w, 1)[0]), n)

    entities = [_entity(k, w, h) for k in range(args.entities)]
    estimates = [e for i in range(0, args.predicates, 5) for e in make_predicates(i)][:args.predicates]
    calls = probes.record_calls(entities, estimates, w, h)
    result["records"] = {
        f"entities_to_msg_{len(entities)}_with_masks": _time(calls["entities_to_msg"], few),
        f"entities_from_msg_{len(entities)}_with_masks": _time(calls["entities_from_msg"], few),
        f"predicates_to_msg_{len(estimates)}": _time(calls["predicates_to_msg"], n),
        f"predicates_from_msg_{len(estimates)}": _time(calls["predicates_from_msg"], n),
    }
    result["compressed_depth"] = _compressed_depth(rng, h, w, few)
    result["peak_rss_mb"] = peak_rss_mb()
    return result


def _compressed_depth(rng: np.random.Generator, h: int, w: int, repeats: int) -> dict:
    from predrel_ros.ros.messages.images import DEPTH_COMPRESSIONS, depth_image_to_metres, numpy_to_compressed_depth

    yy, xx = np.mgrid[0:h, 0:w]
    metres = (0.8 + 0.002 * xx + 0.001 * yy + rng.normal(0, 0.003, (h, w))).astype(np.float32)
    metres[rng.random((h, w)) < 0.05] = np.nan
    metres[h // 4:h // 4 + 100, w // 2:w // 2 + 100] = np.nan
    cases = {}
    for compression in DEPTH_COMPRESSIONS:
        msg = numpy_to_compressed_depth(metres, "16UC1", compression=compression)
        cases[compression] = {
            "bytes": len(msg.data), "raw_bytes": h * w * 2,
            "encode": _time(lambda i, c=compression: numpy_to_compressed_depth(metres, "16UC1", compression=c),
                            repeats),
            "decode": _time(lambda i, m=msg: depth_image_to_metres(m), repeats)}
    return cases
