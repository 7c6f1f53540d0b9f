"""Contact of an object inside a hand's image box, from the 3D separation where their masks meet.

A gripping hand hides the contact itself: the object's visible pixels next to the hand's lie 0.3-1.5
cm from the hand's in 3D while it is held (the fingers touch its far side), and a hand that lets go
still encloses the object in the image for several frames while its fingers open. No fixed
threshold tells the two apart (on seed 1313's ground truth the separations of held frames and of
just-released ones overlap from 0.6 to 1.5 cm), but the change does: the fingers opening raise the
separation by several millimetres within a frame or two of the last touch, against a level that
stays within 1-2 mm during the hold. So the contact of such a pair is T while the separation
(`boundary_depth.boundary_separation_m`) stays within `hold_separation_rise_m` of the median of the
pair's last `hold_separation_frames` contact frames (and within `hold_separation_max_m` at all),
and turns N, ending a hold on that frame, when it rises beyond; it turns T again once the
separation comes back within half the rise of the level it left (a hand that closes again).

A heavily occluded held object shows different parts of itself as the hand turns (15-25 % of it
visible), and the separation then jumps by 7-28 mm while the grip holds (seed 1314); the fingers
opening change what is seen of the object little (under 5 % of its visible pixels on seed 1313's
releases). So a frame on which the object's visible area changed by more than
`hold_separation_area_change` of the previous frame's starts a new level instead of being judged
against the old one. So does a frame on which the separation rose by more than
`hold_separation_jump_m` since the previous one: the fingers opening raise it by 0.3-3.3 mm a frame
(the 10 releases from an enclosure on dev seeds 1313 + 1323), a 40 px object held in a moving hand
showed a 9.9 mm jump for 2 frames with its area changing by 8 % (seed 1323 `ep0003_remove`: a
contact dropout that ended the hold 11 frames early and began a new one).

A hand that opens slowly raises the separation by a few tenths of a millimetre a frame at first, and
the median level follows it (seed 1313 `ep0000_unstack`: 11 frames late). What tells it from a
held object's level wandering is that the fingers open with hand and object standing still, the
separation rising frame after frame: while both move slower than the dynamic rule's moving speed
(`dynamic.moving_speed_mps`), contact also ends once the separation has risen on consecutive frames
by more than `hold_separation_creep_m` in all. Carried objects creep by up to 8 mm over 11 frames
while the grip holds (seed 1313 `ep0006_insert`), so the creep is not judged while the pair moves.

An object put down (standing still, resting on the table or another object) is where hands open:
there the creep bound is the smaller `hold_separation_put_down_creep_m` (1.5 mm: seed 1453 `remove`
and `stack` rose by 1.2-1.6 mm a frame from the release and were found 4-5 frames late with 2.5 mm),
and a jump or a changed view is judged against the level instead of starting a new one (seed 1453
`ep0007_remove`: the fingers opening raised it by 8 mm in one frame; `ep0028_hold_and_insert`: they
uncovered 10 % more of the object), where the views that jump in a held object were seen in a moving
or lifted hand.

While hand and object move together (`co_motion`) the object is carried, and its separation is
judged against the cap only, the level following it: it wandered from 1.3 to 2.1 cm during a carry at
up to 1 m/s (seed 1353 `ep0002_hold_and_insert`). The first contact of an enclosure needs a
separation within `hold_separation_begin_m`, unless carried: a hand hovering over an object stays
2.6-3.0 cm from it (seeds 1343, 1353 `reach_and_withdraw`), a grip settles within 2.5 cm, except a
small object mostly hidden in the hand, which is seen carried once lifted.
"""
from __future__ import annotations

import math
from collections import deque

import numpy as np

from predrel_ros.predicates.config import ContactConfig, Threshold
from predrel_ros.predicates.order_statistics import median
from predrel_ros.predicates.separation_creep import SeparationCreep


class EnclosedContact:
    """The separation history of one hand-object pair while the object lies in the hand's image box
    and their masks meet (the extractor drops it when either ends)."""

    __slots__ = ("touching", "recent", "left_level", "area", "creep")

    def __init__(self, frames: int) -> None:
        self.touching: bool | None = None          # None: no decision yet
        self.recent: deque[float] = deque(maxlen=frames)
        self.left_level: float | None = None       # the level when contact last ended; None: never touched
        self.area = 0.0                            # the object's visible pixels on the previous frame
        self.creep = SeparationCreep()             # its rise while standing still

    def test(self, separation_m: float, object_area: float, config: ContactConfig, standing_still: bool = False,
             carried: bool = False, put_down: bool = False, moves_alone: bool = False) -> tuple[float, Threshold]:
        """(separation, threshold) of this frame's depth test (contact T iff separation <= threshold);
        the state advances as the test decides. object_area: the object's visible pixels;
        standing_still: hand and object move slower than the moving speed; carried: they move
        together (`co_motion`); put_down: standing still, and the object touched something other than
        a hand on the previous frame; moves_alone: the object moves while the hand stands still (all
        from the `extractor`)."""
        rise, cap = config.hold_separation_rise_m, config.hold_separation_max_m
        reseen = self.area > 0 and abs(object_area - self.area) > config.hold_separation_area_change * self.area
        jumped = config.hold_separation_jump_m is not None and bool(self.recent) \
            and separation_m - self.recent[-1] > config.hold_separation_jump_m
        self.area = object_area
        new_level = bool(self.touching and (reseen or jumped)
                         and not (put_down and config.hold_separation_put_down_keeps_level))
        creep = config.put_down_creep_m if put_down else config.hold_separation_creep_m
        creep_limit = self.creep.limit(separation_m, bool(self.touching) and not new_level and standing_still, creep,
                                       config.creep_min_steps)
        level = None
        if self.touching and moves_alone:
            limit = separation_m - rise.eta        # it moves on its own beside a still hand: not held
        elif new_level:
            self.recent.clear()                    # other parts of the object in view: a new level
            limit = cap
        elif self.touching:
            if carried:                            # the level follows the carried object's separation;
                limit = min(cap, creep_limit)      # a carry paused standing still (`extractor`) may creep
                if creep_limit < cap:
                    level = self.creep.base        # where the creep began: the level a closing hand returns to
            else:
                level = median(np.array(self.recent, np.float64))
                limit = min(cap, level + rise.value, creep_limit)
        elif carried:
            limit = cap
        elif self.left_level is None:
            begin = config.hold_separation_begin_m
            limit = cap if begin is None else min(cap, begin)
        else:
            limit = min(cap, self.left_level + rise.value / 2)
        touching = separation_m <= limit
        if touching and not self.touching:
            self.recent.clear()
        if touching:
            self.recent.append(separation_m)
        elif self.touching and moves_alone:  # let go where it is: T again once the hand closes on it
            self.left_level = separation_m - rise.value
        elif self.touching:                 # lost beyond the cap (no level): T again within it
            self.left_level = math.inf if level is None else level
        self.touching = touching
        return separation_m, Threshold(limit, rise.eta)
