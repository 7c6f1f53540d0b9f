"""Predicate reliability (paper 3.5): offline metrics, rolling metrics, aggregation, calibration and
the reference-free trust assessment. Plain Python + numpy/scipy; no ROS import."""
