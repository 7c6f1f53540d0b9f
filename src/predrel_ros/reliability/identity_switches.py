"""Tracks whose object is tracked again under a new id (identity switches), frame by frame.

A tracker that loses an object and finds it again gives it a new track id. Downstream the old id
lives on for a while: the perception node reports a lost track (visibility 0) for a few frames and
the predicate extractor keeps a missing track's pairs for `track_memory` frames, reported as UNK
(missing evidence). While the object is tracked again under its new id, those UNK streams of the
old id are not evidence about the scene: the new id's streams are. Left in, they make a pipeline
that merely renumbered an object look as if it had lost it, and a reference-free monitor would
distrust clean data whenever a track was re-acquired (a held object found again, a looped bag).

`IdentitySwitches.update(frame_index, entities)` returns the ids of the tracks replaced at this
frame: not observed now (missing, or visibility below `min_visibility`) while a track of the same
class was first observed after the old one was last observed. A track lost with no successor (the
object hidden, e.g. by an occluder) is not replaced: its missing evidence keeps counting. A track
is forgotten `memory` frames after it was last listed, as the extractor forgets it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from predrel_ros.core.entities import Entity


@dataclass
class _Track:
    label: str
    first_observed: int | None = None
    last_observed: int | None = None
    last_listed: int = 0


class IdentitySwitches:
    def __init__(self, memory: int = 15, min_visibility: float = 0.05) -> None:
        if memory < 1:
            raise ValueError(f"memory must be >= 1 frame, got {memory}")
        if not 0.0 <= min_visibility <= 1.0:
            raise ValueError(f"min_visibility must lie in [0, 1], got {min_visibility}")
        self.memory = memory
        self.min_visibility = min_visibility
        self.reset()

    def reset(self) -> None:
        self._tracks: dict[int, _Track] = {}

    def update(self, frame_index: int, entities: Iterable[Entity]) -> frozenset[int]:
        """The ids of the tracks replaced at this frame (frames in increasing order)."""
        forgotten = [i for i, t in self._tracks.items() if t.last_listed < frame_index - self.memory]
        for track_id in forgotten:       # before this frame's entities: a returning id is a new track
            del self._tracks[track_id]
        observed: set[int] = set()
        for entity in entities:
            track = self._tracks.get(entity.id)
            if track is None or track.label != entity.label:     # a new track (or the id names another class)
                track = self._tracks[entity.id] = _Track(entity.label)
            track.last_listed = frame_index
            if entity.visibility >= self.min_visibility:
                observed.add(entity.id)
                if track.first_observed is None:
                    track.first_observed = frame_index
                track.last_observed = frame_index
        newest_by_label: dict[str, int] = {}
        for track_id in observed:
            track = self._tracks[track_id]
            newest_by_label[track.label] = max(newest_by_label.get(track.label, -1), track.first_observed)
        replaced = set()
        for track_id, track in self._tracks.items():
            if track_id in observed or track.last_observed is None:
                continue
            if newest_by_label.get(track.label, -1) > track.last_observed:
                replaced.add(track_id)
        return frozenset(replaced)
