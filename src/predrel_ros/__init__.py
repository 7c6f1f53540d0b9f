"""predrel_ros: visual manipulation predicates with reliability scores, for ROS 2.

The package root and every subpackage except `predrel_ros.ros.nodes` are plain Python + numpy and import
no ROS module; `predrel_ros.msg` exists only in a colcon-built install (generated messages).
"""
__version__ = "0.1.0"

# In a development checkout (scripts/predrel-env.sh) this package is imported from src/ while the
# generated messages (predrel_ros.msg) live in the colcon install: let Python look for submodules in
# every predrel_ros directory on sys.path, src/ first. In a plain install there is only one.
__path__ = __import__("pkgutil").extend_path(__path__, __name__)
