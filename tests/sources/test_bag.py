from dataclasses import replace

import numpy as np
import pytest

from predrel_ros.core.errors import UserError
from predrel_ros.ros.messages.camera_info import camera_info_to_camera
from predrel_ros.ros.messages.fields import header_at, stamp_to_ns
from predrel_ros.ros.messages.images import depth_image_to_metres, image_to_rgb8, numpy_to_image
from predrel_ros.ros.messages.message_classes import ROSBAGS, typestore
from predrel_ros.sources.bag import (
    NONE,
    BagReader,
    BagTopics,
    BagWriter,
    CameraTopics,
    resolve_camera_topics,
    write_bag,
)


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
    with pytest.raises(UserError, match="no colour image topic '/other'"):
        BagReader(tmp_path / "bag", camera=CameraTopics(image="/other"))


@pytest.mark.parametrize("depth_compression", ["png", "rvl"])
def test_bag_of_another_driver_with_compressed_topics_reads_without_renaming(tmp_path, synthetic, depth_compression):
    """/camera/image_raw/compressed (png) and /camera/depth/image_raw/compressedDepth (png or rvl):
    found by type, camera info found beside the image."""
    frames = synthetic.make_frames(3)
    topics = BagTopics(color="/camera/image_raw/compressed", depth="/camera/depth/image_raw/compressedDepth",
                       color_info="/camera/camera_info", depth_info="/camera/depth/camera_info")
    with BagWriter(tmp_path / "bag", topics=topics, image_codec="png", compressed_depth=depth_compression) as writer:
        for frame in frames:
            writer.write(frame)
    reader = BagReader(tmp_path / "bag")
    assert (reader.topics.color, reader.topics.depth, reader.topics.color_info) == (
        topics.color, topics.depth, topics.color_info)
    for got, want in zip(reader.frames(), frames):
        synthetic.assert_same_ground_truth(got, want, depth_atol=0.0006)  # compressedDepth keeps millimetres


def test_raw_bag_with_colour_on_camera_image_raw_reads(tmp_path, synthetic):
    frames = synthetic.make_frames(2)
    topics = BagTopics(color="/camera/image_raw", depth=None, color_info="/camera/camera_info", depth_info=None)
    with BagWriter(tmp_path / "bag", topics=topics) as writer:
        for frame in frames:
            writer.write(replace(frame, depth=None))
    read = list(BagReader(tmp_path / "bag").frames())
    assert [f.depth for f in read] == [None, None] and read[0].camera == frames[0].camera
    np.testing.assert_array_equal(read[1].rgb, frames[1].rgb)


TYPES = {"/cam/left/image_raw": "sensor_msgs/msg/Image", "/cam/right/image_raw/compressed":
         "sensor_msgs/msg/CompressedImage", "/cam/left/camera_info": "sensor_msgs/msg/CameraInfo",
         "/cam/right/camera_info": "sensor_msgs/msg/CameraInfo", "/tf": "tf2_msgs/msg/TFMessage"}


def test_several_candidates_are_listed_and_a_flag_chooses():
    with pytest.raises(UserError, match=r"several colour image topics: /cam/left/image_raw \(Image\), "
                                        r"/cam/right/image_raw/compressed \(CompressedImage\); choose one "
                                        r"with --image-topic"):
        resolve_camera_topics(TYPES)
    right = resolve_camera_topics(TYPES, CameraTopics(image="/cam/right/image_raw/compressed"))
    assert right.color_info == "/cam/right/camera_info" and right.depth is None
    left = resolve_camera_topics(TYPES, CameraTopics(image="/cam/left/image_raw", camera_info=NONE))
    assert left.color_info is None


def test_camera_info_needs_a_choice_only_when_none_is_beside_the_image():
    types = {"/a/image": "sensor_msgs/msg/Image", "/b/camera_info": "sensor_msgs/msg/CameraInfo",
             "/c/camera_info": "sensor_msgs/msg/CameraInfo"}
    with pytest.raises(UserError, match="several camera info topics: /b/camera_info.*with --camera-info-topic"):
        resolve_camera_topics(types)
    assert resolve_camera_topics(types, CameraTopics(camera_info="/c/camera_info")).color_info == "/c/camera_info"
    assert resolve_camera_topics({"/a/image": "sensor_msgs/msg/Image"}).color_info is None


def test_depth_candidates_and_wrong_types_are_clear_errors():
    types = {"/cam/color/image_raw": "sensor_msgs/msg/Image", "/cam/depth/image_rect_raw": "sensor_msgs/msg/Image",
             "/cam/aligned_depth_to_color/image_raw": "sensor_msgs/msg/Image"}
    with pytest.raises(UserError, match="several depth image topics.*--depth-topic none to leave it out"):
        resolve_camera_topics(types)
    chosen = resolve_camera_topics(types, CameraTopics(depth="/cam/aligned_depth_to_color/image_raw"))
    assert chosen.color == "/cam/color/image_raw" and chosen.depth == "/cam/aligned_depth_to_color/image_raw"
    assert resolve_camera_topics(types, CameraTopics(depth=NONE)).depth is None
    with pytest.raises(UserError, match="is sensor_msgs/msg/Image; expected one of"):
        resolve_camera_topics(types, CameraTopics(depth=NONE, camera_info="/cam/color/image_raw"))
    with pytest.raises(UserError, match="no colour image topic \\(sensor_msgs/Image or CompressedImage\\)"):
        resolve_camera_topics({"/tf": "tf2_msgs/msg/TFMessage"})
    with pytest.raises(UserError, match="cannot be left out"):
        resolve_camera_topics(types, CameraTopics(image=NONE))
