"""Whether a hand carries an object: both move, at the same 3D velocity.

A released object does not follow the hand: it stays where it was put, or falls; one the hand only
reaches over or past stands still. So an object whose 3D velocity over the window matches a moving
hand's is held, whatever the depth where their masks meet says. That depth wanders while the pair
moves (seed 1353 `ep0002_hold_and_insert`: the separation of an enclosed object rose from 1.3 to
2.1 cm and stayed at 1.75 cm while hand and object moved together at up to 1 m/s, and its contact
ended 25 frames before the release), and the boundary gap of a hand gripping a long object from the
side stays above the 1 cm to begin a contact (seed 1353 `ep0007_handover`: 1.1-1.7 cm while the
receiving hand carried the bar). The contact test (`extractor`, `enclosed_contact`) uses this as
evidence of contact, never against it.
"""
from __future__ import annotations

import math
from collections.abc import Sequence


def moving_together(hand_velocity: Sequence[float], object_velocity: Sequence[float], moving_speed: float,
                    relative_share: float) -> bool:
    """Whether the hand moves faster than `moving_speed` and the object's velocity differs from the
    hand's by at most `relative_share` of the hand's speed (velocities and speed in the same units)."""
    hand_speed = math.hypot(*hand_velocity)
    if not hand_speed > moving_speed:
        return False
    difference = math.dist(hand_velocity, object_velocity)
    return difference <= relative_share * hand_speed
