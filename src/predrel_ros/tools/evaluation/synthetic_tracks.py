"""Synthetic ground-truth tracks for tracker evaluation when no recorded episodes are at hand.

A deterministic (per seed) tabletop-like scene seen from above: objects of a few classes and two
hands move with smooth, randomly turning velocities, bounce off the image border, cross each other
and occlude what lies behind them (hands lie in front of objects, objects in a fixed depth order).
Visibility is the share of an entity's box not covered by boxes in front of it. Frames are lists
of ground-truth `Entity` (boxes, no masks), the form recorded episodes have.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from predrel_ros.core.entities import LEFT_HAND, MANIPULATED_OBJECT, RIGHT_HAND, Entity

OBJECT_LABELS = ("cube", "ball", "cylinder")


@dataclass(frozen=True)
class SyntheticSceneConfig:
    frames: int = 150
    width: int = 320
    height: int = 240
    objects: int = 4
    hands: int = 2
    speed: tuple[float, float] = (1.0, 4.0)  # px per frame
    size: tuple[float, float] = (24.0, 56.0)  # box side, px
    turn_std: float = 0.15  # radians per frame of heading noise

    def __post_init__(self) -> None:
        if self.frames < 1 or self.objects < 0 or not 0 <= self.hands <= 2 or self.objects + self.hands < 1:
            raise ValueError("synthetic scene: frames >= 1, objects >= 0, hands 0..2 and at least one entity")
        if self.width < 64 or self.height < 64:
            raise ValueError(f"synthetic scene: at least 64x64 pixels, got {self.width}x{self.height}")


def synthetic_episode(seed: int, config: SyntheticSceneConfig | None = None) -> list[list[Entity]]:
    """Ground-truth entities of every frame (ids 1..N; index 0 is the frontmost layer's first hand)."""
    cfg = config or SyntheticSceneConfig()
    rng = np.random.default_rng(seed)
    count = cfg.hands + cfg.objects
    labels = [("left_hand", LEFT_HAND), ("right_hand", RIGHT_HAND)][:cfg.hands]
    labels += [(OBJECT_LABELS[i % len(OBJECT_LABELS)], MANIPULATED_OBJECT) for i in range(cfg.objects)]
    sizes = rng.uniform(*cfg.size, size=(count, 2))
    position = rng.uniform([0, 0], [cfg.width, cfg.height], size=(count, 2)) * 0.8 + \
        np.array([cfg.width, cfg.height]) * 0.1
    heading = rng.uniform(0, 2 * np.pi, count)
    speed = rng.uniform(*cfg.speed, count)
    frames = []
    for t in range(cfg.frames):
        boxes = np.concatenate([position - sizes / 2, position + sizes / 2], axis=1)
        visible = _visible_share(boxes)  # entity i is covered by entities j < i (drawn in front)
        frames.append([Entity(id=i + 1, label=labels[i][0], role=labels[i][1],
                              box=np.clip(boxes[i], 0, [cfg.width, cfg.height] * 2),
                              visibility=float(visible[i]), frame_index=t) for i in range(count)])
        heading += rng.normal(0, cfg.turn_std, count)
        position = position + speed[:, None] * np.stack([np.cos(heading), np.sin(heading)], axis=1)
        low, high = sizes / 2, np.array([cfg.width, cfg.height]) - sizes / 2
        bounce_x = (position[:, 0] < low[:, 0]) | (position[:, 0] > high[:, 0])
        bounce_y = (position[:, 1] < low[:, 1]) | (position[:, 1] > high[:, 1])
        heading = np.where(bounce_x, np.pi - heading, heading)
        heading = np.where(bounce_y, -heading, heading)
        position = np.clip(position, low, high)
    return frames


def _visible_share(boxes: np.ndarray, grid: int = 16) -> np.ndarray:
    """Share of each box not covered by the boxes before it, sampled on a grid x grid lattice."""
    shares = np.ones(len(boxes))
    u = (np.arange(grid) + 0.5) / grid
    for i, (x1, y1, x2, y2) in enumerate(boxes):
        if i == 0:
            continue
        xs, ys = np.meshgrid(x1 + u * (x2 - x1), y1 + u * (y2 - y1))
        covered = np.zeros(xs.shape, bool)
        for a1, b1, a2, b2 in boxes[:i]:
            covered |= (xs >= a1) & (xs <= a2) & (ys >= b1) & (ys <= b2)
        shares[i] = 1.0 - covered.mean()
    return shares
