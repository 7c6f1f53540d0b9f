"""predrel_ros: visual manipulation predicates with reliability scores, for ROS 2.

Implements F. Ziaeetabar, "Trustworthy Visual Predicates for Robust Manipulation Understanding under
Degradation", arXiv:2606.08121 ("the paper" in docstrings; docs/design.md).

Subpackages in data-flow order:
  core          shared records: Entity, Frame, run-length masks, boxes
  sources       frames in: dataset folders, rosbag2 bags, video files, image folders
  perception    camera frames -> tracked entities (backends, YOLO-seg decoding, tracker, hands)
  predicates    entities -> predicates with confidence (vocabulary, rules, evidence, logic rules)
  reliability   predicates -> reliability metrics, rolling monitor, trust
  action        predicates + trust -> the manipulation primitive (recognizer, trust gate)
  degradations  synthetic degradations of images and entities (paper 4.3)
  ros           the only ROS code: nodes/ (the node executables), kit/, messages/, inputs/, replay/, run/
  tools         offline tooling: simulator, evaluation, training, benchmarks, dashboard, cli, demo

Every subpackage except `predrel_ros.ros` is plain Python + numpy and imports no ROS module;
`predrel_ros.msg` exists only in a colcon-built install (generated messages).
"""
__version__ = "0.1.0"

# In a development checkout (scripts/predrel-env.sh) this package is imported from src/ while the
# generated messages (predrel_ros.msg) live in the colcon install: let Python look for submodules in
# every predrel_ros directory on sys.path, src/ first. In a plain install there is only one.
__path__ = __import__("pkgutil").extend_path(__path__, __name__)
