"""The confidence-weighted predicate state Psi_t as a fixed-length vector (paper 3.6, 4.6).

A scene has any number of entities and pairs; the recognizer needs a fixed input. The encoding
pools the frame's estimates by *pair kind*, predicate and value:

    x[kind, predicate, value] = max over the frame's pairs of that kind of  c * I(y = value)

with c the estimate's confidence (1 in the no-confidence variant, the paper's "without confidence
weighting" ablation). UNK contributes nothing: a kind whose pairs are all UNK reads all zeros, the
same as a kind absent from the scene. So "unknown" has one encoding, zero, and masking a predicate
(`masked`) sets its values to that encoding at inference time.

Pair kinds follow the extractor's pair rules (paper 4.2) and are read from the structure of the
estimates themselves, so a PredicateArray alone is enough (it carries no roles):
- `hand`: unary predicates (active_hand) of each hand;
- `hand_object`: a pair with grasp / release estimates (the extractor emits them for hand subjects);
- `object_container`: a pair with a containment_event estimate ("In" applies);
- `object_object`: static estimates in both orientations (the symmetric object-object rule);
- `object_surface`: the remaining pairs with a support_event estimate ("Sup" applies).
A pair that fits none of them (a custom pair rule without derived predicates) is left out. The
kind depends on which estimates exist, never on their values, so masking does not change it.

Each kind encodes the predicates the extractor emits for it, every value label of each (impossible
combinations, such as In for a hand, stay zero): 70 numbers per frame with the default vocabulary.

Temporal context (`TemporalSpec`, causal: the node runs live) stacks the frame vectors at `lags`
frames back and adds the element-wise max over the last `recent_max` frames (events such as
release or containment_event last one frame; the max keeps them visible while the primitive runs).
Frames are addressed by frame_index: a lagged frame that was not received (dropped, or before the
stream began) is stood in for by the newest received frame at most `max_hold` frames older,
otherwise it reads as unknown (zeros); the trailing max takes only the received frames.
`TemporalWindow` is the one implementation of this, used frame by frame by the live recognizer and
over whole episodes by the offline evaluation, so both give the same numbers.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from predrel_ros.predicates import vocabulary
from predrel_ros.predicates.estimate import NO_OBJECT, PredicateEstimate

HAND = "hand"
HAND_OBJECT = "hand_object"
OBJECT_CONTAINER = "object_container"
OBJECT_SURFACE = "object_surface"
OBJECT_OBJECT = "object_object"
PAIR_KINDS = (HAND, HAND_OBJECT, OBJECT_CONTAINER, OBJECT_SURFACE, OBJECT_OBJECT)

_C, _S, _D = vocabulary.CONTACT, vocabulary.STATIC, vocabulary.DYNAMIC
#: pair kind -> the predicates the extractor emits for it (PredicateExtractor docstring, pair rules)
KIND_PREDICATES: dict[str, tuple[str, ...]] = {
    HAND: (vocabulary.ACTIVE_HAND,),
    HAND_OBJECT: (_C, _S, _D, vocabulary.GRASP, vocabulary.RELEASE),
    OBJECT_CONTAINER: (_C, _S, _D, vocabulary.CONTAINMENT_EVENT, vocabulary.SUPPORT_EVENT),
    OBJECT_SURFACE: (_C, _S, _D, vocabulary.SUPPORT_EVENT),
    OBJECT_OBJECT: (_C, _S, _D, vocabulary.SUPPORT_EVENT),
}

#: one number of the frame vector: (pair kind, predicate, value label)
Slot = tuple[str, str, str]
FRAME_SLOTS: tuple[Slot, ...] = tuple(
    (kind, name, value) for kind in PAIR_KINDS for name in KIND_PREDICATES[kind]
    for value in vocabulary.values_of(name))
_SLOT_INDEX = {slot: index for index, slot in enumerate(FRAME_SLOTS)}


def slot_name(slot: Slot) -> str:
    return f"{slot[0]}.{slot[1]}={slot[2]}"


def expand_masked(names: Iterable[str]) -> frozenset[str]:
    """Predicate names from a mix of predicate and group names ("contact", "dynamic", "derived",
    "grasp"); an unknown name raises ValueError listing the valid ones."""
    out: set[str] = set()
    for name in names:
        if name in vocabulary.PREDICATES:
            out.add(name)
        elif name in vocabulary.GROUPS:
            out.update(p for p in vocabulary.PREDICATES if vocabulary.group_of(p) == name)
        else:
            raise ValueError(f"cannot mask {name!r}: expected a predicate {tuple(vocabulary.PREDICATES)} "
                             f"or a group {vocabulary.GROUPS}")
    return frozenset(out)


def pair_kinds(estimates: Sequence[PredicateEstimate]) -> dict[tuple[int, int], str]:
    """Kind of every pair (ids sorted) in one frame's estimates; unary estimates are keyed (id, -1)."""
    names: dict[tuple[int, int], set[str]] = {}
    orientations: dict[tuple[int, int], set[tuple[int, int]]] = {}
    for estimate in estimates:
        subject, obj = estimate.subject, estimate.object
        key = (subject, obj) if obj == NO_OBJECT or subject <= obj else (obj, subject)
        names.setdefault(key, set()).add(estimate.name)
        if estimate.name == _S:
            orientations.setdefault(key, set()).add((subject, obj))
    kinds: dict[tuple[int, int], str] = {}
    for key, present in names.items():
        if key[1] == NO_OBJECT:
            kind = HAND if vocabulary.ACTIVE_HAND in present else None
        elif vocabulary.GRASP in present or vocabulary.RELEASE in present:
            kind = HAND_OBJECT
        elif vocabulary.CONTAINMENT_EVENT in present:
            kind = OBJECT_CONTAINER
        elif len(orientations.get(key, ())) == 2:
            kind = OBJECT_OBJECT
        elif vocabulary.SUPPORT_EVENT in present:
            kind = OBJECT_SURFACE
        else:
            kind = None
        if kind is not None:
            kinds[key] = kind
    return kinds


