"""The true rolling agreement per predicate group, from an episode's saved sequences.

It is what the reliability monitor's reference modes compute live over their window (tested equal
on the same frames), and what runtime trust in `self` mode is judged against: at frame t, over the
frames t-window+1..t, the share of (stream, frame) with a known reference on which the pipeline's
value equals it, pooled over the streams of a group. Frames the pipeline published nothing for (a
dropped frame) and streams it lost are UNK there: disagreements, as in every table of `predrel eval`
(`scores`).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from predrel_ros.predicates import vocabulary
from predrel_ros.tools.evaluation.sequences import EpisodeSequences


def rolling_agreement(sequences: EpisodeSequences, condition_index: int, window: int,
                      pool_of: Callable[[str], str] = vocabulary.group_of) -> dict[str, np.ndarray]:
    """pool (a group by default) -> (T,) agreement over the window ending at each frame; NaN where
    the window holds no frame with a known reference of the pool."""
    return rolling_agreement_of(sequences, sequences.y[condition_index], window, pool_of)


def rolling_agreement_of(sequences: EpisodeSequences, y: np.ndarray, window: int,
                         pool_of: Callable[[str], str] = vocabulary.group_of) -> dict[str, np.ndarray]:
    """`rolling_agreement` of the (K, T) values `y` against the episode's reference (e.g. a schedule
    spliced from two conditions)."""
    if window < 1:
        raise ValueError(f"window must be >= 1 frame, got {window}")
    known = sequences.y_ref != vocabulary.UNK
    agree = (y == sequences.y_ref) & known
    pools = np.array([pool_of(key[0]) for key in sequences.keys])
    result = {}
    for pool in dict.fromkeys(pools.tolist()):
        rows = pools == pool
        valid = windowed_sum(known[rows].sum(axis=0), window)
        hits = windowed_sum(agree[rows].sum(axis=0), window)
        with np.errstate(invalid="ignore", divide="ignore"):
            result[pool] = np.where(valid > 0, hits / np.maximum(valid, 1), np.nan)
    return result


def windowed_sum(counts: np.ndarray, window: int) -> np.ndarray:
    """Sum of `counts` over the last `window` frames at every frame."""
    total = np.cumsum(counts, dtype=np.int64)
    shifted = np.concatenate([np.zeros(window, dtype=np.int64), total[:-window]]) if len(total) > window \
        else np.zeros_like(total)
    return total - shifted[:len(total)]
