import json

import pytest
from ros_testing import require_ros

require_ros()

from predrel_ros.tools.cli import main as cli  # noqa: E402

pytestmark = pytest.mark.ros


def test_conversion_benchmark_runs(tmp_path, capsys):
    out = tmp_path / "conversions.json"
    assert cli.main(["bench", "conversions", "--width", "32", "--height", "24", "--repeats", "3",
                     "--entities", "2", "--predicates", "5", "--out", str(out)]) == 0
    result = json.loads(out.read_text())["result"]
    assert set(result["images"]) == {"rgb8", "bgra8", "mono8", "16UC1", "32FC1"}
    assert result["images"]["rgb8"]["encode"]["n"] == 3
    depth = result["compressed_depth"]
    assert set(depth) == {"png", "rvl"} and all(0 < case["bytes"] < case["raw_bytes"] + 40 for case in depth.values())
