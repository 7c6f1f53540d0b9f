"""predrel bench pipeline: its measuring parts, and the relay baseline for real (one second)."""
import os
import time

import pytest
from ros_testing import require_ros

require_ros()

from predrel_ros.tools.benchmarks import pipeline as bench  # noqa: E402

pytestmark = pytest.mark.ros


def test_cpu_of_a_process_and_of_a_window():
    assert bench.cpu_seconds(os.getpid()) > 0
    assert bench.cpu_seconds(2**22 + 7) is None  # no such process
    meter = bench.CpuMeter({"me": os.getpid(), "gone": 2**22 + 7})
    end = time.monotonic() + 0.3
    while time.monotonic() < end:
        pass  # busy: about one core
    cores = meter.cores()  # about one core, less on a machine busy with other work
    assert set(cores) == {"me", "total"} and 0.05 < cores["me"] <= 1.5 and cores["total"] == cores["me"]


def test_arrivals_count_only_inside_the_window():
    arrivals = bench.Arrivals()
    arrivals.add(0.5)
    arrivals.recording = True
    for latency in (0.010, 0.020, 0.030, 0.040):
        arrivals.add(latency)
    arrivals.recording = False
    arrivals.add(0.5)
    result = arrivals.result(2.0)
    assert result["received"] == 4 and result["rate_hz"] == 2.0
    assert result["latency_ms"]["median_ms"] == pytest.approx(25.0) and result["latency_ms"]["n"] == 4
    assert bench.Arrivals().result(1.0) == {"received": 0, "rate_hz": 0.0, "latency_ms": None}


def test_counter_increments_per_node():
    before = {"a": {"frames.processed": 10, "frames.dropped_stale": 2}}
    after = {"a": {"frames.processed": 25, "frames.dropped_stale": 2}, "b": {"x.processed": 3}}
    assert bench._counter_increments(before, after) == {"a": {"frames.processed": 15}, "b": {"x.processed": 3}}


def test_the_relay_baseline_delivers_30_frames_a_second():
    result = bench.measure_relay(seconds=1.0)
    assert result["sent"] == 30 and result["lost"] == 0 and result["received"] == 30
    assert result["latency_ms"]["median_ms"] < 200
    assert set(result["cpu_cores"]) == {"relay", "benchmark", "total"}
