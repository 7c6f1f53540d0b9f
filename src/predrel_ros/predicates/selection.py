"""Threshold and confidence-weight selection on clean validation sequences (paper 4.8).

Thresholds are chosen to maximise agreement with reference predicates (ground truth of the
controlled set) on clean validation data and then fixed for every degradation; no
degradation-specific tuning. A validation sequence is a plain list of
(frame_index, entities, reference estimates) in frame order, each optionally followed by the frame's
depth image (metres) and camera intrinsics, so that the 3D rules are selected on what they will see.

`select_thresholds` runs a coordinate search over a grid: for each parameter in turn it tries every
candidate value with the others held at their current best, keeps the value with the highest
agreement (ties keep the current value), and repeats the passes until nothing changes. Agreement is
the macro average over predicate names of the share of frames whose estimate equals the reference,
frames with an UNK reference left out (paper 4.5); each eta (margin scale) stays as configured.
A grid entry whose threshold is switched off in the base config (e.g. `static.support_gap_m: null`)
is skipped.

`shippable_config` makes the result one complete config file: the selected predicate section (its
confidence weights included) with every other section of the base file (the runtime trust's), so
that it can replace `config/predicates.yaml` as it is.

`select_confidence_weights` then fits the geometric-mean weights of g_k per predicate to the
validation agreement (Brier score), and `fit_calibrated_confidence` fits the logistic g_k instead.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from predrel_ros.predicates.confidence import (
    AgreementSamples,
    CalibratedConfidence,
    GeometricMeanConfidence,
    agreement_samples,
    fit_geometric_weights,
)
from predrel_ros.predicates.config import PredicateConfig
from predrel_ros.predicates.estimate import PredicateEstimate, match_references
from predrel_ros.predicates.extractor import PredicateExtractor

ValidationSequence = Sequence[tuple]   # (frame_index, entities, references[, depth_m, camera])

#: candidate values of the decision thresholds (reference px, ratios, reference px per frame; the 3D
#: rules' in metres and metres per second)
DEFAULT_GRID: dict[str, tuple[float, ...]] = {
    "contact.distance.value": (1.0, 2.0, 3.0, 4.0, 6.0, 8.0),
    "static.inside_fraction.value": (0.5, 0.6, 0.7, 0.8, 0.9),
    "static.support_fraction.value": (0.1, 0.2, 0.3, 0.5, 0.7),
    "static.above_offset.value": (0.4, 0.55, 0.7, 0.85, 1.0),
    "static.horizontal_overlap.value": (0.1, 0.2, 0.3, 0.5),
    "static.around_distance.value": (1.0, 1.25, 1.5, 2.0, 3.0),
    "dynamic.moving_speed.value": (0.25, 0.5, 1.0, 2.0),
    "dynamic.relative_speed.value": (0.35, 0.7, 1.0, 2.0),
    "dynamic.distance_rate.value": (0.35, 0.7, 1.0, 2.0),
    "static.support_gap_m.value": (0.008, 0.012, 0.016),
    "static.above_clearance_m.value": (0.005, 0.01, 0.015),
    "static.footprint_gap_m.value": (0.0, 0.01, 0.02),
    "static.footprint_depth_gap_m.value": (0.01, 0.02, 0.03),
    "static.around_distance_m.value": (0.08, 0.1, 0.12),
    "dynamic.moving_speed_mps.value": (0.04, 0.06, 0.08, 0.1),
    "dynamic.relative_speed_mps.value": (0.06, 0.1, 0.15),
    "dynamic.distance_rate_mps.value": (0.03, 0.05, 0.08),
    "static.below_clearance_m.value": (0.0, 0.005, 0.01),
    "dynamic.containment": (0.95, 0.98, 0.995),
    "contact.hold_exit_fraction": (0.4, 0.5, 0.6),
    "contact.boundary_exit_gap_m": (0.01, 0.0125, 0.015),
    "contact.boundary_proximity_creep_m": (0.008, 0.01, 0.012),
    "contact.hold_separation_jump_m": (0.004, 0.006, 0.008),
    "contact.hold_separation_creep_m": (0.002, 0.0025, 0.003),
    "contact.hold_separation_put_down_creep_m": (0.001, 0.0015, 0.002),
    "contact.hold_separation_begin_m": (0.02, 0.025, 0.03),
    "contact.carried_relative_speed": (0.3, 0.5, 0.7),
    "contact.carried_gap_m": (0.015, 0.02, 0.025),
}


@dataclass
class SelectionResult:
    config: PredicateConfig
    agreement_before: dict[str, float]
    agreement_after: dict[str, float]
    #: parameter -> candidate value -> mean agreement, from the last pass that tried it
    scores: dict[str, dict[float, float]] = field(default_factory=dict)
    passes: int = 0


def agreement(config: PredicateConfig, sequences: Iterable[ValidationSequence]) -> dict[str, float]:
    """Share of reference-known frames where the extracted value equals the reference, per predicate."""
    samples = _samples(PredicateExtractor(config), sequences)
    return {name: float(sample.correct.mean()) for name, sample in sorted(samples.items())}


def _samples(extractor: PredicateExtractor, sequences: Iterable[ValidationSequence]) -> dict[str, AgreementSamples]:
    matched: list[tuple[PredicateEstimate, str]] = []
    for sequence in sequences:
        extractor.reset()
        for frame_index, entities, references, *image in sequence:
            depth_m, camera = image if image else (None, None)
            estimates = extractor.update(frame_index, entities, depth_m=depth_m, camera=camera)
            matched.extend(match_references(estimates, references))
    return agreement_samples(matched)


def _decision_samples(config: PredicateConfig, sequences: Iterable[ValidationSequence]
                      ) -> dict[str, AgreementSamples]:
    """Samples of the extractor's decisions: the confidence floor is off, so that correctness says
    whether the rule's value was right, not whether it survived the current g_k."""
    return _samples(PredicateExtractor(config.replace("confidence.floor", 0.0)), sequences)


