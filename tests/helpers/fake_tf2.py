"""A fake `tf2_ros` (the parts `ros.inputs.tf_gravity` uses): a Buffer answering every lookup with
one rotation, or refusing it with a TransformException, and a TransformListener that only records
its buffer and node. Install it with `install(monkeypatch, rotation)`; `lookups` records every
lookup (target frame, source frame, time)."""
from __future__ import annotations

import sys
import types


class TransformException(Exception):
    pass


def install(monkeypatch, rotation: tuple[float, float, float, float] | None, newest_only: bool = False):
    """A fake tf2_ros in sys.modules whose lookups give `rotation` (x, y, z, w), or fail (None); with
    `newest_only`, a lookup at a stamp fails and one at time zero (the newest) answers."""
    module = types.ModuleType("tf2_ros")
    module.TransformException = TransformException
    module.lookups = []

    class Buffer:
        def lookup_transform(self, target_frame, source_frame, time):
            module.lookups.append((target_frame, source_frame, time))
            if rotation is None or (newest_only and time.nanoseconds != 0):
                raise TransformException(f"no transform from {source_frame} to {target_frame}")
            x, y, z, w = rotation
            quaternion = types.SimpleNamespace(x=x, y=y, z=z, w=w)
            return types.SimpleNamespace(transform=types.SimpleNamespace(rotation=quaternion))

    class TransformListener:
        def __init__(self, buffer, node):
            self.buffer, self.node = buffer, node

    module.Buffer, module.TransformListener = Buffer, TransformListener
    monkeypatch.setitem(sys.modules, "tf2_ros", module)
    return module
