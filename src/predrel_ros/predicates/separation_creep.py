"""A hand opening slowly: a separation that rises frame after frame while hand and object stand still.

Fingers that open beside an object raise the distance measured between the two by a few tenths of a
millimetre to a few millimetres a frame, with neither moving; a held object's distance wanders up and
down, or creeps while the pair is carried. So a contact test may bound the value by where its current
rise began plus a bound, judged only while the pair stands still (`enclosed_contact` for an object in
a hand's image box, the extractor for the boundary gap and proximity of a hand and what it touches).
A depth camera's noise moves a separation by a millimetre or two from frame to frame, the order of the
bounds, so a rise is judged only once it spans `contact.creep_min_steps` rising frames: one noisy frame
rarely rises twice in a row by as much.
"""
from __future__ import annotations

import math


class SeparationCreep:
    """The rise of one pair's separation over consecutive frames."""

    __slots__ = ("base", "previous", "steps")

    def __init__(self) -> None:
        self.base: float | None = None        # the value before the current rise
        self.previous: float | None = None    # the value on the previous frame
        self.steps = 0                        # rising steps of the current rise

    def limit(self, value: float, judged: bool, bound: float | None, min_steps: int = 1) -> float:
        """The most `value` may be on this frame: where its current rise began + `bound` while `judged`
        (the pair stands still and touched on the previous frame) and the value rose on each of the
        last `min_steps` or more frames, else inf (bound None: never judged). Call it on every
        consecutive frame."""
        previous, self.previous = self.previous, value
        if not judged or bound is None or previous is None or value <= previous:
            self.base = None
            self.steps = 0
            return math.inf
        if self.base is None:
            self.base = previous
        self.steps += 1
        return self.base + bound if self.steps >= min_steps else math.inf
