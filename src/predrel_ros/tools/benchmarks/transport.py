"""Image + predicate round trip between two processes over DDS: the exchange of `predrel
transport-check` (same options) as a result file: images and PredicateArrays intact, changed and
lost, round-trip latency (median, p95, max), the DDS profile, discovery range and domain.
"""
from __future__ import annotations

import argparse

from predrel_ros.tools.cli.transport_check import add_arguments  # noqa: F401  (the check's options)


def run(args: argparse.Namespace) -> dict:
    from predrel_ros.ros.run.transport_check import measure

    return measure(args)
