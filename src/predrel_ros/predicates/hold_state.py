"""grasp(hand, object) and release(hand, object) from a persistent hold state of the pair.

A camera does not see the grip itself; what it sees is a hand that stays in contact with an object
and moves it, or moves on it. So a hold begins once contact has been T for `onset_frames`
consecutive frames and one of the `motion` dynamic values (by default MT, FMT, HT) was seen during
that contact; it lasts, whatever the hand does (holding still: S; a mask changing shape while
carrying: GC / MA), until contact turns N; release is T on that frame. A frame with UNK contact
(missing or weak evidence) gives UNK grasp and release and leaves the state as it was: a short
occlusion neither ends a hold nor fires a release.

The thresholds (`GraspConfig`) mirror the simulator's ground truth (docs/predicates.md): the grip
closes a few frames after the first touch, and the release is the first frame without contact.
"""
from __future__ import annotations

from predrel_ros.predicates import vocabulary
from predrel_ros.predicates.config import GraspConfig
from predrel_ros.predicates.rules import UNK, N, T, Truth


class HoldState:
    """The hold state of one hand-object pair over its stream."""

    __slots__ = ("holding", "contact_frames", "moved")

    def __init__(self) -> None:
        self.holding = False
        self.contact_frames = 0      # consecutive frames of contact T (UNK frames skipped)
        self.moved = False           # a `motion` value was seen during this contact

    def update(self, contact: Truth, dynamic: Truth, config: GraspConfig, motion_codes: frozenset[int]
               ) -> tuple[Truth, Truth]:
        """(grasp, release) of this frame from the pair's reported contact and dynamic values.

        Margins: those of the contact value the decision rests on."""
        code, margin = contact
        if code == UNK:
            return (UNK, 0.0), (UNK, 0.0)
        if code == N:
            released = self.holding
            self.holding, self.contact_frames, self.moved = False, 0, False
            return (N, margin), ((T if released else N), margin)
        self.contact_frames += 1
        self.moved = self.moved or dynamic[0] in motion_codes
        if not self.holding and self.contact_frames >= config.onset_frames and self.moved:
            self.holding = True
        return ((T if self.holding else N), margin), (N, margin)


def motion_codes(config: GraspConfig) -> frozenset[int]:
    """The dynamic codes of `config.motion`."""
    return frozenset(vocabulary.encode(vocabulary.DYNAMIC, value) for value in config.motion)
