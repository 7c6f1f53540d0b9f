"""The live terminal dashboard of a replay or a robot, and the summary of a degradation sweep.

Plain Python (no ROS): `ros/nodes/dashboard_node.py` turns messages into the records of `view`, feeds
`DashboardState` (what the screen shows now) and `SweepRecorder` (what the summary needs), and
draws with `render.Display`. The same code is tested without ROS.
"""
