import numpy as np
import pytest

from predrel_ros.core.errors import UserError
from predrel_ros.ros.messages.camera_info import camera_info_to_camera
from predrel_ros.ros.messages.fields import header_at, stamp_to_ns
from predrel_ros.ros.messages.images import depth_image_to_metres, image_to_rgb8, numpy_to_image
from predrel_ros.ros.messages.message_classes import ROSBAGS, typestore
from predrel_ros.sources.bag import BagReader, BagTopics, BagWriter, write_bag


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_bag_round_trip_keeps_frames_and_ground_truth(tmp_path, synthetic, storage):
    frames = synthetic.make_frames()
    write_bag(tmp_path / "bag", frames, storage=storage, meta=synthetic.make_meta())
    reader = BagReader(tmp_path / "bag")
    assert reader.meta.template == "pick_and_place" and reader.meta.seed == 7
    assert reader.topic_types["/ground_truth/entities"] == "predrel_ros/msg/EntityArray"
    read = list(reader.frames())
    assert len(read) == len(frames)
    for got, want in zip(read, frames):
        synthetic.assert_same_ground_truth(got, want)
        assert got.source == "bag"


def test_bag_opens_with_plain_rosbags_and_decodes_with_our_conversions(tmp_path, synthetic):
    from rosbags.rosbag2 import Reader

    frames = synthetic.make_frames(2)
    write_bag(tmp_path / "bag", frames)
    store = typestore()
    with Reader(tmp_path / "bag") as reader:
        assert reader.message_count == 2 * 7  # 7 topics per frame
        by_topic = {}
        for connection, timestamp, raw in reader.messages():
            message = store.deserialize_cdr(raw, connection.msgtype)
            assert stamp_to_ns(message.header) == timestamp
            by_topic.setdefault(connection.topic, []).append(message)
    rgb = image_to_rgb8(by_topic["/camera/color/image_raw"][1])
    np.testing.assert_array_equal(rgb, frames[1].rgb)
    assert by_topic["/camera/depth/image_raw"][0].encoding == "32FC1"
    depth = depth_image_to_metres(by_topic["/camera/depth/image_raw"][0])
    np.testing.assert_array_equal(depth, frames[0].depth)
    camera = camera_info_to_camera(by_topic["/camera/color/camera_info"][0])
    assert camera == frames[0].camera
    action = by_topic["/ground_truth/action"][1]
    assert action.primitive == "grasp" and action.probabilities.sum() == pytest.approx(1.0)


def test_reader_attaches_parts_within_slop(tmp_path, synthetic):
    """A robot bag whose depth stamps trail the colour stamps by 2 ms still pairs them."""
    frames = synthetic.make_frames(3)
    store = typestore()
    from rosbags.rosbag2 import StoragePlugin, Writer

    topics = BagTopics()
    with Writer(tmp_path / "bag", version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        color = writer.add_connection(topics.color, "sensor_msgs/msg/Image", typestore=store)
        depth = writer.add_connection(topics.depth, "sensor_msgs/msg/Image", typestore=store)
        for frame in frames:
            for connection, image, encoding, stamp in ((color, frame.rgb, "rgb8", frame.stamp_ns),
                                                       (depth, frame.depth, "32FC1", frame.stamp_ns + 2_000_000)):
                message = numpy_to_image(image, encoding, header_at(stamp, "camera", classes=ROSBAGS),
                                         classes=ROSBAGS)
                writer.write(connection, stamp, store.serialize_cdr(message, message.__msgtype__))
    exact = list(BagReader(tmp_path / "bag").frames())
    assert [f.depth is None for f in exact] == [True, True, True]
    paired = list(BagReader(tmp_path / "bag", slop_ns=5_000_000).frames())
    assert all(f.depth is not None for f in paired) and paired[0].entities is None
    np.testing.assert_array_equal(paired[2].depth, frames[2].depth)


def test_bgr_and_16bit_depth_encodings_are_read():
    class Image:
        def __init__(self, array, encoding):
            self.height, self.width = array.shape[:2]
            self.step = array.strides[0]
            self.encoding, self.is_bigendian, self.data = encoding, 0, array.tobytes()

    bgr = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3)
    np.testing.assert_array_equal(image_to_rgb8(Image(bgr, "bgr8")), bgr[..., ::-1])
    depth = np.array([[0, 1500]], np.uint16)
    read = depth_image_to_metres(Image(depth, "16UC1"))
    assert np.isnan(read[0, 0]) and read[0, 1] == pytest.approx(1.5)
    with pytest.raises(UserError, match="unsupported image encoding"):
        image_to_rgb8(Image(bgr, "yuv422"))


def test_writer_and_reader_refuse_bad_paths(tmp_path, synthetic):
    write_bag(tmp_path / "bag", synthetic.make_frames(1))
    with pytest.raises(UserError, match="already exists"):
        BagWriter(tmp_path / "bag")
    with pytest.raises(UserError, match="no such bag"):
        BagReader(tmp_path / "missing")
    with pytest.raises(UserError, match="no colour image topic"):
        BagReader(tmp_path / "bag", topics=BagTopics(color="/other"))
