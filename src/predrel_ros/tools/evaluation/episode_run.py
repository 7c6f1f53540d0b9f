"""The work on one episode, as a worker process does it: load, run every condition through the
front-end and the predicate extractor, align with the reference, score, and run the recognizer.

A worker is set up once (`init_worker(spec)`: front-end, extractor config, action models) and then
handles episodes independently, so results do not depend on how many workers there are. The same
functions run in the main process when `--jobs 1`.
"""
from __future__ import annotations

import os
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from predrel_ros.action import ActionConfig, ActionRecognizer
from predrel_ros.action.streams import EpisodeStream
from predrel_ros.core.entities import Entity
from predrel_ros.core.errors import UserError
from predrel_ros.core.package_files import config_file
from predrel_ros.degradations import CLEAN, Condition
from predrel_ros.degradations.depth_noise import noisy_depth
from predrel_ros.predicates import vocabulary
from predrel_ros.predicates.config import PredicateConfig
from predrel_ros.predicates.estimate import PredicateEstimate
from predrel_ros.predicates.extractor import PredicateExtractor
from predrel_ros.reliability.association import associate, renamed
from predrel_ros.reliability.image_quality import ImageQuality
from predrel_ros.reliability.trust import CleanProfile
from predrel_ros.reliability.trust_estimator import TrustModel
from predrel_ros.tools.evaluation import action, entity_partners, scores, trust_measurement
from predrel_ros.tools.evaluation.config import GROUND_TRUTH, EvaluationConfig
from predrel_ros.tools.evaluation.data import EpisodeSource, LoadedEpisode, load_episode
from predrel_ros.tools.evaluation.front_ends import (
    ConditionRun,
    NotApplicable,
    Timer,
    image_degrader,
    make_front_end,
    occlusion_targets,
)
from predrel_ros.tools.evaluation.sequences import EpisodeSequences, StreamIndex, save_atomically, scope_keys


@dataclass
class SweepSpec:
    """What every worker needs (picklable)."""

    config: EvaluationConfig
    predicate_config: dict
    cache_dir: str | None
    sequences_dir: str | None
    action_models: action.ActionModels | None = None
    threads: int = 0


@dataclass
class EpisodeResult:
    episode: str
    scenario_group: str
    frames: int
    rows: list[dict]
    #: (variant, kind, severity) -> (y_pred, p_true) over all frames; y_true once per episode
    predictions: dict[tuple[str, str, int], tuple[np.ndarray, np.ndarray]]
    y_true: np.ndarray | None
    timings: dict[str, float]
    not_applicable: list[str] = field(default_factory=list)
    condition_stats: list[dict] = field(default_factory=list)


_state: dict = {}


def init_worker(spec: SweepSpec) -> None:
    """Set up this process for `spec` (called once per worker process)."""
    if spec.threads:
        import cv2
        cv2.setNumThreads(spec.threads)
    # the recognizer's and the metrics' matrices are small: threaded BLAS only adds contention on a
    # shared machine (ONNX Runtime has its own thread pool and is not affected)
    from threadpoolctl import threadpool_limits
    threadpool_limits(limits=1, user_api="blas")
    config = spec.config
    _state.clear()
    _state["spec"] = spec
    _state["front_end"] = make_front_end(config.perception, config.perception_config, spec.cache_dir, spec.threads)
    _state["predicate_config"] = PredicateConfig.from_dict(spec.predicate_config)
    _state["trust_profile"] = CleanProfile.load(config.trust_profile) if config.trust_profile else None
    _state["trust_model"] = TrustModel.load(config.trust_model) if config.trust_model else None
    _state["action_config"] = ActionConfig.load(config_file("action.yaml"), section="action")  # the action node's


def ensure_worker(spec: SweepSpec, token: str) -> None:
    """`init_worker(spec)` unless this process is set up already for the map named `token` (a Dask worker
    runs the units of several maps, `evaluation.fleet`)."""
    if _state.get("token") != token:
        init_worker(spec)
        _state["token"] = token


def front_end():
    return _state["front_end"]


def _loads_images() -> bool:
    """Whether episodes load their images: the front-end needs them, or contact uses the depth image."""
    return front_end().needs_images or _state["predicate_config"].contact.boundary_depth_gap_m is not None


