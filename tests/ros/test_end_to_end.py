"""End to end: the demo graph (config/demo.run.yaml, what `make demo` starts) as separate node
processes over DDS, a controlled bag replayed through the clean and degraded pipelines, reliability
against the clean twin, the action node and the dashboard, whose summary the tests read.

- every frame is accounted for: each node's inputs equal the sum of its outcomes (processed, or
  dropped with a reason) and each stage's inputs equal what the stage before it published;
- with the trained default model: the degraded pipeline's reliability against the clean twin is
  lower at occlusion severity 5 than at 1, trust (clean-twin and reference-free) goes to WARN/ERROR
  under severe occlusion and back to OK once it stops. The reference-free node judges against the
  clean profile `predrel demo` measures for the model (other generated episodes of the demo's kind,
  clean), as a robot's node judges against a profile of its setup.
"""
from __future__ import annotations

import io
import json
import threading
from pathlib import Path

import pytest
from ros_testing import require_ros

require_ros()

from predrel_ros.core.package_files import config_file  # noqa: E402
from predrel_ros.perception.config import DEFAULT_MODEL_DIR  # noqa: E402
from predrel_ros.predicates.vocabulary import GROUPS  # noqa: E402
from predrel_ros.ros.run.run_file import load_run_file  # noqa: E402
from predrel_ros.ros.run.runner import Runner  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.slow]

#: frames of the 320x240 episode the model-quality tests replay (one pass per condition)
EPISODE_FRAMES = 48


def run_demo_graph(out: Path, bag: Path, model: str, schedule: str, passes: int, timeout_s: float = 240.0,
                   clean_profile: str = "") -> dict:
    """Run the demo graph until the replay finished; returns the dashboard's summary."""
    run = load_run_file(config_file("demo.run.yaml"), {
        "bag": str(bag), "model": model, "schedule": schedule, "passes": str(passes), "summary_dir": str(out),
        "display": "lines", "rate": "0", "title": "end-to-end test", "clean_profile": clean_profile})
    err = io.StringIO()
    runner = Runner(run, out / "logs", out=io.StringIO(), err=err)
    status: list[int] = []
    thread = threading.Thread(target=lambda: status.append(runner.run()), daemon=True)
    thread.start()
    thread.join(timeout_s)
    if thread.is_alive():
        runner.request_stop(2)
        thread.join(60)
        pytest.fail(f"the demo graph did not finish within {timeout_s:g} s; logs in {out / 'logs'}\n{err.getvalue()}")
    assert status == [0], f"run status {status}; logs in {out / 'logs'}\n{err.getvalue()}"
    return json.loads((out / "summary.json").read_text())


def outcomes(counters: dict, stream: str) -> int:
    """The sum of a stream's outcomes (every counter of the stream but its input count)."""
    return sum(value for key, value in counters.items() if key.startswith(f"{stream}.") and key != f"{stream}.in")


