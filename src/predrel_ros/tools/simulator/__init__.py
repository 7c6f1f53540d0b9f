"""The controlled manipulation set (paper 4.1-4.2): MuJoCo scenes, scripted episodes, exact ground truth.

Ground truth comes from the simulator (MuJoCo contacts, 3D geometry, velocities, the script's
grasp state), never from the 2D extraction rules, so evaluating the extractor on it is not
circular. Modules: `config` (all thresholds and ranges), `scene` and `mjcf` (what is on the table
and its MuJoCo model), `simulator` (physics, hands, grasps), `primitives` and `templates` (scripted
episodes), `rendering` (RGB, depth, masks, visibility), `ground_truth` (the predicate rules),
`episode` (one episode end to end), `generate` (datasets), and `stats`; the CLI
is `predrel_ros.tools.cli.dataset` (`predrel dataset`).

Importing this package picks MuJoCo's offscreen backend (see `gl.py`) before MuJoCo loads.
"""
from predrel_ros.tools.simulator.gl import configure_backend

configure_backend()
