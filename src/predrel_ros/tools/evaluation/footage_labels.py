"""Labels of real footage (the `real-dev` format) as reference predicates, and the pipeline's agreement with them.

Real clips have no simulator behind them; their labels (one JSON object per labelled frame in a
`.jsonl`, every 6th frame, and grasp / release events in an `events.json`; the format is described in
docs/evaluation.md) name hands, objects and surfaces with rough boxes and say, per hand, what it
touches and holds, and per object whether it is lifted and what it lies on. What they determine
becomes reference values of the predicate streams between the labelled entities:

- contact(hand, object): T for the object the hand is `in_contact_with` or `holding`, N for the other
  labelled objects (a hand whose contact is `unsure` or an unnamed block gives none);
- contact(object, surface): T when the object lies `on` the surface and is not lifted, N when lifted;
- static(object, surface): Sup when it lies on it, not lifted (a lifted object's relation, above or
  around, the labels do not tell);
- grasp(hand, object): T for the object it is `holding`, N for the others (`unsure` gives none);
- release(hand, object): N on frames whose hold state is known and that lie outside every labelled
  release of the pair (after `last_frame_before`, up to `first_frame_after`): a release is an event between two
  labelled frames, so its own frame is never labelled.
- active_hand(hand): T when it touches or holds an object (an unnamed block too, not a surface); when it does
  neither it may still be approaching one, which the labels do not tell, so N is never given.
Dynamic relations are not determined by these labels. Anything `unsure` (an entity's visibility, a
hand's contact or hold, an object's support) is left out. A hand labelled with the person's side
(`right` / `left`, its `side_confidence` not `unsure`) also checks the side perception gave the hand
it was associated with (MediaPipe's handedness mapping, docs/perception.md).

A frame's agreement is computed as `predrel eval` computes it against ground truth: the pipeline's
entities are associated with the labelled ones (`reliability.association`, class ignored, by kind:
hands with hands, surfaces with surfaces, the rest with the rest; box IoU >= `LABEL_MIN_IOU`, lower than the
evaluator's default since the labels' boxes are rough), its estimates renamed, and every reference
stream counts once, agreeing when the pipeline's value equals it (a stream it did not produce, for
an entity it did not find, disagrees).
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from predrel_ros.core.entities import HAND_ROLES, LEFT_HAND, MANIPULATED_OBJECT, RIGHT_HAND, SURFACE, Entity
from predrel_ros.core.errors import UserError
from predrel_ros.predicates import vocabulary
from predrel_ros.predicates.estimate import NO_OBJECT, PredicateEstimate, stream_key
from predrel_ros.reliability.association import associate, renamed

#: box IoU a pipeline entity needs with a labelled one (the labels' boxes are rough: +-10-30 px)
LABEL_MIN_IOU = 0.2
UNSURE = "unsure"
#: the kinds entities are associated within
HAND, OBJECT = "hand", "object"
_VISIBLE = (True, "partial")
#: a labelled hand's `side` (the person's) -> the role perception should give it
SIDES = {"right": RIGHT_HAND, "left": LEFT_HAND}
StreamKey = tuple[str, int, int]


@dataclass(frozen=True)
class LabelledFrame:
    """One labelled frame: the labelled entities (label = their kind, for the association) and the
    reference value code of every stream the labels determine."""

    entities: tuple[Entity, ...]
    values: Mapping[StreamKey, int]
    sides: Mapping[int, str]      # labelled hand id -> its role (left_hand / right_hand), where the side is known


@dataclass(frozen=True)
class FootageLabels:
    """The labelled frames of one clip, by frame index."""

    clip: str
    frames: Mapping[int, LabelledFrame]

    def agreement(self, frame_index: int, entities: Sequence[Entity], estimates: Sequence[PredicateEstimate]
                  ) -> "FrameAgreement | None":
        """The pipeline's agreement with a labelled frame (None for a frame not labelled)."""
        labelled = self.frames.get(frame_index)
        if labelled is None:
            return None
        seen = [dataclasses.replace(entity, label=_kind(entity.role)) for entity in entities if entity.visibility > 0]
        mapping = associate(seen, list(labelled.entities), LABEL_MIN_IOU)
        produced = {estimate.canonical_key: estimate.code for estimate in renamed(estimates, mapping)[0]}
        found = set(mapping.values()) | {NO_OBJECT}
        streams: dict[str, list[int]] = {}
        for key, reference in labelled.values.items():
            tally = streams.setdefault(key[0], [0, 0, 0])
            tally[0] += 1
            tally[1] += int(key[1] in found and key[2] in found)
            tally[2] += int(produced.get(key, vocabulary.UNK) == reference)
        kinds: dict[str, list[int]] = {}
        for entity in labelled.entities:
            tally = kinds.setdefault(entity.label, [0, 0, 0])
            tally[0] += 1
            tally[1] += int(entity.id in found)
        for entity in seen:
            if entity.id not in mapping:
                kinds.setdefault(entity.label, [0, 0, 0])[2] += 1
        roles = {mapping[entity.id]: entity.role for entity in entities if entity.id in mapping}
        sided = [hand for hand in labelled.sides if hand in roles]
        return FrameAgreement({group: tuple(tally) for group, tally in streams.items()},
                              {kind: tuple(tally) for kind, tally in kinds.items()},
                              (len(sided), sum(roles[hand] == labelled.sides[hand] for hand in sided)))


