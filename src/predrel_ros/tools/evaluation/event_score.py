"""The event score: how well predicted events line up with the true ones, within a tolerance.

The paper's frame-exact PRS counts a release found one frame late as wrong on two frames; a robot
cares whether the event was reported, how late, and how many spurious ones came with it. Here an
event is the first frame of a run of T (the onset of a state such as grasp, or a one-frame event
such as release). True and predicted onsets of one stream are matched one to one, nearest first,
when they lie within +-k frames; the score pools the matches of many streams:

- found_within_k: matched true events / true events,
- extra_per_event: unmatched predicted events / true events,
- median_abs_offset: median |predicted - true| frame offset of the matched events.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

TRUE = 1


def onsets(codes: np.ndarray) -> np.ndarray:
    """Frames where a run of T (code 1) starts; any other code (N, UNK) ends a run."""
    true = np.asarray(codes) == TRUE
    previous = np.concatenate(([False], true[:-1]))
    return np.flatnonzero(true & ~previous)


def match_onsets(true: np.ndarray, predicted: np.ndarray, tolerance: int) -> list[int]:
    """Offsets (predicted - true) of a one-to-one matching within +-tolerance frames, closest pairs first."""
    candidates = sorted((abs(int(p) - int(t)), i, j) for i, t in enumerate(true) for j, p in enumerate(predicted)
                        if abs(int(p) - int(t)) <= tolerance)
    used_true, used_predicted, offsets = set(), set(), []
    for _, i, j in candidates:
        if i not in used_true and j not in used_predicted:
            used_true.add(i)
            used_predicted.add(j)
            offsets.append(int(predicted[j]) - int(true[i]))
    return offsets


@dataclass
class EventScore:
    """Pooled event matching over streams (see the module docstring)."""

    tolerance: int
    true_events: int = 0
    predicted_events: int = 0
    offsets: list[int] = field(default_factory=list)

    def add(self, y: np.ndarray, y_ref: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One stream's predicted and reference codes over the same frames; returns its (true,
        predicted) onsets."""
        true, predicted = onsets(y_ref), onsets(y)
        self.true_events += len(true)
        self.predicted_events += len(predicted)
        self.offsets += match_onsets(true, predicted, self.tolerance)
        return true, predicted

    def summary(self) -> dict:
        found, n = len(self.offsets), self.true_events
        return {
            f"found_within_{self.tolerance}": found / n if n else float("nan"),
            "extra_per_event": (self.predicted_events - found) / n if n else float("nan"),
            "median_abs_offset": float(np.median(np.abs(self.offsets))) if self.offsets else float("nan"),
            "true_events": n, "predicted_events": self.predicted_events,
        }
