"""predrel_ros: visual manipulation predicates with reliability scores, for ROS 2.

The package root and every subpackage except `predrel_ros.nodes` are plain Python + numpy and import
no ROS module; `predrel_ros.msg` exists only in a colcon-built install (generated messages).
"""
__version__ = "0.1.0"
