"""The one conversion layer between ROS messages and the package's plain-Python records.

Every conversion has one definition and serves both kinds of message object: rclpy's (the nodes)
and those of a `rosbags` type store (predrel_ros.sources.bag, no ROS install). Decoders
(`*_from_msg`, `image_to_numpy`, ...) read fields by name; encoders (`*_to_msg`, `numpy_to_image`,
...) take `classes=` (`message_classes.RCLPY` by default, `message_classes.ROSBAGS` for bags). No
module here imports rclpy or a message package at import time. Bad input raises `ValueError`
naming the message field at fault.

| module | converts |
| --- | --- |
| `message_classes` | where the classes come from: `RCLPY`, `ROSBAGS` (`typestore()`, `message_directory()`) |
| `fields` | std_msgs/Header <-> nanoseconds, the ROS string check |
| `images` | sensor_msgs/Image <-> numpy (encodings, RGB, depth in metres) |
| `camera_info` | sensor_msgs/CameraInfo <-> intrinsics |
| `entities` | Entity, EntityArray <-> `core.entities.Entity` (masks as run-length encoding) |
| `predicates` | Predicate, PredicateArray <-> `PredicateEstimate` |
| `degradations` | DegradationState <-> `DegradationInfo` |
| `frame_info` | FrameInfo <-> `FrameInfoData` |
| `actions` | ActionEstimate <-> class probabilities, ground-truth primitives |
| `reliability` | PredicateReliability, ReliabilityReport <-> `reliability.monitor` records and reports |
"""
