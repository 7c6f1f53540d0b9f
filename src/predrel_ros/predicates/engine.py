"""The estimates of one frame as arrays: raw codes and margins in, q_tmp, confidence and the floor out.

The extractor's rules decide a raw code and margin q_sp per stream; `FrameRows` collects them with
the pair's evidence factors (det, seg, trk, vis), writes the raw codes into the streams' windows
(`StreamWindows`) and evaluates q_tmp, c = g_k(z) and the floor for a whole stage at once:
the base predicates (contact, static, dynamic), then the derived ones, which read the base
predicates' reported values. `estimates()` builds the `PredicateEstimate`s in the extractor's
order (each row's `order` key) only at the end.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from predrel_ros.predicates import vocabulary
from predrel_ros.predicates.confidence import confidences
from predrel_ros.predicates.estimate import PredicateEstimate
from predrel_ros.predicates.stream_windows import StreamWindows

UNK = vocabulary.UNK
_LABELS = {name: vocabulary.values_of(name) for name in vocabulary.PREDICATES}
_GROUPS = {name: vocabulary.group_of(name) for name in vocabulary.PREDICATES}

#: (det, seg, trk, vis) of a pair or an entity
PairFactors = tuple[float, float, float, float]


class FrameRows:
    """The rows (one per estimate) of one frame, evaluated stage by stage."""

    def __init__(self, streams: StreamWindows, confidence: Callable[[str, Sequence[float]], float], floor: float,
                 frame: int, window_start: int) -> None:
        self._streams = streams
        self._confidence = confidence
        self._floor = floor
        self.frame = frame
        self.window_start = window_start
        self._order: list[int] = []
        self._keys: list[tuple[str, int, int]] = []
        self._codes: list[int] = []
        self._sps: list[float] = []
        self._factors: list[PairFactors] = []
        self._stream_rows: list[np.ndarray] = []     # per pushed stage
        self._pushed = 0
        self._evaluated = 0
        self._outputs: list[int] = []
        self._confidences: list[float] = []
        self._tmps: list[float] = []

    def add(self, order: int, name: str, subject: int, obj: int, code: int, sp: float, factors: PairFactors) -> int:
        """Add one estimate's raw code and margin; returns its row (for `output` once evaluated)."""
        self._order.append(order)
        self._keys.append((name, subject, obj))
        self._codes.append(code)
        self._sps.append(sp)
        self._factors.append(factors)
        return len(self._keys) - 1

    def push(self) -> None:
        """Write the raw codes of the rows added since the last push into their streams' windows (so a
        rule can read a stream's window, this frame included, before the rows are evaluated)."""
        start, end = self._pushed, len(self._keys)
        if end == start:
            return
        rows = self._streams.rows(self._keys[start:end])
        self._streams.push(rows, self.frame, np.array(self._codes[start:end], np.int64))
        self._stream_rows.append(rows)
        self._pushed = end

    def evaluate(self) -> None:
        """q_tmp, confidence and reported value of every row added since the last evaluation."""
        self.push()
        start, end = self._evaluated, len(self._keys)
        if end == start:
            return
        rows = self._rows_since(start)
        codes = np.array(self._codes[start:end], np.int64)
        tmp = self._streams.agreement(rows, codes, self.window_start)
        factors = np.empty((end - start, 6))
        factors[:, :4] = self._factors[start:end]
        factors[:, 4] = self._sps[start:end]
        factors[:, 5] = tmp
        confidence = confidences(self._confidence, [key[0] for key in self._keys[start:end]], factors)
        self._outputs.extend(np.where(confidence >= self._floor, codes, UNK).tolist())
        self._confidences.extend(confidence.tolist())
        self._tmps.extend(tmp.tolist())
        self._evaluated = end

    def window_rows(self, rows: Sequence[int]) -> np.ndarray:
        """The `StreamWindows` rows of pushed rows (to read their streams' windows)."""
        return np.concatenate(self._stream_rows)[np.asarray(rows, np.intp)]

    def _rows_since(self, start: int) -> np.ndarray:
        """The stream rows of rows start.. (all pushed)."""
        parts, offset = [], 0
        for rows in self._stream_rows:
            if offset + len(rows) > start:
                parts.append(rows[max(start - offset, 0):])
            offset += len(rows)
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def output(self, row: int) -> tuple[int, float]:
        """(reported code, sp) of an evaluated row, for the predicates derived from it."""
        return self._outputs[row], self._sps[row]

    def estimates(self) -> list[PredicateEstimate]:
        """Every row as a `PredicateEstimate`, in `order`."""
        self.evaluate()
        frame, unk_label = self.frame, vocabulary.UNK_LABEL
        trusted = PredicateEstimate.trusted
        out = []
        keys, outputs, factors, sps, tmps, confidence = (self._keys, self._outputs, self._factors, self._sps,
                                                         self._tmps, self._confidences)
        for row in np.argsort(np.array(self._order), kind="stable").tolist():
            name, subject, obj = keys[row]
            output = outputs[row]
            det, seg, trk, vis = factors[row]
            evidence = {"det": det, "seg": seg, "trk": trk, "vis": vis, "sp": sps[row], "tmp": tmps[row]}
            label = unk_label if output == UNK else _LABELS[name][output]
            out.append(trusted(name, subject, obj, label, confidence[row], evidence, frame, _GROUPS[name]))
        return out
