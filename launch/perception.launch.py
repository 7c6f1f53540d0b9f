"""Live perception on a robot camera: config/perception.run.yaml (also `predrel run perception`).
perception -> predicates -> reliability (reference-free trust) -> action, on remappable camera topics.

    ros2 launch predrel_ros perception.launch.py image:=/camera/color/image_raw \
        camera_info:=/camera/color/camera_info depth:=/camera/aligned_depth_to_color/image_raw use_depth:=true
    ros2 launch predrel_ros perception.launch.py namespace:=robot1 model:=/models/my_yolo_seg.onnx
    ros2 launch predrel_ros perception.launch.py --show-args
"""
from predrel_ros.ros.run.launch_support import run_file_launch_description


def generate_launch_description():
    return run_file_launch_description("perception.run.yaml")
