import json

import pytest
from ros_testing import require_ros

require_ros()

from predrel_ros.tools.cli import main as cli  # noqa: E402

pytestmark = pytest.mark.ros


def test_predicate_nodes_benchmark_times_every_frame_of_each_node(tmp_path):
    out = tmp_path / "predicate-nodes.json"
    assert cli.main(["bench", "predicate-nodes", "--frames", "12", "--width", "160", "--height", "120",
                     "--window", "5", "--out", str(out)]) == 0
    result = json.loads(out.read_text())["result"]
    assert result["messages"]["actions"] == result["messages"]["reports"] == 12
    for name in ("predicates", "reliability", "action"):
        timing = result["nodes"][name]
        assert timing["node_callback"]["n"] == timing["library"]["n"] == 12
        assert timing["ratio_node_to_library"] > 0
    assert cli.main(["bench", "predicate-nodes", "--frames", "5", "--out", str(out)]) == 1