def _extract(extractor: PredicateExtractor, run: ConditionRun, episode: LoadedEpisode, timer: Timer,
             phase: str = "predicates") -> list[list[PredicateEstimate]]:
    """The predicates of every delivered frame, with the depth image of the frame it shows."""
    frames = episode.frames
    with timer.phase(phase):
        extractor.reset()
        return [extractor.update(t, entities, depth_m=frames[content].depth, camera=frames[content].camera)
                for (t, content), entities in zip(run.delivered, run.entities)]


def _seed(source: EpisodeSource) -> int:
    return _state["spec"].config.seed + source.index


#: the depth noise's draws, apart from the degradations' (which are seeded by the episode's seed alone)
_DEPTH_NOISE_STREAM = 7


def _load(source: EpisodeSource, images: bool) -> LoadedEpisode:
    """The episode, its depth images through the sensor model where the sweep asks for it
    (`EvaluationConfig.depth_noise`), the same noise for every condition of the episode."""
    episode = load_episode(source, images=images)
    if images and _state["spec"].config.depth_noise:
        rng = np.random.default_rng([_seed(source), _DEPTH_NOISE_STREAM])
        for frame in episode.frames:
            if frame.depth is not None:
                frame.depth = noisy_depth(frame.depth, rng)
    return episode


def clean_stream(source: EpisodeSource) -> tuple[EpisodeStream, dict[str, float]]:
    """The clean predicate stream of one episode (to fit the recognizers on)."""
    timer = Timer()
    with timer.phase("load"):
        episode = _load(source, images=_loads_images())
    run = front_end().run(episode, CLEAN, _seed(source), None, timer)
    estimates = _extract(PredicateExtractor(_state["predicate_config"]), run, episode, timer)
    labels = episode.primitives if episode.primitives is not None else [None] * episode.num_frames
    stream = EpisodeStream(episode.name, episode.scenario_group,
                           [(t, e) for (t, _), e in zip(run.delivered, estimates)],
                           list(labels))
    return stream, dict(timer.seconds)


def selection_sequence(source: EpisodeSource) -> tuple[list, dict[str, float]]:
    """(frame_index, entities, references, depth_m, camera) of one clean episode for threshold
    selection, the references renamed into the front-end's ids (`reliability.association`) so the
    extractor's own ids meet them; depth and camera of the frame shown, as `_extract` gives them."""
    timer = Timer()
    with timer.phase("load"):
        episode = _load(source, images=_loads_images())
    if episode.gt_entities is None or episode.frames[0].predicates is None:
        raise UserError(f"{episode.name}: threshold selection needs ground-truth entities and predicates")
    run = front_end().run(episode, CLEAN, _seed(source), None, timer)
    min_iou = _state["spec"].config.match_iou
    sequence = []
    with timer.phase("association"):
        for (t, content), entities in zip(run.delivered, run.entities):
            mapping = associate(entities, episode.gt_entities[content], min_iou)
            inverse = {truth: own for own, truth in mapping.items()}
            frame = episode.frames[content]
            sequence.append((t, entities, renamed(frame.predicates, inverse)[0], frame.depth, frame.camera))
    return sequence, dict(timer.seconds)


def warm_detections(source: EpisodeSource) -> dict[str, float]:
    """Run (or read from the cache) the clean detections of one episode."""
    timer = Timer()
    with timer.phase("load"):
        episode = _load(source, images=True)
    front_end().detections(episode, CLEAN, _seed(source), None, timer)
    return dict(timer.seconds)


def _reference_entities(episode: LoadedEpisode, clean: ConditionRun) -> list[list[Entity]] | None:
    """Entities that name the reference's streams: the ground truth's, else the clean run's."""
    if episode.gt_entities is not None:
        return episode.gt_entities
    by_frame: list[list[Entity]] = [[] for _ in range(episode.num_frames)]
    for (t, _), entities in zip(clean.delivered, clean.entities):
        by_frame[t] = entities
    return by_frame