def encode_frame(estimates: Sequence[PredicateEstimate], confidence_weighted: bool = True,
                 masked: frozenset[str] = frozenset()) -> np.ndarray:
    """The frame vector (len(FRAME_SLOTS),) of one frame's estimates (see the module docstring).

    masked: predicate names (see `expand_masked`) whose values are treated as unknown."""
    vector = np.zeros(len(FRAME_SLOTS))
    kinds = pair_kinds(estimates)
    for estimate in estimates:
        if estimate.value == vocabulary.UNK_LABEL or estimate.name in masked:
            continue
        subject, obj = estimate.subject, estimate.object
        kind = kinds.get((subject, obj) if obj == NO_OBJECT or subject <= obj else (obj, subject))
        if kind is None:
            continue
        index = _SLOT_INDEX.get((kind, estimate.name, estimate.value))
        if index is None:   # a predicate the extractor does not emit for this kind
            continue
        weight = estimate.confidence if confidence_weighted else 1.0
        if weight > vector[index]:
            vector[index] = weight
    return vector


@dataclass(frozen=True)
class TemporalSpec:
    """Causal temporal context: frame vectors at `lags` frames back plus the max over the last
    `recent_max` frames (0: none); `max_hold` as in the module docstring."""

    lags: tuple[int, ...] = (0, 3, 8)
    recent_max: int = 15
    max_hold: int = 4

    def __post_init__(self) -> None:
        lags = tuple(int(lag) for lag in self.lags)
        if not lags or lags[0] != 0 or any(b <= a for a, b in zip(lags, lags[1:])):
            raise ValueError(f"lags must start at 0 and increase, got {list(self.lags)}")
        object.__setattr__(self, "lags", lags)
        if self.recent_max < 0 or self.recent_max == 1:
            raise ValueError(f"recent_max must be 0 (none) or >= 2 frames, got {self.recent_max}")
        if self.max_hold < 0:
            raise ValueError(f"max_hold must be >= 0 frames, got {self.max_hold}")

    @property
    def horizon(self) -> int:
        """Frames back (from the current one) that the features can still read."""
        return max(self.lags[-1] + self.max_hold, self.recent_max - 1)

    @property
    def blocks(self) -> tuple[str, ...]:
        """Names of the frame-vector blocks of the feature vector, in order."""
        return tuple(f"lag{lag}" for lag in self.lags) + ((f"max{self.recent_max}",) if self.recent_max else ())

    def to_dict(self) -> dict:
        return {"lags": list(self.lags), "recent_max": self.recent_max, "max_hold": self.max_hold}


def feature_names(temporal: TemporalSpec) -> list[str]:
    """"<kind>.<predicate>=<value>@<block>" for every feature, in order."""
    return [f"{slot_name(slot)}@{block}" for block in temporal.blocks for slot in FRAME_SLOTS]


def feature_predicates(temporal: TemporalSpec) -> list[str]:
    """The predicate name each feature comes from (to map model reliance back to predicates)."""
    return [slot[1] for _ in temporal.blocks for slot in FRAME_SLOTS]


class TemporalWindow:
    """Recent frame vectors of one stream and the feature vector at the newest frame."""

    def __init__(self, temporal: TemporalSpec) -> None:
        self.temporal = temporal
        self._frames: deque[tuple[int, np.ndarray]] = deque()

    def reset(self) -> None:
        self._frames.clear()

    @property
    def last_frame(self) -> int | None:
        return self._frames[-1][0] if self._frames else None

    def push(self, frame_index: int, vector: np.ndarray) -> np.ndarray:
        """Add the frame vector of `frame_index` (greater than the last one) and return the features."""
        frames = self._frames
        if frames and frame_index <= frames[-1][0]:
            raise ValueError(f"frame {frame_index} arrived after frame {frames[-1][0]}")
        frames.append((frame_index, vector))
        oldest = frame_index - self.temporal.horizon
        while frames[0][0] < oldest:
            frames.popleft()
        return self._features(frame_index)

    def _features(self, now: int) -> np.ndarray:
        temporal = self.temporal
        size = len(FRAME_SLOTS)
        blocks = []
        for lag in temporal.lags:
            blocks.append(self._at(now - lag, size))
        if temporal.recent_max:
            start = now - temporal.recent_max + 1
            recent = [vector for index, vector in self._frames if index >= start]
            blocks.append(np.max(recent, axis=0))   # the current frame is always among them
        return np.concatenate(blocks)

    def _at(self, target: int, size: int) -> np.ndarray:
        """The newest received frame vector at or before `target`, at most max_hold older."""
        for index, vector in reversed(self._frames):
            if index <= target:
                return vector if target - index <= self.temporal.max_hold else np.zeros(size)
        return np.zeros(size)


def encode_sequence(frames: Sequence[tuple[int, Sequence[PredicateEstimate]]], temporal: TemporalSpec,
                    confidence_weighted: bool = True, masked: frozenset[str] = frozenset()) -> np.ndarray:
    """Feature matrix (n_frames, n_features) of one stream's (frame_index, estimates) in frame order,
    exactly as the live recognizer computes it frame by frame."""
    window = TemporalWindow(temporal)
    rows = [window.push(frame_index, encode_frame(estimates, confidence_weighted, masked))
            for frame_index, estimates in frames]
    return np.array(rows) if rows else np.zeros((0, len(FRAME_SLOTS) * len(temporal.blocks)))
