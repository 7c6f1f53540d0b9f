"""The conversion layer itself needs no ROS: its modules import with rclpy and every message package
blocked, and a bag is written and read through them (predrel_ros.sources.bag) without one."""
import subprocess
import sys
from pathlib import Path

import predrel_ros.ros.messages as messages

BLOCKED_BAG_ROUND_TRIP = """
import importlib, importlib.abc, sys

class BlockRos(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        top = name.split(".")[0]
        if top in ("rclpy", "rosidl_runtime_py", "builtin_interfaces") or top.endswith("_msgs") \\
                or name == "predrel_ros.msg" or name.startswith("predrel_ros.msg."):
            raise ImportError("blocked ROS module " + name)
        return None

sys.meta_path.insert(0, BlockRos())
for name in {modules!r}:
    importlib.import_module(name)

import numpy as np
from predrel_ros.core.entities import Entity
from predrel_ros.core.frame import CameraIntrinsics, Frame
from predrel_ros.predicates.estimate import PredicateEstimate
from predrel_ros.sources.bag import BagReader, write_bag

mask = np.zeros((6, 8), bool)
mask[1:4, 2:5] = True
frame = Frame(index=0, stamp_ns=5, rgb=np.full((6, 8, 3), 7, np.uint8), depth=np.full((6, 8), 1.5, np.float32),
              camera=CameraIntrinsics(8, 6, 5.0, 5.0, 3.5, 2.5),
              entities=[Entity(2, "cube", "manipulated_object", (2, 1, 5, 4), mask=mask, centroid=(3, 2, 1.25),
                               point3d=(0.1, 0.2, 1.5))],
              predicates=[PredicateEstimate("contact", 1, 2, "T")], primitive="grasp")
write_bag({bag!r}, [frame])
[read] = BagReader({bag!r}).frames()
assert np.array_equal(read.rgb, frame.rgb) and read.rgb.flags.writeable
assert np.array_equal(read.depth, frame.depth) and read.depth.flags.writeable
assert read.camera == frame.camera and read.primitive == "grasp"
assert read.entities[0].centroid.tolist() == [3, 2, 1.25] and np.array_equal(read.entities[0].mask, mask)
assert [p.key for p in read.predicates] == [("contact", 1, 2)]
assert not [name for name in sys.modules if name.startswith("rclpy") or name.endswith("_msgs")]
print("ok")
"""


def test_the_conversions_write_and_read_a_bag_with_ros_blocked(tmp_path):
    folder = Path(messages.__file__).parent
    modules = sorted(f"predrel_ros.ros.messages.{path.stem}" for path in folder.glob("*.py") if path.stem != "__init__")
    script = BLOCKED_BAG_ROUND_TRIP.format(modules=modules, bag=str(tmp_path / "bag"))
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr[-3000:]
