"""Entities of an episode under one degradation condition: perception or the oracle.

A condition run is the sequence a predicate node would receive: the delivered frame indices (frame
dropping skips some and repeats others under their own index), and for each the entities the
front-end produced. Degradations sit where the paper puts them (4.3):

- image kinds (blur, occlusion, illumination, low resolution) act on the pixels before perception;
  the detector runs once per image condition and its output is cached on disk
  (`detection_cache`); tracking and entity assembly then run over the condition's sequence;
- frame dropping acts on the stream: the clean detections of the delivered content are tracked over
  the delivered indices only (a repeat re-processes the repeated frame's detections under its own
  index, a dropped frame is never seen), so no extra detector pass is needed;
- detection noise acts on the perception output: the clean run's entities are perturbed
  (`Degrader.apply_entities`), no extra detector or tracker pass.

`OracleFrontEnd` stands for perfect perception: the ground-truth entities. Only what changes the
entities a perfect front-end would report applies to it: frame dropping, detection noise, and
occlusion, through the occluded pixels (`entity_occlusion`: masks lose the hidden pixels,
visibility falls, an entity hidden entirely is not reported). Blur, illumination and low resolution
do not change what a perfect perception reports: they are not applicable to the oracle and are left
out of its sweep (reported as n/a), which separates perception failures from predicate failures.
"""
from __future__ import annotations

import dataclasses
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from predrel_ros.core.entities import Entity
from predrel_ros.core.errors import UserError
from predrel_ros.degradations import (
    BLUR,
    DETECTION_NOISE,
    FRAME_DROP,
    ILLUMINATION,
    IMAGE_KINDS,
    LOW_RESOLUTION,
    NONE,
    OCCLUSION_KINDS,
    Condition,
    Degrader,
    FrameAction,
)
from predrel_ros.degradations.entity_occlusion import occlude_entities
from predrel_ros.reliability import image_quality
from predrel_ros.reliability.image_quality import ImageQuality
from predrel_ros.tools.evaluation.data import LoadedEpisode
from predrel_ros.tools.evaluation.detection_cache import DetectionCache, cache_key, file_digest

#: phases whose time is perception (the network and the tracker / entity assembly); the rest of a
#: sweep's time is the evaluator's own overhead
PERCEPTION_PHASES = ("detector", "assembly")

#: image kinds that change nothing for a perfect front-end
ORACLE_NOT_APPLICABLE = (BLUR, ILLUMINATION, LOW_RESOLUTION)


class NotApplicable(Exception):
    """The condition does not change this front-end's input (e.g. blur for the oracle)."""


