"""Predicate streams of dataset episodes, produced exactly as the live pipeline produces them.

The recognizer is trained and evaluated on what the predicate node would publish: entities ->
`PredicateExtractor` -> estimates, frame by frame. Where the entities come from is the `source`:
- `oracle`: the episode's ground-truth entities (masks, boxes, visibility; score, track and mask
  quality 1), the stand-in for a perfect perception front-end;
- `perception`: a `Perceiver` run on the episode's images (the default model or any other).
A degradation (paper 4.3) sits where the replay node puts it: frame dropping decides which frame
indices are delivered (a repeat re-delivers older content under its own index), image kinds act on
the image before perception (so they need `perception`), detection noise on the entities.

An `EpisodeStream` keeps the delivered frames' estimates and the ground-truth primitive of every
frame (dropped frames included), so scores stay aligned with the clean reference.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator, Protocol

from predrel_ros.core.entities import Entity
from predrel_ros.core.errors import UserError
from predrel_ros.core.frame import Frame
from predrel_ros.degradations import DETECTION_NOISE, IMAGE_KINDS, Condition, Degrader, FrameAction
from predrel_ros.predicates.config import PredicateConfig
from predrel_ros.predicates.estimate import PredicateEstimate
from predrel_ros.predicates.extractor import PredicateExtractor
from predrel_ros.sources.dataset import Dataset, EpisodeReader

ORACLE = "oracle"
PERCEPTION = "perception"
SOURCES = (ORACLE, PERCEPTION)


class EntitySource(Protocol):
    """Entities of one frame; `reset()` between episodes; `needs_images` says whether to read PNGs."""

    name: str
    needs_images: bool

    def entities(self, frame: Frame) -> list[Entity]: ...

    def reset(self) -> None: ...


class OracleEntities:
    name = ORACLE
    needs_images = False

    def entities(self, frame: Frame) -> list[Entity]:
        if frame.entities is None:
            raise UserError(f"frame {frame.index} has no ground-truth entities; the oracle source needs them")
        return list(frame.entities)

    def reset(self) -> None:
        pass


class PerceivedEntities:
    """Entities from a `Perceiver` (anything with process(image, frame_index, depth, camera, bgr)
    and reset()); use_depth=False perceives the colour image alone, as a perception_node without
    `use_depth` does."""

    name = PERCEPTION
    needs_images = True

    def __init__(self, perceiver, use_depth: bool = True) -> None:
        self.perceiver = perceiver
        self.use_depth = use_depth

    def entities(self, frame: Frame) -> list[Entity]:
        if not self.use_depth:
            return self.perceiver.process(frame.rgb, frame.index, bgr=False)
        return self.perceiver.process(frame.rgb, frame.index, depth=frame.depth, camera=frame.camera, bgr=False)

    def reset(self) -> None:
        self.perceiver.reset()


@dataclass
class EpisodeStream:
    """One episode as the recognizer sees it."""

    name: str
    scenario_group: str
    frames: list[tuple[int, list[PredicateEstimate]]]   # delivered frames, increasing frame_index
    labels: list[str | None]                            # ground-truth primitive of every frame

    @property
    def num_frames(self) -> int:
        return len(self.labels)


def episode_stream(episode: EpisodeReader, source: EntitySource, extractor: PredicateExtractor,
                   condition: Condition | None = None, seed: int = 0) -> EpisodeStream:
    """Run source -> (degradation) -> extractor over one episode."""
    degrader = None
    if condition is not None and condition.severity > 0:
        if condition.kind in IMAGE_KINDS and not source.needs_images:
            raise UserError(f"{condition.kind} degrades images; the {source.name} source does not look at "
                            f"them (use --source {PERCEPTION})")
        degrader = Degrader(condition.kind, condition.severity, seed)
    source.reset()
    extractor.reset()
    delivered: dict[int, Frame] = {}
    labels: list[str | None] = []
    out: list[tuple[int, list[PredicateEstimate]]] = []
    for frame in episode.frames(images=source.needs_images):
        labels.append(frame.primitive)
        content = frame
        if degrader is not None:
            decision = degrader.decide_frame(frame.index)
            if decision.action == FrameAction.DROP:
                continue
            if decision.action == FrameAction.REPEAT:
                content = delivered[decision.source_index]
            else:
                delivered = {frame.index: frame}   # a repeat shows the last delivered frame
        entities = _entities(source, content, frame.index, degrader)
        out.append((frame.index, extractor.update(frame.index, entities)))
    return EpisodeStream(episode.meta.name, episode.meta.scenario_group, out, labels)


def _entities(source: EntitySource, content: Frame, frame_index: int, degrader: Degrader | None) -> list[Entity]:
    """Entities of `content` delivered under `frame_index` (a repeat re-delivers older content)."""
    if degrader is not None and degrader.kind in IMAGE_KINDS:
        image = degrader.apply_image(content.rgb, frame_index, targets=content.entities)
        content = Frame(index=frame_index, stamp_ns=content.stamp_ns, rgb=image, depth=content.depth,
                        camera=content.camera, source=content.source)
    elif content.index != frame_index:
        content = Frame(index=frame_index, stamp_ns=content.stamp_ns, rgb=content.rgb, depth=content.depth,
                        camera=content.camera, entities=content.entities, source=content.source)
    entities = source.entities(content)
    if degrader is not None and degrader.kind == DETECTION_NOISE:
        entities = degrader.apply_entities(entities, frame_index, content.rgb.shape)
    return entities


def dataset_streams(dataset: Dataset, split: str | None, source: EntitySource,
                    predicate_config: PredicateConfig | None = None, condition: Condition | None = None,
                    seed: int = 0, progress: bool = False) -> list[EpisodeStream]:
    """Streams of every episode of a split; episode i of the split is degraded with seed + i."""
    episodes = dataset.episodes(split)
    if not episodes:
        raise UserError(f"dataset {dataset.root} has no episodes in split {split!r}")
    extractor = PredicateExtractor(predicate_config)
    return list(_progress(
        (episode_stream(episode, source, extractor, condition, seed + index) for index, episode in enumerate(episodes)),
        progress, len(episodes), f"{split or 'all'} episodes ({source.name})"))


def _progress(items: Iterable, enabled: bool, total: int, description: str) -> Iterator:
    if not enabled:
        yield from items
        return
    from tqdm import tqdm
    yield from tqdm(items, total=total, desc=description, unit="episode")


def make_source(name: str, perception_config: str | None = None) -> EntitySource:
    """The entity source `name` (oracle | perception; perception_config: a perception YAML file)."""
    if name == ORACLE:
        if perception_config:
            raise UserError("--perception-config applies to the perception source only")
        return OracleEntities()
    if name == PERCEPTION:
        from predrel_ros.perception.config import PerceptionConfig
        from predrel_ros.perception.perceiver import Perceiver
        config = PerceptionConfig.load(perception_config) if perception_config else PerceptionConfig()
        return PerceivedEntities(Perceiver(config))
    raise UserError(f"unknown source {name!r}; expected one of {SOURCES}")
