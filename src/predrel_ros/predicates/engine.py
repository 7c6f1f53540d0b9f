"""The estimates of one frame as arrays: raw codes and margins in, q_tmp, confidence and the floor out.

The extractor's rules decide a raw code and margin q_sp per stream; `FrameRows` collects them with
the pair's evidence factors (det, seg, trk, vis), in blocks of rows (`add_many`: a rule's rows of all
pairs at once; `add`: one row), writes the raw codes into the streams' windows (`StreamWindows`) and
evaluates q_tmp, c = g_k(z) and the floor for a whole stage at once: the base predicates (contact,
static, dynamic), then the derived ones, which read the base predicates' reported values.
`estimates()` builds the `PredicateEstimate`s in the extractor's order (each row's `order` key) only
at the end.
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


class _Block:
    """Rows added together: one array (or list, for the names) per field."""

    __slots__ = ("orders", "names", "subjects", "objects", "codes", "sps", "factors", "streams")

    def __init__(self, orders: np.ndarray, names: list[str], subjects: np.ndarray, objects: np.ndarray,
                 codes: np.ndarray, sps: np.ndarray, factors: np.ndarray, streams: np.ndarray | None = None) -> None:
        self.orders, self.names, self.subjects, self.objects = orders, names, subjects, objects
        self.codes, self.sps, self.factors = codes, sps, factors
        self.streams = streams          # their `StreamWindows` rows when the caller knows them


def _joined(blocks: list[_Block], field: str) -> np.ndarray:
    parts = [getattr(block, field) for block in blocks]
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


class FrameRows:
    """The rows (one per estimate) of one frame, evaluated stage by stage."""

    def __init__(self, streams: StreamWindows, confidence: Callable[[str, Sequence[float]], float], floor: float,
                 frame: int, window_start: int) -> None:
        self._streams = streams
        self._confidence = confidence
        self._floor = floor
        self.frame = frame
        self.window_start = window_start
        self._blocks: list[_Block] = []
        self._single: list[tuple] = []               # rows added one by one, not yet a block
        self._count = 0
        self._pushed = 0                             # blocks whose codes are in the windows
        self._evaluated = 0                          # blocks evaluated
        self._stream_rows: list[np.ndarray] = []     # per pushed block
        # per evaluation, its rows' (order, subject, object, reported code) and (c, det, seg, trk, vis, sp,
        # tmp), joined once read (`output`, `outputs`, `estimates`)
        self._integers: list[np.ndarray] = []
        self._numbers: list[np.ndarray] = []
        self._names: list[str] = []

    def add(self, order: int, name: str, subject: int, obj: int, code: int, sp: float, factors: PairFactors) -> int:
        """Add one estimate's raw code and margin; returns its row (for `output` once evaluated)."""
        self._single.append((order, name, subject, obj, code, sp, factors))
        self._count += 1
        return self._count - 1

    def add_many(self, orders: np.ndarray, name: str, subjects: np.ndarray, objects: np.ndarray, codes: np.ndarray,
                 sps: np.ndarray, factors: np.ndarray, streams: np.ndarray | None = None) -> np.ndarray:
        """Add the rows of one predicate name at once (factors: rows x 4); returns their rows. streams:
        their streams' `StreamWindows.rows`, when the caller keeps them (else looked up by key)."""
        self._flush()
        count = len(orders)
        if count:
            self._blocks.append(_Block(np.asarray(orders, np.int64), [name] * count, np.asarray(subjects, np.int64),
                                       np.asarray(objects, np.int64), np.asarray(codes, np.int64),
                                       np.asarray(sps, np.float64), np.asarray(factors, np.float64).reshape(count, 4),
                                       streams))
        self._count += count
        return np.arange(self._count - count, self._count)

    def _flush(self) -> None:
        if self._single:
            orders, names, subjects, objects, codes, sps, factors = zip(*self._single)
            self._blocks.append(_Block(np.array(orders, np.int64), list(names), np.array(subjects, np.int64),
                                       np.array(objects, np.int64), np.array(codes, np.int64),
                                       np.array(sps, np.float64), np.array(factors, np.float64)))
            self._single = []

    def push(self) -> None:
        """Write the raw codes of the rows added since the last push into their streams' windows (so a
        rule can read a stream's window, this frame included, before the rows are evaluated)."""
        self._flush()
        blocks = self._blocks[self._pushed:]
        if not blocks:
            return
        for block in blocks:
            rows = block.streams
            if rows is None:
                rows = self._streams.rows(zip(block.names, block.subjects.tolist(), block.objects.tolist()))
            self._stream_rows.append(rows)
        self._streams.push(np.concatenate(self._stream_rows[self._pushed:]), self.frame, _joined(blocks, "codes"))
        self._pushed = len(self._blocks)

    def evaluate(self) -> None:
        """q_tmp, confidence and reported value of every row added since the last evaluation."""
        self.push()
        blocks = self._blocks[self._evaluated:]
        if not blocks:
            return
        rows = np.concatenate(self._stream_rows[self._evaluated:])
        codes, sps = _joined(blocks, "codes"), _joined(blocks, "sps")
        tmp = self._streams.agreement(rows, codes, self.window_start)
        factors = np.empty((len(codes), 6))
        factors[:, :4] = _joined(blocks, "factors")
        factors[:, 4] = sps
        factors[:, 5] = tmp
        names = [name for block in blocks for name in block.names]
        confidence = confidences(self._confidence, names, factors)
        outputs = np.where(confidence >= self._floor, codes, UNK)
        self._integers.append(np.stack((_joined(blocks, "orders"), _joined(blocks, "subjects"),
                                        _joined(blocks, "objects"), outputs), axis=1))
        self._numbers.append(np.concatenate((confidence[:, None], factors), axis=1))
        self._names.extend(names)
        self._evaluated = len(self._blocks)

    def window_rows(self, rows: Sequence[int]) -> np.ndarray:
        """The `StreamWindows` rows of pushed rows (to read their streams' windows)."""
        return np.concatenate(self._stream_rows)[np.asarray(rows, np.intp)]

    def output(self, row: int) -> tuple[int, float]:
        """(reported code, sp) of an evaluated row, for the predicates derived from it."""
        integers, numbers = self._joined_evaluations()
        return int(integers[row, 3]), float(numbers[row, 5])

    def outputs(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`output` of evaluated rows: (reported codes, sps)."""
        integers, numbers = self._joined_evaluations()
        return integers[rows, 3], numbers[rows, 5]

    def _joined_evaluations(self) -> tuple[np.ndarray, np.ndarray]:
        if len(self._integers) > 1:
            self._integers, self._numbers = [np.concatenate(self._integers)], [np.concatenate(self._numbers)]
        return self._integers[0], self._numbers[0]

    def estimates(self) -> list[PredicateEstimate]:
        """Every row as a `PredicateEstimate` (built as `PredicateEstimate.trusted` does, without the
        checks: the fields come from the vocabulary and checked arithmetic), in `order`."""
        self.evaluate()
        if not self._blocks:
            return []
        integers, numbers = self._joined_evaluations()
        order = np.argsort(integers[:, 0], kind="stable")
        names = self._names
        _, subjects, objects, outputs = integers[order].T.tolist()
        columns = (order.tolist(), subjects, objects, outputs, *numbers[order].T.tolist())
        frame, unk_label, labels, groups = self.frame, vocabulary.UNK_LABEL, _LABELS, _GROUPS
        new, cls = PredicateEstimate.__new__, PredicateEstimate
        out = []
        for row, subject, obj, output, confidence, det, seg, trk, vis, sp, tmp in zip(*columns):
            name = names[row]
            estimate = new(cls)
            estimate.__dict__ = {"name": name, "subject": subject, "object": obj,
                                 "value": unk_label if output == UNK else labels[name][output],
                                 "confidence": confidence,
                                 "evidence": {"det": det, "seg": seg, "trk": trk, "vis": vis, "sp": sp, "tmp": tmp},
                                 "frame_index": frame, "group": groups[name]}
            out.append(estimate)
        return out
