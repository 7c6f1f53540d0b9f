"""grasp(hand, object) and release(hand, object) from a persistent hold state of the pair.

A camera does not see the grip itself; what it sees is a hand that stays in contact with an object
and moves it, or moves on it. So a hold begins once contact has stayed T for `onset_frames`
consecutive frames counted from the first frame of that contact with one of the `motion` dynamic
values (by default MT, FMT, HT); it lasts, whatever the hand does (holding still: S; a mask changing
shape while carrying: GC / MA), until contact turns N; release is T on that frame. A frame with UNK
contact (missing or weak evidence) gives UNK grasp and release and leaves the state as it was: a
short occlusion neither ends a hold nor fires a release.

An object the other hand holds is being handed over, and its contact with a hand that holds nothing
else counts from its first frame as if moving: in a handover the receiving hand closes while both
hands hold still (seed 1393 `ep0009_handover`: 20 frames without motion, the grasp found 24 frames
late), where a hand inserting what it holds into a box the other hand holds does not take the box.

A hold in which the object never moved with the hand (with 3D positions: `co_motion`, the carry
the extractor tells) ends with a release only once it lasted `still_hold_frames` (30): on seed 1453
(ground-truth entities, depth) the holds never carried that ended with no release in the reference
lasted 2-16 frames (a hand touching a box the other hand holds, an object it reaches past) and the
true ones 98-105 (a hand holding a box still while the other inserts into it). Without 3D positions
a carry cannot be told, and every hold ends with a release.

Counting from the motion, not from the first touch, is what tells a grip from a touch: a hand that
rests against one thing (a container it inserts into, an object it reaches past) while it moves
shows motion for a frame or two at the end of the touch, and counted from the first touch such a
touch became a hold of one frame and an extra release (dev seed 1313 `ep0001_hold_and_insert`); a
grip stays in contact for the whole carry. The thresholds (`GraspConfig`) mirror the simulator's
ground truth (docs/predicates.md): the grip closes a few frames after the first touch, and the
release is the first frame without contact.
"""
from __future__ import annotations

from predrel_ros.predicates import vocabulary
from predrel_ros.predicates.config import GraspConfig
from predrel_ros.predicates.rules import UNK, N, T, Truth


class HoldState:
    """The hold state of one hand-object pair over its stream."""

    __slots__ = ("holding", "moving_frames", "carried")

    def __init__(self) -> None:
        self.holding = False
        self.moving_frames = 0       # consecutive contact-T frames since the contact's first `motion` value
        self.carried = False         # the object moved with the hand (or could not be told) since the contact began

    def update(self, contact: Truth, dynamic: Truth, config: GraspConfig, motion_codes: frozenset[int],
               handed_over: bool = False, carried: bool | None = None) -> tuple[Truth, Truth]:
        """(grasp, release) of this frame from the pair's reported contact and dynamic values;
        handed_over: another hand holds the object (its contact counts as if moving); carried: the hand
        carries it on this frame (None: cannot be told, counted as carried).

        Margins: those of the contact value the decision rests on."""
        code, margin = contact
        if code == UNK:
            return (UNK, 0.0), (UNK, 0.0)
        if code == N:
            held_frames = self.moving_frames - config.onset_frames + 1       # the hold began at onset_frames
            released = self.holding and (self.carried or config.still_hold_frames is None
                                         or held_frames >= config.still_hold_frames)
            self.holding, self.moving_frames, self.carried = False, 0, False
            return (N, margin), ((T if released else N), margin)
        if carried is None or carried:
            self.carried = True
        if self.moving_frames or handed_over or dynamic[0] in motion_codes:
            self.moving_frames += 1
        if not self.holding and self.moving_frames >= config.onset_frames:
            self.holding = True
        return ((T if self.holding else N), margin), (N, margin)


def motion_codes(config: GraspConfig) -> frozenset[int]:
    """The dynamic codes of `config.motion`."""
    return frozenset(vocabulary.encode(vocabulary.DYNAMIC, value) for value in config.motion)