@dataclass(frozen=True)
class FrameAgreement:
    """One labelled frame against the pipeline: per predicate name (reference streams, those whose
    entities the pipeline found, those it agrees on), names without a reference stream left out; per
    kind of entity (hand, object, surface) (labelled, labelled and found, the pipeline's visible
    entities matching no labelled one); and (hands found whose side is labelled, those given that side)."""

    streams: Mapping[str, tuple[int, int, int]]
    entities: Mapping[str, tuple[int, int, int]]
    sides: tuple[int, int]

    def by_group(self) -> dict[str, tuple[int, int, int]]:
        """`streams` summed per predicate group."""
        groups: dict[str, np.ndarray] = {}
        for name, tally in self.streams.items():
            group = vocabulary.group_of(name)
            groups[group] = groups.get(group, np.zeros(3, np.int64)) + tally
        return {group: tuple(int(count) for count in tally) for group, tally in groups.items()}


class LabelScore:
    """The agreements of a clip's frames in order (`add`, once per frame: None for a frame not
    labelled): per frame the group counts (`group_counts`, what the windows are made of) and, pooled
    over the labelled frames, per predicate, per kind of entity and for the hands' sides (`pooled`)."""

    def __init__(self) -> None:
        self._groups: list[dict[str, tuple[int, int, int]]] = []
        self._names: dict[str, np.ndarray] = {}
        self._kinds: dict[str, np.ndarray] = {}
        self._sides = np.zeros(2, np.int64)

    def add(self, agreement: FrameAgreement | None) -> None:
        self._groups.append(agreement.by_group() if agreement is not None else {})
        if agreement is None:
            return
        for totals, counts in ((self._names, agreement.streams), (self._kinds, agreement.entities)):
            for key, tally in counts.items():
                totals[key] = totals.get(key, 0) + np.asarray(tally, np.int64)
        self._sides += agreement.sides

    def group_counts(self) -> list[dict[str, tuple[int, int, int]]]:
        """Per frame added: group -> (reference streams, found, agreed on); empty when not labelled."""
        return list(self._groups)

    def pooled(self) -> dict:
        """labelled_frames; entities_found per kind (labelled, found_share: None where none is labelled,
        unmatched_per_frame: the pipeline's entities of the kind matching no label, per labelled frame);
        hand_sides (hands: found with a labelled side, agreement: the share given that side); predicates
        per name (reference_streams, found_share, agreement)."""
        hands, right = (int(value) for value in self._sides)
        frames = sum(1 for frame in self._groups if frame)
        return {
            "labelled_frames": frames,
            "entities_found": {kind: {"labelled": int(labelled),
                                      "found_share": float(found / labelled) if labelled else None,
                                      "unmatched_per_frame": float(unmatched / frames)}
                               for kind, (labelled, found, unmatched) in sorted(self._kinds.items())},
            "hand_sides": {"hands": hands, "agreement": right / hands if hands else None},
            "predicates": {name: {"reference_streams": int(known), "found_share": float(found / known),
                                  "agreement": float(agreeing / known)}
                           for name in vocabulary.PREDICATES if name in self._names
                           for known, found, agreeing in [self._names[name]]}}


