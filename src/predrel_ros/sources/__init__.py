"""Frames in and out: dataset folders, rosbag2 bags, video files and image folders.

Every reader yields the same `predrel_ros.core.frame.Frame` (rgb, depth, camera, ground truth when
the source has it). Modules: `frame` (Frame, CameraIntrinsics, PRIMITIVE_LABELS), `dataset`
(folder format, `open_dataset`, `open_episode`, `EpisodeWriter`), `bag` (`BagReader`, `BagWriter`,
topic names; the messages are converted by predrel_ros.ros.messages with rosbags classes, no
rclpy), `video` (video files and image folders), `open_source` (`open_frames(path)` for any of them).
"""
