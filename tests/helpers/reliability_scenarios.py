"""Test scenarios for the reliability monitor and node: ground-truth entities under occlusion.

    frames = occlusion_run(episode, loops=5, occluded=(2,), severity=5)
    profile = oracle_profile(other_episodes)

`occlusion_run` replays one episode of a dataset folder `loops` times with increasing frame indices
(as the replay node loops), and for every frame gives the clean ground-truth entities, the same
entities as seen behind an occlusion kind's occluders (`degradations.entity_occlusion`) during
the loops named in `occluded`, and the episode's ground-truth predicates. No images are read or
rendered, so a run of a few hundred frames takes a second or two. The scenarios occlude with
occlusion_flat by default: their expectations (every predicate group loses trust at severity 5 on
the fixture's episode) were set on its rectangles, whose geometry is fixed bit for bit; the shaped
occluders of `occlusion` leave some groups of that one short episode intact.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Iterable, Sequence

from predrel_ros.core.entities import Entity
from predrel_ros.degradations import OCCLUSION_FLAT, Degrader
from predrel_ros.degradations.entity_occlusion import occlude_entities
from predrel_ros.predicates.estimate import PredicateEstimate
from predrel_ros.predicates.extractor import PredicateExtractor
from predrel_ros.reliability.trust import CleanProfile
from predrel_ros.sources.dataset import EpisodeReader


@dataclass
class RunFrame:
    frame_index: int
    width: int
    height: int
    clean: list[Entity]
    degraded: list[Entity]
    references: list[PredicateEstimate]     # ground-truth predicates
    kind: str                               # degradation of the degraded entities
    severity: int


def occlusion_run(episode: EpisodeReader, loops: int, occluded: Sequence[int], severity: int,
                  seed: int = 3, kind: str = OCCLUSION_FLAT) -> list[RunFrame]:
    """The episode looped `loops` times; loops whose number is in `occluded` are occluded by `kind`."""
    frames = list(episode.frames(images=False))
    height, width = episode.meta.height, episode.meta.width
    out = []
    for loop in range(loops):
        degrader = Degrader(kind, severity, seed) if loop in occluded else None
        for frame in frames:
            index = loop * len(frames) + frame.index
            entities = frame.entities
            degraded = entities
            if degrader is not None:
                degraded = occlude_entities(entities, degrader.occluder_mask((height, width), targets=entities))
            out.append(RunFrame(index, width, height, entities, degraded, _renumbered(frame.predicates, index),
                                kind if degrader is not None else "none", severity if degrader else 0))
    return out


def _renumbered(references: Sequence[PredicateEstimate], frame_index: int) -> list[PredicateEstimate]:
    return [dataclasses.replace(reference, frame_index=frame_index) for reference in references]


def oracle_profile(episodes: Iterable[EpisodeReader], extractor: PredicateExtractor | None = None) -> CleanProfile:
    """The clean profile of the extractor on the episodes' ground-truth entities (`predrel profile
    --source oracle`)."""
    from predrel_ros.action.streams import OracleEntities
    from predrel_ros.tools.cli.profile import dataset_profile

    return dataset_profile(episodes, OracleEntities(), extractor if extractor is not None else PredicateExtractor())
