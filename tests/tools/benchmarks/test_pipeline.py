"""predrel bench pipeline: its measuring parts, and the relay baseline for real (one second)."""
import os
import time

import numpy as np
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


def test_drops_are_summed_per_reason_over_the_nodes():
    increments = {"clean/perception": {"frames.in": 40, "frames.processed": 30, "frames.dropped_stale": 10},
                  "degraded/perception": {"frames.processed": 38, "frames.dropped_stale": 1, "image.malformed": 1},
                  "replay": {"source.processed": 40, "source.dropped_busy": 5}}
    assert bench.dropped_by_reason(increments) == {"dropped_busy": 5, "dropped_stale": 11, "malformed": 1}


def test_matched_share_of_the_degraded_frames():
    assert bench.matched_share({"reliability": {"predicates.processed": 95, "predicates.unmatched": 5}}) == 0.95
    assert bench.matched_share({"reliability": {"predicates.processed": 20}}) == 1.0
    assert bench.matched_share({}) is None


def test_ratios_against_the_relay_the_camera_and_in_process_perception():
    result = {"relay": {"latency_ms": {"median_ms": 2.0, "p95_ms": 4.0}},
              "in_process": {"cpu_ms": {"median_ms": 10.0}},
              "single": {"rate_hz": 29.1, "latency_ms": {"median_ms": 30.0, "p95_ms": 60.0},
                         "perception_cpu_ms_per_frame": {"perception": 12.0}},
              "twins": {"rate_hz": 15.0, "latency_ms": None,
                        "perception_cpu_ms_per_frame": {"clean/perception": 15.0, "degraded/perception": None}}}
    assert bench.ratios(result) == {
        "single_rate_over_camera": 0.97, "single_latency_median_over_relay": 15.0,
        "single_latency_p95_over_relay": 15.0, "single_perception_cpu_per_frame_over_in_process": 1.2,
        "twins_rate_over_camera": 0.5, "twins_latency_median_over_relay": None, "twins_latency_p95_over_relay": None,
        "twins_clean_perception_cpu_per_frame_over_in_process": 1.5,
        "twins_degraded_perception_cpu_per_frame_over_in_process": None}


def test_perception_cpu_per_processed_frame():
    cores = {"perception": 0.3, "predicates": 0.1, "total": 0.4}
    increments = {"perception": {"frames.processed": 300}}
    assert bench._perception_cpu_ms(cores, increments, window_s=10.0) == {"perception": 10.0}
    assert bench._perception_cpu_ms(cores, {}, window_s=10.0) == {"perception": None}


def test_the_relay_baseline_delivers_30_frames_a_second():
    frames = [np.random.default_rng(i).integers(0, 256, (240, 320, 3), dtype=np.uint8) for i in range(4)]
    result = bench.measure_relay(frames, seconds=1.0)
    assert result["sent"] == 30 and result["lost"] == 0 and result["received"] == 30
    assert result["latency_ms"]["median_ms"] < 200
    assert set(result["cpu_cores"]) == {"relay", "benchmark", "total"}


@pytest.mark.slow
def test_the_single_pipeline_and_the_lockstep_twins_for_real(tmp_path):
    """Both graphs for a few seconds on the 36-frame test episode: every part is measured, the twins in
    lockstep match their frames and drop none as stale (no speed is asserted: the machine is shared)."""
    from controlled_dataset import build_tiny_dataset

    from predrel_ros.ros.run import dds
    from predrel_ros.sources.open_source import open_frames

    os.environ.update(dds.node_environment())
    bag = next(p for p in sorted((build_tiny_dataset(tmp_path / "data") / "bags").iterdir()) if "insert" in p.name)
    frames = [frame.rgb for frame in open_frames(bag)]
    args = bench_args(parts=["single", "twins"], seconds=3.0)
    result = bench.measure_graphs(args, bag, frames, "", tmp_path / "logs")
    single, twins = result["single"], result["twins"]
    assert single["rate_hz"] > 0 and single["latency_ms"]["n"] > 0 and single["input_rate_hz"] > 20
    assert single["perception_cpu_ms_per_frame"]["perception"] > 0
    assert twins["matched_share"] >= 0.95 and "dropped_stale" not in twins["dropped"]  # skipped at the replay
    assert result["in_process"]["cpu_ms"]["median_ms"] > 0 and result["in_process"]["backend"] == "onnxruntime"


def bench_args(**overrides):
    import argparse

    parser = argparse.ArgumentParser()
    bench.add_arguments(parser)
    args = parser.parse_args([])
    for key, value in overrides.items():
        setattr(args, key, value)
    return args