def evaluate_episode(source: EpisodeSource) -> EpisodeResult:
    """Every condition of the sweep on one episode (see the module docstring)."""
    spec: SweepSpec = _state["spec"]
    config = spec.config
    front = front_end()
    timer = Timer()
    started = time.perf_counter()
    with timer.phase("load"):
        episode = _load(source, images=_loads_images())
    if config.reference == GROUND_TRUTH and episode.gt_codes is None:
        raise UserError(f"{episode.name} has no ground-truth predicates; use --reference clean")
    seed = _seed(source)
    extractor = PredicateExtractor(_state["predicate_config"])
    count = episode.num_frames
    conditions = [CLEAN] + [Condition(kind, s) for kind in config.kinds for s in config.severities]

    clean = front.run(episode, CLEAN, seed, None, timer)
    clean_estimates = _extract(extractor, clean, episode, timer)
    references = _reference_entities(episode, clean)
    if episode.gt_entities is not None:   # the streams the extractor evaluates on the true entities
        oracle = ConditionRun(CLEAN, [(t, t) for t in range(count)], episode.gt_entities)
        scope = clean_estimates if front.name == "oracle" else \
            _extract(extractor, oracle, episode, timer, "reference_scope")
    else:
        scope = clean_estimates
    index = StreamIndex(scope_keys(scope))

    y_true = None
    if spec.action_models is not None and episode.primitives is not None:
        y_true = action.class_indices(episode.primitives, spec.action_models.full.class_names)
    confident = _state["predicate_config"].confidence.floor > 0   # see action.predict_condition
    kept: list[Condition] = []
    ys, cs, presents, delivered_masks = [], [], [], []
    trust_series: list[trust_measurement.TrustSeries] = []
    switch_frames: dict[Condition, list] = {}   # clean and severity-3 frames, for the switching schedules
    clean_measures: dict[int, dict] = {}        # content frame -> image measures of the clean image
    predictions: dict[tuple[str, str, int], tuple[np.ndarray, np.ndarray]] = {}
    not_applicable: list[str] = []
    stats = []
    for condition in conditions:
        if condition == CLEAN:
            run, estimates = clean, clean_estimates
        else:
            try:
                run = front.run(episode, condition, seed, clean, timer)
            except NotApplicable:
                if condition.kind not in not_applicable:
                    not_applicable.append(condition.kind)
                continue
            estimates = _extract(extractor, run, episode, timer)
        with timer.phase("association"):
            if episode.gt_entities is None and condition == CLEAN:
                mappings = [None] * len(run.delivered)
            else:
                mappings = [associate(entities, references[content], config.match_iou)
                            for (_, content), entities in zip(run.delivered, run.entities)]
            y, c, present = index.fill(run.delivered, estimates, mappings, count)
            partners = None
            if condition == CLEAN and episode.gt_entities is not None:
                partners = Counter()
                for (_, content), entities, mapping in zip(run.delivered, run.entities, mappings):
                    partners += entity_partners.partner_outcomes(entities, references[content], mapping,
                                                                 config.match_iou)
        delivered = np.zeros(count, dtype=bool)
        delivered[[t for t, _ in run.delivered]] = True
        kept.append(condition)
        ys.append(y), cs.append(c), presents.append(present), delivered_masks.append(delivered)
        with timer.phase("trust"):
            frames = _trust_frames(episode, run, estimates, seed, clean, clean_measures)
            trust_series.append(_self_trust(frames, episode, y_true))
            if condition == CLEAN or condition.severity == trust_measurement.SWITCH_SEVERITY:
                switch_frames[condition] = frames
        stats.append({"kind": condition.kind, "severity": condition.severity, "delivered": int(delivered.sum()),
                      "entities_per_frame": float(np.mean([len(e) for e in run.entities])) if run.entities else 0.0,
                      **({} if partners is None else {"reference_entities": entity_partners.nested(partners)})})
        if y_true is not None:
            with timer.phase("action"):
                frames = [(t, e) for (t, _), e in zip(run.delivered, estimates)]
                for variant, outcome in action.predict_condition(spec.action_models, frames, y_true,
                                                                 known_values_confident=confident).items():
                    predictions[(variant, condition.kind, condition.severity)] = outcome

    with timer.phase("scores"):
        y = np.stack(ys)
        c = np.stack(cs)
        clean_index = kept.index(CLEAN)
        if config.reference == GROUND_TRUTH:
            y_ref = np.stack([episode.gt_codes.get(key, np.full(count, vocabulary.UNK, np.int8))
                              for key in index.keys]) \
                if len(index) else np.zeros((0, count), np.int8)
            c_ref = (y_ref != vocabulary.UNK).astype(np.float32)
        else:
            y_ref, c_ref = y[clean_index].copy(), c[clean_index].copy()
        sequences = EpisodeSequences(episode.name, episode.scenario_group, index.keys, kept, y, c, np.stack(presents),
                                     np.stack(delivered_masks), y_ref.astype(np.int8), c_ref, c[clean_index].copy(),
                                     config.reference)
        rows = scores.episode_rows(sequences, config.tpc_tolerance)
    with timer.phase("save"):
        if spec.sequences_dir is not None:
            sequences.save(Path(spec.sequences_dir) / f"{episode.name}.npz")
            with timer.phase("trust"):
                switch = trust_measurement.switch_frame(count)
                switches = {condition.kind: _self_trust(trust_measurement.spliced(switch_frames[CLEAN], frames, switch),
                                                        episode, y_true)
                            for condition, frames in switch_frames.items() if condition != CLEAN}
            trust_measurement.save_series(Path(spec.sequences_dir) / f"{episode.name}.trust.npz", trust_series,
                                          switches)
            if y_true is not None:
                _save_predictions(Path(spec.sequences_dir) / f"{episode.name}.action.npz", y_true, predictions)
    timings = dict(timer.seconds)
    timings["episode_total"] = time.perf_counter() - started
    return EpisodeResult(episode.name, episode.scenario_group, count, rows, predictions, y_true, timings,
                         not_applicable, stats)


