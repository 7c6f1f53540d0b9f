"""Left or right: the role of a hand detected as a generic class such as "hand".

Models that know the side (classes `left_hand` / `right_hand`, or the hand-landmark model's
handedness) need no rule. For a generic "hand", the side is decided once per track, when the track
first appears, and kept for the track's life (no flicker when hands cross):
  - if exactly one side is already held by a visible hand track, the new hand takes the other;
  - if two new hands appear together and no side is held, they are ordered by image x;
  - otherwise the image half decides.
`view` says how image x relates to the person's sides: `facing` (third-person camera looking at
the person, the usual robot view): a hand in the image's left half is the person's RIGHT hand;
`egocentric` (head camera, or a camera behind the person): the image's left half is the left hand.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from predrel_ros.core.entities import LEFT_HAND, RIGHT_HAND

VIEWS = ("facing", "egocentric")


@dataclass(frozen=True)
class HandSideConfig:
    generic_labels: tuple[str, ...] = ("hand",)  # detector classes that are a hand of unknown side
    view: str = "facing"

    def __post_init__(self) -> None:
        if self.view not in VIEWS:
            raise ValueError(f"hands.view must be one of {VIEWS}, got {self.view!r}")


class HandSideAssigner:
    def __init__(self, config: HandSideConfig | None = None) -> None:
        self.config = config or HandSideConfig()
        self._sides: dict[int, str] = {}

    def _side_of_image_left(self) -> str:
        return RIGHT_HAND if self.config.view == "facing" else LEFT_HAND

    def _by_position(self, box: np.ndarray, frame_width: int) -> str:
        centre = (box[0] + box[2]) / 2
        left = self._side_of_image_left()
        return left if centre < frame_width / 2 else _other(left)

    def assign(self, hands: list[tuple[int, np.ndarray]], frame_width: int) -> dict[int, str]:
        """Role per track id for this frame's generic-hand tracks [(track id, box)]."""
        taken = {self._sides[i] for i, _ in hands if i in self._sides}
        new = sorted(((i, np.asarray(b, float)) for i, b in hands if i not in self._sides),
                     key=lambda item: item[1][0] + item[1][2])
        if len(new) >= 2 and not taken:
            first = self._side_of_image_left()
            self._sides[new[0][0]], self._sides[new[1][0]] = first, _other(first)
            taken = {first, _other(first)}
            new = new[2:]
        for track_id, box in new:
            free = {LEFT_HAND, RIGHT_HAND} - taken
            side = free.pop() if len(free) == 1 else self._by_position(box, frame_width)
            self._sides[track_id] = side
            taken.add(side)
        return {i: self._sides[i] for i, _ in hands}

    def forget_except(self, track_ids) -> None:
        alive = set(track_ids)
        self._sides = {i: s for i, s in self._sides.items() if i in alive}

    def reset(self) -> None:
        self._sides.clear()


def _other(side: str) -> str:
    return LEFT_HAND if side == RIGHT_HAND else RIGHT_HAND
