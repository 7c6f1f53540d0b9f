import argparse

from predrel_ros.degradations import KINDS, SEVERITIES
from predrel_ros.tools.benchmarks import TARGETS
from predrel_ros.tools.benchmarks.degradations import run


def test_reports_every_kind_severity_and_size_against_a_frame_copy():
    assert TARGETS["degradations"][0] == "predrel_ros.tools.benchmarks.degradations"
    result = run(argparse.Namespace(repeats=2, sizes="32x24,64x48", seed=0))
    assert set(result["frame_copy"]) == {"32x24", "64x48"}
    for kind in KINDS:
        for size in ("32x24", "64x48"):
            timings = result["kinds"][kind][size]
            assert set(timings) == {str(s) for s in SEVERITIES}
            assert all(t["n"] == 2 and t["median_ms"] >= 0 and t["ratio_to_copy"] >= 0 for t in timings.values())