def load_footage_labels(path: str | Path, events_path: str | Path | None = None) -> FootageLabels:
    """The labels of one clip from its `.jsonl` (and the grasp / release events of `events_path`, an
    `events.json` covering any clips: those of this clip are used). Raises UserError for a file that
    is not in the format."""
    path = Path(path)
    try:
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        clip = rows[0]["clip"] if rows else path.stem
        releases = _releases(events_path, clip) if events_path is not None else {}
        ids: dict[str, int] = {}
        frames = {int(row["frame_index"]): _frame(row, ids, releases) for row in rows}
    except (OSError, ValueError, KeyError, TypeError, IndexError) as error:
        raise UserError(f"{path}: not a footage label file ({type(error).__name__}: {error})") from None
    if not frames:
        raise UserError(f"{path}: no labelled frame")
    return FootageLabels(clip, frames)


def _kind(role: str) -> str:
    return HAND if role in HAND_ROLES else SURFACE if role == SURFACE else OBJECT


def _releases(events_path: str | Path, clip: str) -> dict[tuple[str, str], list[tuple[int, int]]]:
    """(hand, object) -> the frame spans a labelled release of the pair lies in."""
    spans: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for event in json.loads(Path(events_path).read_text())["events"]:
        if event["clip"] == clip and event["event"] == vocabulary.RELEASE:
            spans.setdefault((event["hand"], event["object"]), []).append(
                (int(event["last_frame_before"]), int(event["first_frame_after"])))
    return spans


def _frame(row: dict, ids: dict[str, int], releases: Mapping[tuple[str, str], list[tuple[int, int]]]
           ) -> LabelledFrame:
    frame_index = int(row["frame_index"])

    def entity(name: str, kind: str, role: str, box) -> Entity:
        return Entity(ids.setdefault(name, len(ids) + 1), kind, role, np.asarray(box, dtype=float),
                      frame_index=frame_index)

    hands = [h for h in row["hands"] if h["visible"] is True and h.get("box") is not None]
    surfaces = [o for o in row["objects"] if o.get("role") == SURFACE and o.get("box") is not None]
    objects = [o for o in row["objects"] if o.get("role") != SURFACE and o["visible"] in _VISIBLE
               and o.get("box") is not None]
    entities = [entity(h["id"], HAND, RIGHT_HAND, h["box"]) for h in hands] \
        + [entity(o["name"], SURFACE, SURFACE, o["box"]) for o in surfaces] \
        + [entity(o["name"], OBJECT, MANIPULATED_OBJECT, o["box"]) for o in objects]
    named = {o["name"] for o in row["objects"]}
    values: dict[StreamKey, int] = {}

    def put(name: str, subject: str, obj: str | None, label: str) -> None:
        values[stream_key(name, ids[subject], NO_OBJECT if obj is None else ids[obj])] = vocabulary.encode(name, label)

    for hand in hands:
        touched, held = hand.get("in_contact_with"), hand.get("holding")
        if {touched, held} - {None, UNSURE} - {surface["name"] for surface in surfaces}:
            put(vocabulary.ACTIVE_HAND, hand["id"], None, vocabulary.TRUE_LABEL)
        for item in objects:
            name = item["name"]
            if touched != UNSURE and (touched is None or touched in named):
                put(vocabulary.CONTACT, hand["id"], name, _truth(name in (touched, held)))
            if held != UNSURE:
                put(vocabulary.GRASP, hand["id"], name, _truth(held == name))
                if not any(first < frame_index <= last for first, last in releases.get((hand["id"], name), ())):
                    put(vocabulary.RELEASE, hand["id"], name, vocabulary.FALSE_LABEL)
    for item in objects:
        lifted, support = item.get("lifted"), item.get("on")
        for surface in surfaces:
            if lifted is True:
                put(vocabulary.CONTACT, item["name"], surface["name"], vocabulary.FALSE_LABEL)
            elif lifted is False and support == surface["name"]:
                put(vocabulary.CONTACT, item["name"], surface["name"], vocabulary.TRUE_LABEL)
                put(vocabulary.STATIC, item["name"], surface["name"], "Sup")
    sides = {ids[hand["id"]]: SIDES[hand["side"]] for hand in hands
             if hand.get("side") in SIDES and hand.get("side_confidence") != UNSURE}
    return LabelledFrame(tuple(entities), values, sides)


def _truth(holds: bool) -> str:
    return vocabulary.TRUE_LABEL if holds else vocabulary.FALSE_LABEL