def _mean(scores: Mapping[str, float]) -> float:
    return sum(scores.values()) / len(scores) if scores else 0.0


def select_thresholds(sequences: Sequence[ValidationSequence], grid: Mapping[str, Sequence[float]] | None = None,
                      base: PredicateConfig | None = None, max_passes: int = 3, progress: bool = False
                      ) -> SelectionResult:
    """Coordinate search of the thresholds in `grid` (dotted config paths -> candidate values)."""
    if not sequences:
        raise ValueError("threshold selection needs at least one validation sequence")
    config = base if base is not None else PredicateConfig()
    grid = applicable_grid(DEFAULT_GRID if grid is None else grid, config)
    before = agreement(config, sequences)
    best_score = _mean(before)
    scores: dict[str, dict[float, float]] = {}
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=max_passes * sum(len(v) for v in grid.values()), desc="threshold selection", unit="run")
    passes = 0
    try:
        for passes in range(1, max_passes + 1):  # noqa: B007  (reported after the loop)
            changed = False
            for path, values in grid.items():
                current = config.get(path)
                tried = scores[path] = {}
                for value in values:
                    candidate = config if value == current else config.replace(path, value)
                    tried[float(value)] = best_score if value == current else _mean(agreement(candidate, sequences))
                    if bar is not None:
                        bar.update()
                best_value = max(tried, key=lambda v: (tried[v], v == current))
                if tried[best_value] > best_score and best_value != current:
                    config, best_score, changed = config.replace(path, best_value), tried[best_value], True
            if not changed:
                break
    finally:
        if bar is not None:
            bar.close()
    return SelectionResult(config, before, agreement(config, sequences), scores, passes)


def applicable_grid(grid: Mapping[str, Sequence[float]], config: PredicateConfig) -> dict[str, Sequence[float]]:
    """The grid's entries whose threshold `config` uses: unknown paths and empty candidate lists are
    refused, thresholds and settings switched off (a None on the path or as the value) are left out."""
    applicable = {}
    for path, values in grid.items():
        if not values:
            raise ValueError(f"grid for {path!r} has no candidate value")
        parent, _, _ = path.rpartition(".")
        if parent and config.get(parent) is None:
            continue
        if config.get(path) is None:  # refuses unknown paths before any work; None: a setting switched off
            continue
        applicable[path] = values
    return applicable


def shippable_config(config: PredicateConfig, base_file: Mapping[str, object]) -> dict:
    """The contents of a complete config file: `base_file`'s sections (a loaded YAML mapping) with
    the predicate section replaced by `config`'s."""
    return {**base_file, PredicateConfig.NAME: config.to_dict()}


def select_confidence_weights(config: PredicateConfig, sequences: Sequence[ValidationSequence],
                              min_samples: int = 20) -> PredicateConfig:
    """A copy of `config` whose g_k weights are fitted per predicate to the validation agreement
    (predicates with fewer than `min_samples` reference-known samples keep their weights)."""
    samples = _decision_samples(config, sequences)
    weights = {name: dict(factors) for name, factors in config.confidence.weights.items()}
    for name, sample in samples.items():
        if sample.correct.size >= min_samples:
            weights[name] = fit_geometric_weights(sample.factors, sample.correct)
    return config.replace("confidence.weights", weights)


def fit_calibrated_confidence(config: PredicateConfig, sequences: Sequence[ValidationSequence],
                              min_samples: int = 20, l2: float = 1e-2) -> CalibratedConfidence:
    """The logistic g_k fitted on the validation agreement; the config's weighted geometric mean
    serves the predicates it could not fit."""
    samples = _decision_samples(config, sequences)
    return CalibratedConfidence.fit(samples, l2=l2, min_samples=min_samples,
                                    fallback=GeometricMeanConfidence(config.confidence.weights))
