"""The raw values of every predicate stream over the last `window` frames, as one ring-buffer array.

A stream (name, subject, object) owns one row of `window` cells; the value of frame f is kept in
cell f % window together with f, counted from the first frame pushed (frame indices are unbounded
integers, 2**64 - 1 included; a sequence's span fits the array). The window of frame t is
[t - window + 1, t], so a cell holds a value of the window exactly when its frame is >= the
window's start: skipped frames (a gap in the frame indices) leave cells of older frames behind,
which that test excludes. Every stream of a frame is written and read with one array operation
each (q_tmp of all estimates of a frame at once).
"""
from __future__ import annotations

from typing import Callable, Hashable, Iterable

import numpy as np

#: the frame of a cell that never held a value (older than any window)
_NEVER = np.iinfo(np.int64).min


class StreamWindows:
    """Rows of the last `window` raw codes per stream key."""

    def __init__(self, window: int, capacity: int = 64) -> None:
        if window < 1:
            raise ValueError(f"window must be >= 1, got {window}")
        self.window = window
        self._rows: dict[Hashable, int] = {}
        self._free: list[int] = []
        self._frames = np.full((capacity, window), _NEVER, np.int64)
        self._codes = np.zeros((capacity, window), np.int64)
        self._origin: int | None = None                 # the first frame pushed: frames are kept from it

    def __len__(self) -> int:
        return len(self._rows)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._rows

    def rows(self, keys: Iterable[Hashable]) -> np.ndarray:
        """The row of each key, a new empty one for a key not seen before."""
        rows = self._rows
        found = []
        for key in keys:
            row = rows.get(key)
            if row is None:
                row = rows[key] = self._new_row()
            found.append(row)
        return np.array(found, np.intp)

    def _new_row(self) -> int:
        if self._free:
            row = self._free.pop()
        else:
            row = len(self._rows)
            if row >= len(self._frames):
                grow = len(self._frames)
                self._frames = np.concatenate((self._frames, np.full((grow, self.window), _NEVER, np.int64)))
                self._codes = np.concatenate((self._codes, np.zeros((grow, self.window), np.int64)))
        self._frames[row] = _NEVER
        return row

    def push(self, rows: np.ndarray, frame: int, codes: np.ndarray) -> None:
        """Frame `frame`'s code of each row (one value per row and frame)."""
        if self._origin is None:
            self._origin = frame
        cell = frame % self.window
        self._frames[rows, cell] = frame - self._origin
        self._codes[rows, cell] = codes

    def agreement(self, rows: np.ndarray, codes: np.ndarray, window_start: int) -> np.ndarray:
        """q_tmp of each row: the share of its window's values equal to `codes` (the row's current value
        included, so the window is never empty once pushed)."""
        valid = self._frames[rows] >= self._since(window_start)
        same = valid & (self._codes[rows] == np.asarray(codes)[:, None])
        return np.count_nonzero(same, axis=1) / np.count_nonzero(valid, axis=1)

    def shares(self, rows: np.ndarray, code: int, window_start: int) -> np.ndarray:
        """Share of each row's window values equal to `code` (rows pushed this frame: never empty)."""
        return self.agreement(rows, np.full(len(rows), code), window_start)

    def _since(self, frame: int) -> int:
        """`frame` as the rows keep it (from the origin; never below the oldest representable frame)."""
        return max(frame - (self._origin or 0), _NEVER + 1)

    def forget(self, gone: Callable[[Hashable], bool]) -> None:
        """Drop every stream whose key `gone` accepts."""
        for key in [key for key in self._rows if gone(key)]:
            self._free.append(self._rows.pop(key))
