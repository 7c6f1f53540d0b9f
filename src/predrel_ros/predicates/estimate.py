"""One predicate value for one entity pair (or one entity) at one frame, with its confidence.

The same record carries extractor output (confidence from the evidence factors) and reference
predicates (ground truth: confidence 1, every evidence factor 1).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Iterator

from predrel_ros.predicates import vocabulary

EVIDENCE_FACTORS = ("det", "seg", "trk", "vis", "sp", "tmp")

#: object id of unary predicates (active_hand has a subject only)
NO_OBJECT = -1


def full_evidence() -> dict[str, float]:
    return {name: 1.0 for name in EVIDENCE_FACTORS}


@dataclass
class PredicateEstimate:
    """name(subject, object) = value with confidence, e.g. contact(1, 4) = "T" at 0.83."""

    name: str
    subject: int
    object: int
    value: str
    confidence: float = 1.0
    evidence: dict[str, float] = field(default_factory=full_evidence)
    frame_index: int = 0
    group: str = ""

    def __post_init__(self) -> None:
        expected_group = vocabulary.group_of(self.name)
        if self.group and self.group != expected_group:
            raise ValueError(f"predicate {self.name!r} belongs to group {expected_group!r}, "
                             f"not {self.group!r}")
        self.group = expected_group
        vocabulary.encode(self.name, self.value)  # validates the value label
        self.confidence = float(self.confidence)
        if not 0.0 <= self.confidence <= 1.0:
            raise ValueError(f"{self.name}({self.subject}, {self.object}): confidence must lie in "
                             f"[0, 1], got {self.confidence}")
        missing = set(EVIDENCE_FACTORS) - set(self.evidence)
        if missing:
            raise ValueError(f"{self.name}({self.subject}, {self.object}): evidence lacks "
                             f"{sorted(missing)}")

    @classmethod
    def trusted(cls, name: str, subject: int, obj: int, value: str, confidence: float,
                evidence: dict[str, float], frame_index: int, group: str) -> "PredicateEstimate":
        """Build without the checks of __init__, for a producer whose fields come straight from the
        vocabulary and checked arithmetic (the extractor emits about a hundred estimates a frame)."""
        estimate = cls.__new__(cls)
        estimate.__dict__ = {"name": name, "subject": subject, "object": obj, "value": value,
                             "confidence": confidence, "evidence": evidence, "frame_index": frame_index,
                             "group": group}
        return estimate

    @property
    def code(self) -> int:
        """Integer code of the value (-1 for UNK), as the metrics compare them."""
        return vocabulary.encode(self.name, self.value)

    @property
    def key(self) -> tuple[str, int, int]:
        """Identity of the predicate stream this estimate belongs to."""
        return (self.name, self.subject, self.object)

    @property
    def canonical_key(self) -> tuple[str, int, int]:
        """`key` with the two ids of an unordered predicate (contact, dynamic) in ascending order, so
        estimates and references match whichever orientation each source emits."""
        return stream_key(self.name, self.subject, self.object)


def stream_key(name: str, subject: int, obj: int) -> tuple[str, int, int]:
    """(name, subject, object), ids sorted for the unordered predicates (contact, dynamic)."""
    if name in vocabulary.UNORDERED and obj < subject:
        return (name, obj, subject)
    return (name, subject, obj)


def match_references(estimates: Iterable[PredicateEstimate], references: Iterable[PredicateEstimate]
                     ) -> Iterator[tuple[PredicateEstimate, str]]:
    """(estimate, reference value label) for every estimate that has a reference on its frame.

    Streams match by `canonical_key` and frame_index, whatever orientation each source used.
    """
    index = {(reference.canonical_key, reference.frame_index): reference.value for reference in references}
    for estimate in estimates:
        reference = index.get((estimate.canonical_key, estimate.frame_index))
        if reference is not None:
            yield estimate, reference