@pytest.mark.ci
def test_every_frame_is_accounted_for(tiny_bag, tmp_path):
    """36-frame bag played twice, frame dropping then occlusion at severity 5; a stand-in model."""
    from node_graph import scene_model

    summary = run_demo_graph(tmp_path, tiny_bag, str(scene_model(tmp_path / "model")),
                             "sweep:frame_drop,occlusion:36:5", passes=2)
    frames = 72
    nodes = summary["frame_accounting"]["nodes"]
    for side in ("clean", "degraded"):
        perception = nodes[f"/{side}/perception"]
        assert perception["frames.in"] == frames, perception
        assert outcomes(perception, "frames") == frames, perception
        predicates = nodes[f"/{side}/predicates"]
        assert outcomes(predicates, "entities") == perception["frames.processed"], (perception, predicates)
    degraded = nodes["/degraded/perception"]
    assert degraded.get("frames.dropped_by_degradation", 0) > 0, degraded
    published = {side: nodes[f"/{side}/predicates"]["entities.processed"] for side in ("clean", "degraded")}
    reliability, action = nodes["/reliability"], nodes["/action"]
    assert outcomes(reliability, "predicates") == published["degraded"], reliability
    assert outcomes(reliability, "reference") == published["clean"], reliability
    assert outcomes(action, "predicates") == published["degraded"], action
    # the dashboard is a late listener like any other: it misses what was published before its
    # subscriptions matched (DDS discovery on a loaded machine can outlast the replay's wait), at most
    # the frames before the first one it received (indices count from 0 across passes), and nothing after
    dashboard = summary["frame_accounting"]["dashboard"]
    first = dashboard["first_frames"]
    seen = {"degraded_predicate": (dashboard["degraded_predicate_frames"], published["degraded"]),
            "clean_predicate": (dashboard["clean_predicate_frames"], published["clean"]),
            "action": (dashboard["actions"], action["predicates.processed"]),
            "ground_truth_action": (dashboard["ground_truth_actions"], frames)}
    for stream, (received, sent) in seen.items():
        assert first[stream] is not None and sent - first[stream] <= received <= sent, (stream, dashboard)
    conditions = {(row["kind"], row["severity"]): row["frames"]["degraded"] for row in summary["conditions"]}
    assert set(conditions) == {("frame_drop", 5), ("occlusion", 5)}


@pytest.fixture(scope="module")
def demo_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("demo-cache")


@pytest.fixture(scope="module")
def episode_bag(demo_cache) -> Path:
    """A 48-frame 320x240 pick-and-place episode (the default model's input size)."""
    from predrel_ros.tools.demo import demo_episode
    return demo_episode(demo_cache, frames=EPISODE_FRAMES)


@pytest.fixture(scope="module")
def occlusion_run(episode_bag, demo_cache, tmp_path_factory) -> dict:
    """Four passes: occlusion severity 1, severity 5, then two clean passes."""
    from predrel_ros.tools.demo import demo_profile

    if not (DEFAULT_MODEL_DIR / "model.onnx").is_file():
        pytest.fail(f"the trained default model is missing ({DEFAULT_MODEL_DIR}/model.onnx): these tests measure "
                    f"its reaction to occlusion")
    n = EPISODE_FRAMES
    profile = demo_profile(demo_cache, "", frames=EPISODE_FRAMES)
    return run_demo_graph(tmp_path_factory.mktemp("occlusion"), episode_bag, "",
                          f"segments:0=occlusion:1,{n}=occlusion:5,{2 * n}=none", passes=4,
                          clean_profile=str(profile))


def test_reliability_is_lower_at_severity_5_than_at_1(occlusion_run):
    rows = {(row["kind"], row["severity"]): row for row in occlusion_run["conditions"]}
    mild, severe = rows[("occlusion", 1)]["prs"], rows[("occlusion", 5)]["prs"]
    compared = [group for group in GROUPS if mild.get(group) is not None and severe.get(group) is not None]
    assert compared, (mild, severe)
    assert sum(severe[g] for g in compared) < sum(mild[g] for g in compared), (mild, severe)
    assert severe["contact"] < mild["contact"], (mild, severe)


@pytest.mark.parametrize("label", ["reliability", "self_reliability"])
def test_trust_warns_under_severe_occlusion_and_recovers_when_it_stops(occlusion_run, label):
    """Both the clean-twin trust and the reference-free trust the action node relies on."""
    n = EPISODE_FRAMES
    window = 30  # config/reliability_node.yaml
    timeline = [entry for entry in occlusion_run["timeline"] if entry["label"] == label]
    severe = [entry for entry in timeline
              if entry["condition"] == "occlusion:5" and entry["frame_index"] >= n + window // 2]
    assert any(level in ("WARN", "ERROR") for entry in severe for level in entry["trust"].values()), severe[-3:]
    recovered = [entry for entry in timeline if entry["frame_index"] >= 2 * n + window + 5]
    assert recovered, timeline[-3:]
    for entry in recovered[-10:]:
        judged = {group: level for group, level in entry["trust"].items() if level != "STALE"}
        assert judged and all(level == "OK" for level in judged.values()), entry
