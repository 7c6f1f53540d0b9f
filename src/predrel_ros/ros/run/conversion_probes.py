"""Measurement probes of `predrel bench conversions`: the message conversions a node pays per frame
(predrel_ros.ros.messages) and rclpy's own serialisation, as calls of the repeat index
(each cycles through a few prepared inputs) that the benchmark (tools/benchmarks/conversions.py) times.
Received messages are built as rclpy delivers them: serialised and deserialised.
"""
from __future__ import annotations

import array
from typing import Callable, Sequence

import numpy as np

Call = Callable[[int], object]


def _received(msg, kind):
    from rclpy.serialization import deserialize_message, serialize_message

    return deserialize_message(serialize_message(msg), kind)


def random_images(rng: np.random.Generator, encoding: str, height: int, width: int, count: int) -> list[np.ndarray]:
    """`count` images of random pixels of `encoding` (as the transport check sends)."""
    from predrel_ros.ros.messages.images import image_encoding
    from predrel_ros.ros.run.transport_check import make_frame

    return [make_frame(rng, image_encoding(encoding), height, width) for _ in range(count)]


def encoder(images: Sequence[np.ndarray], encoding: str) -> Call:
    """`numpy_to_image` of one of `images` into a new Image."""
    from predrel_ros.ros.messages.images import numpy_to_image

    return lambda i: numpy_to_image(images[i % len(images)], encoding)


def image_calls(images: Sequence[np.ndarray], encoding: str) -> dict[str, Call]:
    """encode, decode_received (`image_to_numpy` of a received Image), rclpy_serialize and
    rclpy_deserialize of such an Image."""
    from rclpy.serialization import deserialize_message, serialize_message
    from sensor_msgs.msg import Image

    from predrel_ros.ros.messages.images import image_to_numpy, numpy_to_image

    received = [_received(numpy_to_image(image, encoding), Image) for image in images]
    data = serialize_message(received[0])
    return {"encode": encoder(images, encoding),
            "decode_received": lambda i: image_to_numpy(received[i % len(received)]),
            "rclpy_serialize": lambda i: serialize_message(received[i % len(received)]),
            "rclpy_deserialize": lambda i: deserialize_message(data, Image)}


def array_baseline(images: Sequence[np.ndarray]) -> Call:
    """The common way to fill an Image: `msg.data = array.array('B', image.tobytes())`."""
    from sensor_msgs.msg import Image

    def fill(i: int) -> Image:
        msg = Image()
        msg.data = array.array("B", images[i % len(images)].tobytes())
        return msg
    return fill


def padded_rows_decode(image: np.ndarray, pad: int) -> Call:
    """`image_to_numpy` of an rgb8 Image whose rows carry `pad` bytes beyond the pixels."""
    from predrel_ros.ros.messages.images import image_to_numpy, numpy_to_image

    height, width = image.shape[:2]
    msg = numpy_to_image(image, "rgb8")
    rows = np.zeros((height, width * 3 + pad), np.uint8)
    rows[:, :width * 3] = image.reshape(height, -1)
    msg.step, msg.data = width * 3 + pad, rows.tobytes()
    return lambda i: image_to_numpy(msg)


def big_endian_decode(image: np.ndarray) -> Call:
    """`image_to_numpy` of a 16UC1 Image of big-endian data (the bytes are swapped)."""
    from predrel_ros.ros.messages.images import image_to_numpy, numpy_to_image

    msg = numpy_to_image(image.astype(">u2"), "16UC1")
    return lambda i: image_to_numpy(msg)


def record_calls(entities, estimates, width: int, height: int) -> dict[str, Call]:
    """entities_to_msg / entities_from_msg (a received EntityArray of `entities`) and
    predicates_to_msg / predicates_from_msg (a received PredicateArray of `estimates`)."""
    from predrel_ros.msg import EntityArray, PredicateArray
    from predrel_ros.ros.messages.entities import entities_from_msg, entities_to_msg
    from predrel_ros.ros.messages.predicates import predicates_from_msg, predicates_to_msg

    entity_msg = _received(entities_to_msg(entities, frame_index=0, image_width=width,
                                                       image_height=height, source="benchmark"), EntityArray)
    predicate_msg = _received(predicates_to_msg(estimates, frame_index=0, source="benchmark"),
                              PredicateArray)
    return {"entities_to_msg": lambda i: entities_to_msg(
                entities, frame_index=i, image_width=width, image_height=height, source="benchmark"),
            "entities_from_msg": lambda i: entities_from_msg(entity_msg),
            "predicates_to_msg": lambda i: predicates_to_msg(estimates, frame_index=i, source="benchmark"),
            "predicates_from_msg": lambda i: predicates_from_msg(predicate_msg)}