def _trust_frames(episode: LoadedEpisode, run: ConditionRun, estimates: list[list[PredicateEstimate]], seed: int,
                  clean: ConditionRun, clean_measures: dict[int, dict]) -> list[trust_measurement.TrustFrame]:
    """(frame index, estimates, entities, image measures) of the delivered frames of one condition's
    run; the image measures are those of the image perception saw (None when it sees no images): the
    run's own where the front-end measured them, the episode's clean ones (`clean_measures`, filled
    here and shared by the conditions that leave the images clean), else measured here."""
    measures: list = [None] * len(run.delivered)
    if front_end().needs_images:
        degrader = image_degrader(run.condition, seed)
        targets = occlusion_targets(episode, run.condition, clean)
        quality = ImageQuality()
        measured = clean_measures if degrader is None else dict(run.image_measures or {})
        for position, (_, content) in enumerate(run.delivered):
            if content not in measured:
                image = episode.frames[content].rgb
                if degrader is not None:
                    image = degrader.apply_image(image, content, None if targets is None else targets[content])
                measured[content] = quality.measure(image)
            measures[position] = measured[content]
    return [(t, e, entities, measure)
            for (t, _), e, entities, measure in zip(run.delivered, estimates, run.entities, measures)]


def _self_trust(frames: list, episode: LoadedEpisode, labels: np.ndarray | None) -> trust_measurement.TrustSeries:
    """The reference-free trust of delivered frames, as the live reliability node gives it, and with
    the action models and labels the action node's gate fed with it."""
    spec = _state["spec"]
    predicates = _state["predicate_config"]
    height, width = episode.shape[:2]
    recognizer = ActionRecognizer(spec.action_models.full, _state["action_config"]) \
        if spec.action_models is not None and labels is not None else None
    return trust_measurement.self_trust(frames, episode.num_frames, spec.config.trust_window, (width, height),
                                        profile=_state["trust_profile"], track_memory=predicates.track_memory,
                                        min_visibility=predicates.confidence.min_visibility,
                                        model=_state["trust_model"], recognizer=recognizer, labels=labels)


def _save_predictions(path: Path, y_true: np.ndarray, predictions: dict) -> None:
    arrays = {"y_true": y_true}
    for (variant, kind, severity), (y_pred, p_true) in predictions.items():
        arrays[f"y_pred|{variant}|{kind}|{severity}"] = y_pred.astype(np.int8)
        arrays[f"p_true|{variant}|{kind}|{severity}"] = p_true
    save_atomically(path, arrays)


def load_predictions(path: str | Path) -> tuple[np.ndarray, dict[tuple[str, str, int], tuple[np.ndarray, np.ndarray]]]:
    """The saved per-frame recognizer outcomes of one episode: y_true and (variant, kind, severity) ->
    (y_pred, p_true)."""
    with np.load(path) as data:
        y_true = data["y_true"]
        out = {}
        for name in data.files:
            if name.startswith("y_pred|"):
                _, variant, kind, severity = name.split("|")
                out[(variant, kind, int(severity))] = (data[name].astype(np.int64),
                                                       data[f"p_true|{variant}|{kind}|{severity}"].astype(np.float64))
    return y_true, out


def worker_threads(jobs: int) -> int:
    """CPU threads per worker so that `jobs` workers share the machine's cores."""
    return max(1, (os.cpu_count() or 1) // jobs)

