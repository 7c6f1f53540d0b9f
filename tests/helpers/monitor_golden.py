"""Golden reliability reports: what `ReliabilityMonitor.report()` gave frame by frame on deterministic
runs, recorded once so that a faster monitor can be checked to give the same reports field by field.

Scenarios (the shipped `config/predicates.yaml`, window 30, a fresh monitor and extractors each) on
the first episode of the tiny controlled dataset (`controlled_dataset`), looped 5 times
(`reliability_scenarios.occlusion_run`: loop 2 under occlusion_flat severity 5, 180 frames); the
evaluated predicates are the extractor's on the degraded entities, and in loop 3 every 7th frame
is dropped (the evaluated side never publishes it):
- `self_model`: self mode with the entities, image sizes and image measures (`ImageQuality` of the
  episode's images), judged by the trust model `monitor_golden_trust_model.json` (a copy of the
  model shipped when the reports were recorded, so that a refit does not change them; its risk part,
  added later, is off: zero weights, bias -30, so no risk reaches its bound and the levels are those
  of the expected agreement alone, as when recorded);
- `self_profile`: self mode with the entities and the clean profile of the other two episodes
  (calibrated expected agreement, profile bounds), no trust model;
- `clean_twin`: the extractor's predicates on the clean entities as reference, associated;
- `ground_truth`: the ground-truth predicates and entities as reference, associated.

Regenerate (only from the implementation the reports are meant to pin, never to make a test pass):

    python tests/helpers/monitor_golden.py      # writes tests/reliability/data/monitor_golden.json.gz
"""
from __future__ import annotations

import gzip
import json
import sys
import tempfile
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "reliability" / "data"
GOLDEN_FILE = DATA / "monitor_golden.json.gz"
TRUST_MODEL_FILE = DATA / "monitor_golden_trust_model.json"
SCENARIOS = ("self_model", "self_profile", "clean_twin", "ground_truth")
WINDOW, LOOPS, OCCLUDED, SEVERITY = 30, 5, (2,), 5
DROPPED_LOOP, DROP_EVERY = 3, 7


def reports(dataset: Path, scenario: str) -> list[dict]:
    """`ReliabilityReport.to_dict()` after every processed frame of the scenario (its `tag`: the
    frame index it was given with)."""
    from reliability_scenarios import occlusion_run, oracle_profile

    from predrel_ros.core.package_files import config_path
    from predrel_ros.predicates import PredicateConfig, PredicateExtractor
    from predrel_ros.reliability.image_quality import ImageQuality
    from predrel_ros.reliability.monitor import CLEAN_TWIN, GROUND_TRUTH, SELF, MonitorConfig, ReliabilityMonitor
    from predrel_ros.reliability.trust import TrustConfig
    from predrel_ros.reliability.trust_estimator import TrustModel
    from predrel_ros.sources.dataset import open_dataset

    path = config_path("predicates.yaml")
    predicates = PredicateConfig.load(path, section="predicates")
    trust = TrustConfig.load(path, section="trust")
    episodes = open_dataset(dataset).episodes()
    target = episodes[0]
    mode = {"clean_twin": CLEAN_TWIN, "ground_truth": GROUND_TRUTH}.get(scenario, SELF)
    config = MonitorConfig.for_predicates(predicates, reference_mode=mode, window=WINDOW)
    profile = oracle_profile(episodes[1:], PredicateExtractor(predicates)) if scenario == "self_profile" else None
    model = TrustModel.load(TRUST_MODEL_FILE) if scenario == "self_model" else None
    monitor = ReliabilityMonitor(config, trust, profile, predicates, model)
    quality = ImageQuality()
    measures = [quality.measure(frame.rgb) for frame in target.frames()] if model is not None else None
    clean_extractor, degraded_extractor = PredicateExtractor(predicates), PredicateExtractor(predicates)
    n = len(target)
    out = []
    for frame in occlusion_run(target, LOOPS, OCCLUDED, SEVERITY):
        t = frame.frame_index
        clean = clean_extractor.update(t, frame.clean)
        degraded = degraded_extractor.update(t, frame.degraded)
        dropped = t // n == DROPPED_LOOP and t % DROP_EVERY == 0
        processed = False
        if mode == CLEAN_TWIN:
            processed |= monitor.add_reference(t, clean)
        elif mode == GROUND_TRUTH:
            processed |= monitor.add_reference(t, frame.references)
        if mode != SELF:
            processed |= monitor.add_reference_entities(t, frame.clean)
        if not dropped:
            if mode == SELF:
                processed |= monitor.add_evaluated_entities(
                    t, frame.degraded, (frame.width, frame.height), measures[t % n] if measures else None)
            else:
                processed |= monitor.add_evaluated_entities(t, frame.degraded)
            processed |= monitor.add_evaluated(t, degraded, frame.kind, frame.severity, tag=t)
        if processed:
            report = monitor.report()
            out.append(report.to_dict() | {"tag": report.tag})
    return out


def load() -> dict:
    with gzip.open(GOLDEN_FILE, "rt") as handle:
        return json.load(handle)


def main() -> int:
    from controlled_dataset import build_tiny_dataset

    with tempfile.TemporaryDirectory() as tmp:
        dataset = build_tiny_dataset(Path(tmp) / "dataset")
        golden = {scenario: reports(dataset, scenario) for scenario in SCENARIOS}
    with gzip.GzipFile(GOLDEN_FILE, "wb", mtime=0) as handle:
        handle.write(json.dumps(golden, sort_keys=True).encode())
    counts = {name: (len(frames), sum(len(r["predicates"]) for r in frames)) for name, frames in golden.items()}
    print(f"{GOLDEN_FILE}: {GOLDEN_FILE.stat().st_size} bytes, (reports, predicate records) {counts}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sys.exit(main())
