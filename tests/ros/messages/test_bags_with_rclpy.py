"""A controlled-set bag written by rosbags decodes with rclpy's deserializer and the nodes'
conversions (the path the replay node takes), to the same frames as the dataset folder."""
import numpy as np
import pytest
from ros_testing import require_ros

require_ros()

from rclpy.serialization import deserialize_message  # noqa: E402
from sensor_msgs.msg import CameraInfo, Image  # noqa: E402

from predrel_ros.msg import ActionEstimate, EntityArray, PredicateArray  # noqa: E402
from predrel_ros.ros.messages.camera_info import camera_info_to_intrinsics  # noqa: E402
from predrel_ros.ros.messages.entities import entities_from_msg  # noqa: E402
from predrel_ros.ros.messages.images import depth_image_to_metres, image_to_rgb8  # noqa: E402
from predrel_ros.ros.messages.predicates import predicates_from_msg  # noqa: E402
from predrel_ros.sources.bag import BagTopics  # noqa: E402
from predrel_ros.sources.dataset import open_dataset  # noqa: E402

pytestmark = pytest.mark.ros


def test_bag_decodes_with_rclpy_and_the_node_conversions(controlled_dataset):
    from rosbags.rosbag2 import Reader

    dataset = open_dataset(controlled_dataset)
    entry = dataset.manifest["episodes"][1]
    folder = list(dataset.episode(entry["name"]).frames())
    topics = BagTopics()
    types = {topics.color: Image, topics.depth: Image, topics.color_info: CameraInfo,
             topics.depth_info: CameraInfo, topics.entities: EntityArray, topics.predicates: PredicateArray,
             topics.action: ActionEstimate}
    decoded: dict[str, list] = {topic: [] for topic in types}
    with Reader(controlled_dataset / entry["paths"]["mcap"]) as reader:
        for connection, _, raw in reader.messages():
            decoded[connection.topic].append(deserialize_message(bytes(raw), types[connection.topic]))
    assert all(len(messages) == len(folder) for messages in decoded.values())
    for index, frame in enumerate(folder):
        np.testing.assert_array_equal(image_to_rgb8(decoded[topics.color][index]), frame.rgb)
        depth = depth_image_to_metres(decoded[topics.depth][index])
        np.testing.assert_allclose(depth, frame.depth, atol=0.0005)
        np.testing.assert_allclose(camera_info_to_intrinsics(decoded[topics.color_info][index]),
                                   frame.camera.K)
        entities = entities_from_msg(decoded[topics.entities][index])
        assert [(e.id, e.label, e.role) for e in entities] == [(e.id, e.label, e.role) for e in frame.entities]
        for got, want in zip(entities, frame.entities):
            assert (got.mask is None and not want.mask.any()) or np.array_equal(got.mask, want.mask)
        predicates = predicates_from_msg(decoded[topics.predicates][index])
        assert [(p.key, p.value, p.confidence) for p in predicates] == \
            [(p.key, p.value, p.confidence) for p in frame.predicates]
        assert decoded[topics.action][index].primitive == frame.primitive
        assert decoded[topics.color][index].header.stamp.nanosec == frame.stamp_ns % 1_000_000_000
