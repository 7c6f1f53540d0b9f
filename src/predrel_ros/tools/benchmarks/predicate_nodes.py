"""What the predicate, reliability and action nodes cost per frame (`predrel bench predicate-nodes`).

One process, one SingleThreadedExecutor, real DDS. The core benchmark's scripted scene (8 entities:
two hands, four objects, a bowl, the table; full-frame masks at 320x240 by default) goes to a
predicate_node as EntityArrays, occluded at severity 3 (`degradations.entity_occlusion`) so the
evaluated predicates differ from the clean ones; the clean predicates and entities go to a
reliability_node in clean_twin mode as its reference (it also reads the occluded entities, to
associate the two sides' entities); an action_node reads the predicates and the reports; a sink
subscribes to every output, so nothing is skipped as lazy. Frames are sent one at a time, each
after the previous frame's action came out.

Per frame, measured inside each node (its subscription callbacks: message decode, the library
call, message encode and publish): predicate node, reliability node (the four callbacks of a frame:
predicates, reference, entities, reference entities, with a report of every stream each frame),
action node. Baselines in the same run, in a pass of their own: the library calls alone on the same
data (`PredicateExtractor.update`; `ReliabilityMonitor.add_reference` + `add_reference_entities` +
`add_evaluated_entities` + `add_evaluated` + `report`; `ActionRecognizer.update`). The ratio node /
library is what the ROS layer adds. The node pass is ros/run/node_probes.py's `time_predicate_nodes`.
"""
from __future__ import annotations

import argparse
import time

from predrel_ros.tools.benchmarks.report import peak_rss_mb, summarize

CAMERA_PERIOD_MS = 1000.0 / 30.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--frames", type=int, default=150, help="frames (default: %(default)s)")
    parser.add_argument("--width", type=int, default=320, help="image width (default: %(default)s)")
    parser.add_argument("--height", type=int, default=240, help="image height (default: %(default)s)")
    parser.add_argument("--window", type=int, default=30, help="reliability window (default: %(default)s)")


def _scene(frames: int, width: int, height: int):
    """(clean entities, occluded entities, clean predicates) per frame."""
    from predrel_ros.degradations import OCCLUSION, Degrader
    from predrel_ros.degradations.entity_occlusion import occlude_entities
    from predrel_ros.predicates import PredicateExtractor
    from predrel_ros.tools.benchmarks.core import scripted_scene

    degrader = Degrader(OCCLUSION, 3, 0)
    extractor = PredicateExtractor()
    out = []
    for t, entities in enumerate(scripted_scene(frames, width, height)):
        occluded = occlude_entities(entities, degrader.occluder_mask((height, width), targets=entities))
        out.append((entities, occluded, extractor.update(t, entities)))
    return out


def _library_pass(scene, window: int) -> dict[str, list[float]]:
    from predrel_ros.action import ActionConfig, ActionRecognizer, PrimitiveModel
    from predrel_ros.core.package_files import config_file
    from predrel_ros.predicates import PredicateExtractor
    from predrel_ros.reliability.monitor import CLEAN_TWIN, MonitorConfig, ReliabilityMonitor

    extractor = PredicateExtractor()
    monitor = ReliabilityMonitor(MonitorConfig(reference_mode=CLEAN_TWIN, window=window))
    recognizer = ActionRecognizer(PrimitiveModel.load(), ActionConfig.load(config_file("action.yaml"), "action"))
    times: dict[str, list[float]] = {"predicates": [], "reliability": [], "action": []}
    clock = time.perf_counter
    trust = None
    for t, (entities, occluded, clean) in enumerate(scene):
        start = clock()
        estimates = extractor.update(t, occluded)
        extracted = clock()
        monitor.add_reference(t, clean)
        monitor.add_reference_entities(t, entities)
        monitor.add_evaluated_entities(t, occluded)
        monitor.add_evaluated(t, estimates, "occlusion", 3)
        report = monitor.report()
        monitored = clock()
        recognizer.update(t, estimates, trust)
        recognized = clock()
        trust = report.trust()
        times["predicates"].append(extracted - start)
        times["reliability"].append(monitored - extracted)
        times["action"].append(recognized - monitored)
    return times


def run(args: argparse.Namespace) -> dict:
    from predrel_ros.core.errors import UserError
    from predrel_ros.ros.run.node_probes import time_predicate_nodes

    if args.frames < 10 or args.width < 64 or args.height < 48 or args.window < 2:
        raise UserError("need --frames >= 10, --width >= 64, --height >= 48, --window >= 2")
    scene = _scene(args.frames, args.width, args.height)
    nodes, counts = time_predicate_nodes(scene, args.width, args.height, args.window)
    library = _library_pass(scene, args.window)
    result = {"image": f"{args.width}x{args.height}", "entities": 8, "frames": args.frames,
              "reliability_window": args.window, "messages": counts, "nodes": {}}
    for name in ("predicates", "reliability", "action"):
        node, lib = summarize(nodes[name]), summarize(library[name])
        result["nodes"][name] = {"node_callback": node, "library": lib,
                                 "ratio_node_to_library": round(node["median_ms"] / lib["median_ms"], 2),
                                 "share_of_camera_period": round(node["median_ms"] / CAMERA_PERIOD_MS, 3)}
    result["peak_rss_mb"] = round(peak_rss_mb(), 1)
    return result
