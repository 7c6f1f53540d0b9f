"""Publishing one stream of the clean/degraded twins: `<prefix>/image_raw`, `depth/image_raw`,
`camera_info` and `frame_info` (the replay and the live degrade node publish the same way).

FrameInfo goes out for every frame (also for frames the degradation dropped); the image, depth and
camera info only when the frame has content and somebody subscribes to them (lazy: no conversion
nobody receives). All parts of one frame share one header, so subscribers match them by stamp.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sensor_msgs.msg import CameraInfo, Image
from std_msgs.msg import Header

from predrel_ros.core.frame import CameraIntrinsics
from predrel_ros.msg import DegradationState, FrameInfo
from predrel_ros.ros.kit.node_base import PredrelNode, wanted
from predrel_ros.ros.kit.qos import STREAM_QOS, image_qos
from predrel_ros.ros.kit.topic_specs import IMAGE_QOS_TEXT, PUBLISHES, STREAM_QOS_TEXT, TopicSpec
from predrel_ros.ros.messages.camera_info import intrinsics_to_camera_info
from predrel_ros.ros.messages.frame_info import frame_info_to_msg
from predrel_ros.ros.messages.images import numpy_to_image


def stream_topics(prefix: str, what: str) -> tuple[TopicSpec, ...]:
    """The TopicSpecs of one twin stream (`prefix` "clean" or "degraded")."""
    return (
        TopicSpec(f"{prefix}/image_raw", "sensor_msgs/Image", PUBLISHES, IMAGE_QOS_TEXT, f"{what} colour image (rgb8)"),
        TopicSpec(f"{prefix}/depth/image_raw", "sensor_msgs/Image", PUBLISHES, IMAGE_QOS_TEXT,
                  f"{what} aligned depth (32FC1, metres)", "the source has depth"),
        TopicSpec(f"{prefix}/camera_info", "sensor_msgs/CameraInfo", PUBLISHES, IMAGE_QOS_TEXT,
                  "intrinsics of the image", "the source has intrinsics"),
        TopicSpec(f"{prefix}/frame_info", "predrel_ros/FrameInfo", PUBLISHES, STREAM_QOS_TEXT,
                  "every frame, also dropped ones: frame_index, deliver/repeat/drop, degradation"),
    )


@dataclass
class Published:
    image: bool = False
    depth: bool = False


class StreamPublishers:
    """The publishers of one twin stream on `node`; counts images built for nobody as
    `<prefix>.no_subscribers`."""

    def __init__(self, node: PredrelNode, prefix: str, image_qos_name: str, image_qos_depth: int) -> None:
        self._node = node
        self.prefix = prefix
        profile = image_qos(image_qos_name, image_qos_depth)
        self.image = node.publisher(Image, f"{prefix}/image_raw", profile)
        self.depth = node.publisher(Image, f"{prefix}/depth/image_raw", profile)
        self.camera_info = node.publisher(CameraInfo, f"{prefix}/camera_info", profile)
        self.frame_info = node.publisher(FrameInfo, f"{prefix}/frame_info", STREAM_QOS)

    def publish(self, header: Header, frame_index: int, source: str, action: str, source_index: int,
                degradation: DegradationState, rgb: np.ndarray | None, depth: np.ndarray | None = None,
                camera: CameraIntrinsics | CameraInfo | None = None) -> Published:
        """Publish one frame (rgb None: dropped, only its FrameInfo goes out)."""
        self.frame_info.publish(frame_info_to_msg(header, frame_index, source, action, source_index, degradation))
        published = Published()
        if rgb is None:
            return published
        if camera is not None and wanted(self.camera_info):
            if isinstance(camera, CameraInfo):
                info = CameraInfo(header=header, height=camera.height, width=camera.width,
                                  distortion_model=camera.distortion_model, d=camera.d, k=camera.k, r=camera.r,
                                  p=camera.p, binning_x=camera.binning_x, binning_y=camera.binning_y, roi=camera.roi)
            else:
                info = intrinsics_to_camera_info(camera, header)
            self.camera_info.publish(info)
        if depth is not None and wanted(self.depth):
            self.depth.publish(numpy_to_image(np.asarray(depth, np.float32), "32FC1", header))
            published.depth = True
        if wanted(self.image):
            self.image.publish(numpy_to_image(rgb, "rgb8", header))
            published.image = True
        else:
            self._node.count(self.prefix, "no_subscribers")
        return published
