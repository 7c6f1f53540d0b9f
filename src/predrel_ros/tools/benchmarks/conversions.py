"""Cost of the message conversions a node pays per frame (predrel_ros.ros.messages.conversions).

Images: 640x480 (or --width/--height) decode of a received message (the message as rclpy delivers it
after deserialization) and encode into a new message, per encoding, plus padded rows and
big-endian data; the baseline is the common `msg.data = array.array('B', frame.tobytes())`, also
with the last 10 messages kept alive as in a publisher's queue (the allocator then behaves differently).
rclpy's own serialize/deserialize of the same message is shown for scale (it is paid on every
publish/receive whatever the conversion does). Records: an EntityArray of --entities entities with
masks and a PredicateArray of --predicates estimates, both directions.
"""
from __future__ import annotations

import argparse
import array
import time
from typing import Callable

import numpy as np

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


def run(args: argparse.Namespace) -> dict:
    from rclpy.serialization import deserialize_message, serialize_message
    from sensor_msgs.msg import Image

    from predrel_ros.core.entities import Entity
    from predrel_ros.msg import EntityArray, PredicateArray
    from predrel_ros.ros.messages.entities import entities_from_msg, entities_to_msg
    from predrel_ros.ros.messages.images import image_encoding, image_to_numpy, numpy_to_image
    from predrel_ros.ros.messages.predicates import predicates_from_msg, predicates_to_msg
    from predrel_ros.ros.run.transport_check import make_frame, make_predicates

    rng = np.random.default_rng(0)
    h, w, n = args.height, args.width, args.repeats
    result: dict = {"width": w, "height": h, "images": {}}
    for name in ENCODINGS:
        enc = image_encoding(name)
        frames = [make_frame(rng, enc, h, w) for _ in range(4)]
        received = [deserialize_message(serialize_message(numpy_to_image(f, name)), Image)
                    for f in frames]
        result["images"][name] = {
            "encode": _time(lambda i: numpy_to_image(frames[i % 4], name), n),
            "decode_received": _time(lambda i: image_to_numpy(received[i % 4]), n),
            "rclpy_serialize": _time(lambda i: serialize_message(received[i % 4]), max(20, n // 5)),
            "rclpy_deserialize": _time(
                lambda i, data=serialize_message(received[0]): deserialize_message(data, Image), max(20, n // 5)),
        }
    rgb = [make_frame(rng, image_encoding("rgb8"), h, w) for _ in range(4)]

    def baseline(i: int) -> Image:
        msg = Image()
        msg.data = array.array("B", rgb[i % 4].tobytes())
        return msg

    alive: list[Image] = []  # like a publisher's queue: the last 10 messages stay allocated

    def queued(make: Callable[[int], Image]) -> Callable[[int], None]:
        def step(i: int) -> None:
            alive.append(make(i))
            del alive[:-10]
        return step

    rgb8 = result["images"]["rgb8"]
    rgb8["baseline_array_tobytes"] = _time(baseline, n)
    rgb8["encode_10_alive"] = _time(queued(lambda i: numpy_to_image(rgb[i % 4], "rgb8")), n)
    rgb8["baseline_array_tobytes_10_alive"] = _time(queued(baseline), n)
    rgb8["encode_vs_baseline"] = rgb8["encode"]["median_ms"] / rgb8["baseline_array_tobytes"]["median_ms"]
    rgb8["encode_vs_baseline_10_alive"] = (rgb8["encode_10_alive"]["median_ms"]
                                           / rgb8["baseline_array_tobytes_10_alive"]["median_ms"])

    padded = numpy_to_image(rgb[0], "rgb8")
    pad = 64
    rows = np.zeros((h, w * 3 + pad), np.uint8)
    rows[:, :w * 3] = rgb[0].reshape(h, -1)
    padded.step, padded.data = w * 3 + pad, rows.tobytes()
    result["images"]["rgb8"]["decode_padded_rows"] = _time(lambda i: image_to_numpy(padded), n)
    big = numpy_to_image(make_frame(rng, image_encoding("16UC1"), h, w).astype(">u2"), "16UC1")
    result["images"]["16UC1"]["decode_big_endian_swap"] = _time(lambda i: image_to_numpy(big), n)

    def entity(k: int) -> Entity:
        y, x = divmod(k * 53, max(1, w - 80))
        mask = np.zeros((h, w), bool)
        yy, xx = np.ogrid[:h, :w]
        cy, cx = 40 + (y * 37) % (h - 80), 40 + x
        mask[(yy - cy) ** 2 + (xx - cx) ** 2 < 35 ** 2] = True
        return Entity(id=k, label="cube", role="manipulated_object",
                      box=(cx - 35, cy - 35, cx + 35, cy + 35), mask=mask, score=0.9)

    entities = [entity(k) for k in range(args.entities)]
    entity_msg = deserialize_message(serialize_message(entities_to_msg(
        entities, frame_index=0, image_width=w, image_height=h, source="benchmark")), EntityArray)
    estimates = [e for i in range(0, args.predicates, 5) for e in make_predicates(i)][:args.predicates]
    predicate_msg = deserialize_message(serialize_message(predicates_to_msg(
        estimates, frame_index=0, source="benchmark")), PredicateArray)
    result["records"] = {
        f"entities_to_msg_{len(entities)}_with_masks": _time(lambda i: entities_to_msg(
            entities, frame_index=i, image_width=w, image_height=h, source="benchmark"), max(20, n // 5)),
        f"entities_from_msg_{len(entities)}_with_masks": _time(
            lambda i: entities_from_msg(entity_msg), max(20, n // 5)),
        f"predicates_to_msg_{len(estimates)}": _time(lambda i: predicates_to_msg(
            estimates, frame_index=i, source="benchmark"), n),
        f"predicates_from_msg_{len(estimates)}": _time(
            lambda i: predicates_from_msg(predicate_msg), n),
    }
    result["peak_rss_mb"] = peak_rss_mb()
    return result
