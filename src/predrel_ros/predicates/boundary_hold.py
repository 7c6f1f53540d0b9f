"""The boundary test's memory of one hand-object pair: the gaps of its contact and their creeps.

A hand that carries an object grips it at a gap the carry keeps where their masks meet (the fingers
in front of the object: 13-18 mm on seeds 1503 and 1523, under `contact.carried_gap_m`). Once the
object is put down (it rests on the table or another object) the carry is over but the grip need not
be: in `pick_and_hold` and `stack` the hand held the placed object 10-20 frames before opening, and the
exit gap (`contact.boundary_exit_gap_m`, 1.25 cm) ended those contacts on the frame the object touched
down. So the extractor keeps a contact carried until it was put down, for as long as it lasts, up to
the gap where the fingers held it: the median of this contact's last gaps + `hold_separation_rise_m`,
within [boundary_exit_gap_m, carried_gap_m]. The fingers opening raise the gap; standing still, its
creep beyond `hold_separation_put_down_creep_m` ends the contact, as for an enclosed object put down.
"""
from __future__ import annotations

from collections import deque

import numpy as np

from predrel_ros.predicates.order_statistics import median
from predrel_ros.predicates.separation_creep import SeparationCreep


class BoundaryHold:
    """The boundary gaps of a hand-object pair's current contact and the creeps of its gap and
    proximity, over consecutive frames (the extractor drops it on a frame without the test)."""

    __slots__ = ("gaps", "gap_creep", "proximity_creep")

    def __init__(self, frames: int) -> None:
        self.gaps: deque[float] = deque(maxlen=frames)   # this contact's last gaps (m)
        self.gap_creep = SeparationCreep()
        self.proximity_creep = SeparationCreep()

    def level(self) -> float | None:
        """The median of this contact's last gaps (m); None before any."""
        return median(np.array(self.gaps, np.float64)) if self.gaps else None
