"""The tracker's identity scores (IDF1, ID switches, MOTA) under detection noise and frame dropping:
conditions, episode sources, ground-truth or model detectors, one sequence's scores, the scores of
every condition summed over episodes, and their plot. `predrel track-eval` (tools/cli/track_eval.py)
runs it and says how it is measured.
"""
from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from predrel_ros.core.entities import MANIPULATED_OBJECT, Entity
from predrel_ros.perception.detections import Detections
from predrel_ros.perception.tracker import ByteTracker, TrackerConfig
from predrel_ros.tools.evaluation.tracking_metrics import TrackingEvaluator, TrackingScores, combine
from predrel_ros.tools.figures import save_figure

KINDS = ("detection_noise", "frame_drop")
#: (frame index, ground-truth entities, image height, image width, RGB image or None)
SequenceFrame = tuple[int, list[Entity], int, int, "np.ndarray | None"]
#: a detector: (RGB image or None, visible ground truth) -> detected entities
Detector = Callable[["np.ndarray | None", list[Entity]], list[Entity]]


@dataclass(frozen=True)
class Condition:
    kind: str  # "none" for the clean condition
    severity: int


def visible(entities: Iterable[Entity], min_visibility: float) -> list[Entity]:
    return [e for e in entities if e.visibility >= min_visibility]


def as_detections(entities: list[Entity], class_ids: dict[str, int]) -> Detections:
    """Entities as tracker input; class ids are given to labels in order of first appearance."""
    for entity in entities:
        class_ids.setdefault(entity.label, len(class_ids))
    return Detections(np.array([e.box for e in entities]).reshape(-1, 4), [e.score for e in entities],
                      [class_ids[e.label] for e in entities])


def model_detector(perceiver) -> Detector:
    """Detections of a model on the frame's pixels, as entities (for detection noise to act on)."""
    def detect(image: np.ndarray | None, truth: list[Entity]) -> list[Entity]:
        if image is None:
            raise ValueError("this source has no images for the model to look at")
        found = perceiver.detect(image, bgr=False)
        return [Entity(id=i + 1, label=perceiver.labels[c], role=MANIPULATED_OBJECT, box=b, score=float(s))
                for i, (b, s, c) in enumerate(zip(found.boxes, found.scores, found.class_ids))]
    return detect


def ground_truth_detector(image: np.ndarray | None, truth: list[Entity]) -> list[Entity]:
    return list(truth)


def evaluate_sequence(frames: Iterable[SequenceFrame], condition: Condition, seed: int, detector: Detector,
                      tracker_config: TrackerConfig | None = None, min_visibility: float = 0.3,
                      iou_threshold: float = 0.5) -> TrackingScores:
    from predrel_ros.degradations.degrader import Degrader

    degrader = Degrader(condition.kind, condition.severity, seed)
    tracker = ByteTracker(tracker_config)
    evaluator = TrackingEvaluator(iou_threshold)
    class_ids: dict[str, int] = {}
    delivered: dict[int, list[Entity]] = {}  # frame index -> detections, for repeated frames
    for index, truth, height, width, image in frames:
        truth = visible(truth, min_visibility)
        decision = degrader.decide_frame(index)
        if decision.source_index is None:
            continue  # dropped: nothing published under this index, nothing scored
        if decision.source_index == index:
            detected = degrader.apply_entities(detector(image, truth), index, (height, width))
            delivered = {index: detected}
        else:
            detected = delivered[decision.source_index]
        tracked = [o for o in tracker.update(index, as_detections(detected, class_ids)) if o.detection is not None]
        evaluator.update([e.id for e in truth], [e.box for e in truth],
                         [o.track_id for o in tracked], [o.box for o in tracked])
    return evaluator.compute()


def conditions(kinds: Iterable[str], severities: Iterable[int]) -> list[Condition]:
    severities = sorted(set(severities))
    found = [Condition("none", 0)] if 0 in severities else []
    return found + [Condition(kind, s) for kind in kinds for s in severities if s > 0]


def evaluate_conditions(sequences: list[tuple[str, Callable[[], Iterator]]], kinds: Iterable[str],
                        severities: Iterable[int], seed: int, detector: Detector,
                        tracker_config: TrackerConfig | None = None, min_visibility: float = 0.3) -> list[dict]:
    """One row per condition (clean first): the scores summed over the sequences (MOT-style) and
    each sequence's, under its name."""
    from tqdm import tqdm

    results = []
    for condition in conditions(kinds, severities):
        per_episode = {}
        for name, frames in tqdm(sequences, desc=f"{condition.kind} {condition.severity}", file=sys.stderr):
            per_episode[name] = evaluate_sequence(frames(), condition, seed, detector, tracker_config, min_visibility)
        total = combine(list(per_episode.values()))
        results.append({"kind": condition.kind, "severity": condition.severity, **total.as_dict(),
                        "episodes": {n: s.as_dict() for n, s in per_episode.items()}})
    return results


def synthetic_sequences(count: int, seed: int, frames: int) -> Iterator[tuple[str, Callable[[], Iterator]]]:
    from predrel_ros.tools.evaluation.synthetic_tracks import SyntheticSceneConfig, synthetic_episode

    config = SyntheticSceneConfig(frames=frames)
    for i in range(count):
        episode = synthetic_episode(seed + i, config)
        yield f"synthetic-{seed + i}", (lambda e=episode: ((t, es, config.height, config.width, None)
                                                           for t, es in enumerate(e)))


def dataset_sequences(root: Path, split: str | None, with_images: bool) -> Iterator[tuple[str, Callable[[], Iterator]]]:
    """Episodes of a dataset. Without images (ground-truth detections) each episode's entities are
    read once, without their masks (the tracker needs boxes), and reused for every condition."""
    from predrel_ros.core.errors import UserError
    from predrel_ros.sources.dataset import open_dataset

    for episode in open_dataset(root).episodes(split):
        def frames(episode=episode):
            for frame in episode.frames(images=with_images):
                if frame.entities is None:
                    raise UserError(f"{episode.directory}: frame {frame.index} has no ground-truth entities")
                entities = frame.entities if with_images else [dataclasses.replace(e, mask=None)
                                                               for e in frame.entities]
                yield (frame.index, entities, frame.height, frame.width, frame.rgb if with_images else None)
        if with_images:
            yield episode.meta.name, frames
        else:
            cached = list(frames())
            yield episode.meta.name, lambda cached=cached: iter(cached)


def plot_scores(results: list[dict], path: Path) -> Path | None:
    """IDF1 and ID switches against severity, one line per kind (the clean point starts each line)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    clean = next((r for r in results if r["kind"] == "none"), None)
    kinds = sorted({r["kind"] for r in results} - {"none"})
    if not kinds:
        return None
    figure, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5))
    for kind in kinds:
        rows = ([clean] if clean else []) + [r for r in results if r["kind"] == kind]
        severities = [r["severity"] for r in rows]
        left.plot(severities, [r["idf1"] for r in rows], marker="o", label=kind)
        right.plot(severities, [r["id_switches"] for r in rows], marker="o", label=kind)
    left.set(xlabel="severity", ylabel="IDF1", ylim=(0, 1.02), title="IDF1")
    right.set(xlabel="severity", ylabel="identity switches", title="ID switches")
    left.legend()
    return save_figure(figure, path)