class Timer:
    """Seconds per phase."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)

    def phase(self, name: str) -> "_Phase":
        return _Phase(self, name)

    def add(self, other: dict[str, float]) -> None:
        for name, value in other.items():
            self.seconds[name] += value


class _Phase:
    def __init__(self, timer: Timer, name: str) -> None:
        self.timer, self.name = timer, name

    def __enter__(self) -> None:
        self.start = time.perf_counter()

    def __exit__(self, *exc) -> None:
        self.timer.seconds[self.name] += time.perf_counter() - self.start


@dataclass
class ConditionRun:
    """What the predicate extractor receives under one condition."""

    condition: Condition
    delivered: list[tuple[int, int]]            # (frame index, index of the frame whose content it shows)
    entities: list[list[Entity]] = field(default_factory=list)   # per delivered frame
    #: content frame -> `ImageQuality` measures of the degraded image perception saw, where the front-end
    #: has them (degraded in this run, or kept with the cached detections); the trust phase measures the
    #: rest itself
    image_measures: dict[int, dict[str, float]] | None = None


def delivery(condition: Condition, seed: int, count: int) -> list[tuple[int, int]]:
    """(frame index, content frame index) of every delivered frame, in order (frame dropping: drops
    left out, repeats carry the last delivered frame's index)."""
    if condition.kind != FRAME_DROP or condition.severity == 0:
        return [(t, t) for t in range(count)]
    degrader = Degrader(FRAME_DROP, condition.severity, seed)
    out = []
    for t in range(count):
        decision = degrader.decide_frame(t)
        if decision.action == FrameAction.DELIVER:
            out.append((t, t))
        elif decision.action == FrameAction.REPEAT:
            out.append((t, decision.source_index))
    return out


def _noisy(clean: ConditionRun, condition: Condition, seed: int, shape: tuple[int, ...]) -> ConditionRun:
    degrader = Degrader(DETECTION_NOISE, condition.severity, seed)
    entities = [degrader.apply_entities(items, t, shape) for (t, _), items in zip(clean.delivered, clean.entities)]
    return ConditionRun(condition, list(clean.delivered), entities)


class OracleFrontEnd:
    """Ground-truth entities (perfect perception); see the module docstring."""

    name = "oracle"
    needs_images = False

    def applicable(self, kind: str) -> bool:
        return kind not in ORACLE_NOT_APPLICABLE

    def run(self, episode: LoadedEpisode, condition: Condition, seed: int, clean: ConditionRun | None,
            timer: Timer) -> ConditionRun:
        if episode.gt_entities is None:
            raise UserError(f"{episode.name}: oracle perception needs ground-truth entities, which this "
                            f"source does not have")
        if not self.applicable(condition.kind):
            raise NotApplicable(condition.kind)
        truth = episode.gt_entities
        with timer.phase("degrade_entities"):
            if condition.kind == DETECTION_NOISE and condition.severity > 0:
                return _noisy(clean, condition, seed, episode.shape)
            delivered = delivery(condition, seed, episode.num_frames)
            if condition.kind in OCCLUSION_KINDS and condition.severity > 0:
                degrader = Degrader(condition.kind, condition.severity, seed)
                shape = episode.shape[:2]
                entities = [occlude_entities(truth[t], degrader.occluder_mask(shape, targets=truth[t]))
                            for t, _ in delivered]
            else:
                entities = [truth[source] for _, source in delivered]
        return ConditionRun(condition, delivered, entities)


def _replay_perceiver_class():
    from predrel_ros.perception.perceiver import Perceiver

    class ReplayPerceiver(Perceiver):
        """A Perceiver that can also take a frame's detections from elsewhere (the cache) and run
        only tracking and entity assembly on them."""

        _given = None

        def image_detections(self, image: np.ndarray, bgr: bool = True):
            return super().image_detections(image, bgr) if self._given is None else self._given

        def assemble(self, detections, frame_index: int, shape: tuple[int, ...], depth, camera) -> list[Entity]:
            self._given = detections
            try:   # process() reads only the size of the image once image_detections() has answered
                return self.process(np.broadcast_to(np.zeros(3, np.uint8), shape), frame_index, depth=depth,
                                    camera=camera, bgr=False)
            finally:
                self._given = None

    return ReplayPerceiver


class PerceptionFrontEnd:
    """A perception model (any `PerceptionConfig`) with its detections cached per image condition."""

    name = "perception"
    needs_images = True

    def __init__(self, config, cache: DetectionCache) -> None:
        self.perceiver = _replay_perceiver_class()(config)
        self.cache = cache
        self.model_digest = file_digest(self.perceiver.model_file)
        self._quality = ImageQuality()
        self._quality_version = file_digest(image_quality.__file__)   # cached measures of other code are not read
        self._clean: tuple[str, list] | None = None   # (episode content hash, clean detections): frame
        # dropping reuses them, once per severity
        self.settings = {"decoder": dataclasses.asdict(config.decoder), "input_size": config.input_size,
                         "masks": config.masks, "hand_landmarks": dataclasses.asdict(config.hand_landmarks),
                         "labels": list(self.perceiver.labels)}

    def applicable(self, kind: str) -> bool:
        return True

    def describe(self) -> dict:
        return {"model_file": str(self.perceiver.model_file), "model_sha256": self.model_digest,
                **self.perceiver.describe()}

    def close(self) -> None:
        self.perceiver.close()

    def detections(self, episode: LoadedEpisode, condition: Condition, seed: int, targets: list[list[Entity]] | None,
                   timer: Timer) -> tuple[list, dict[int, dict[str, float]] | None]:
        """Detector output of every frame under an image condition (clean: kind none), and the image
        measures of the degraded images (measured as they are degraded, kept in the cache with the
        detections; None for the clean images, or a cache entry written without them)."""
        degrader = image_degrader(condition, seed)
        image_condition = condition if degrader is not None else None
        described = {"kind": NONE, "severity": 0}
        if image_condition is not None:
            described = {"kind": image_condition.kind, "severity": image_condition.severity, "seed": seed,
                         "parameters": degrader.parameters(),
                         "targets": ("ground_truth" if episode.gt_entities is not None else "clean_run")
                         if image_condition.kind in OCCLUSION_KINDS else None}
        if image_condition is None and self._clean is not None and self._clean[0] == episode.content_hash:
            return self._clean[1], None
        key = cache_key(self.model_digest, self.settings, described, episode.content_hash)
        with timer.phase("cache_io"):
            cached = self.cache.get(key, self._quality_version)
        out, measures = cached if cached is not None else (None, None)
        if out is None or len(out) != episode.num_frames:
            out = []
            measures = {} if degrader is not None else None
            self.perceiver.reset()          # the hands followed from frame to frame start afresh
            for frame in episode.frames:
                image = frame.rgb
                if degrader is not None:
                    with timer.phase("degrade_images"):
                        image = degrader.apply_image(image, frame.index,
                                                     None if targets is None else targets[frame.index])
                    with timer.phase("trust"):      # measured now, so the trust phase need not degrade it again
                        measures[frame.index] = self._quality.measure(image)
                with timer.phase("detector"):
                    out.append(self.perceiver.image_detections(image, bgr=False))
            with timer.phase("cache_io"):
                self.cache.put(key, out, episode.shape[:2], measures, self._quality_version)
        if image_condition is None:
            self._clean = (episode.content_hash, out)
        return out, measures

    def run(self, episode: LoadedEpisode, condition: Condition, seed: int, clean: ConditionRun | None,
            timer: Timer) -> ConditionRun:
        if condition.kind == DETECTION_NOISE and condition.severity > 0:
            with timer.phase("degrade_entities"):
                return _noisy(clean, condition, seed, episode.shape)
        detections, measures = self.detections(episode, condition, seed, occlusion_targets(episode, condition, clean),
                                               timer)
        delivered = delivery(condition, seed, episode.num_frames)
        perceiver = self.perceiver
        entities = []
        with timer.phase("assembly"):
            perceiver.reset()
            for t, source in delivered:
                frame = episode.frames[source]
                entities.append(perceiver.assemble(detections[source], t, frame.rgb.shape, frame.depth, frame.camera))
        return ConditionRun(condition, delivered, entities, measures)


def image_degrader(condition: Condition, seed: int) -> Degrader | None:
    """The degrader of the images perception sees under `condition` (None: it sees the clean ones)."""
    if condition.kind in IMAGE_KINDS and condition.severity > 0:
        return Degrader(condition.kind, condition.severity, seed)
    return None


def occlusion_targets(episode: LoadedEpisode, condition: Condition,
                      clean: ConditionRun | None) -> list[list[Entity]] | None:
    """Per frame the entities the occlusion degradation hides (the ground truth's, else the clean
    run's); None under any other condition."""
    if condition.kind not in OCCLUSION_KINDS or condition.severity == 0:
        return None
    return episode.gt_entities if episode.gt_entities is not None else _per_frame(clean, episode.num_frames)


def _per_frame(run: ConditionRun, count: int) -> list[list[Entity]]:
    out: list[list[Entity]] = [[] for _ in range(count)]
    for (t, _), entities in zip(run.delivered, run.entities):
        out[t] = entities
    return out


def make_front_end(perception: str, perception_config: str | None, cache_dir: str | Path | None, threads: int = 0):
    """The oracle, or a perception front-end for "default", a model path, or a perception YAML."""
    if perception == "oracle":
        if perception_config:
            raise UserError("--perception-config applies to a perception model, not to the oracle")
        return OracleFrontEnd()
    from predrel_ros.perception.config import PerceptionConfig
    config = PerceptionConfig.load(perception_config, section="perception") if perception_config else PerceptionConfig()
    if perception != "default":
        config = dataclasses.replace(config, model=str(perception))
    if threads and not config.backend.num_threads:
        config = dataclasses.replace(config, backend=dataclasses.replace(config.backend, num_threads=threads))
    return PerceptionFrontEnd(config, DetectionCache(cache_dir))
