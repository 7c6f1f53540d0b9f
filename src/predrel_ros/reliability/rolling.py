"""Rolling reliability metrics over the last `window` frames of each predicate stream.

`RollingReliability` keeps every predicate stream (one predicate of one pair), keyed by its
canonical key (name, subject, object), and is fed whole frames of estimates. `compute()` gives each
live stream's values, which always equal the offline functions of `predrel_ros.reliability.metrics`
applied to the frames in its window (PRS, CWS, TPC-S, TPC) plus the agreement rate (PRS without the
confidence weight: the share of frames with a known reference on which the value equals it), the
mean confidence, the UNK rate and, given a calibration map, the expected agreement;
`by_predicate()` / `by_group()` pool them. Its window is the last `window` frames: a stream that is
no longer updated (its pair left the scene, or a track ended) keeps only its updates of those
frames, so its old frames age out one by one and the stream is gone once the last one did; the
pooled metrics are always about the current window.

The streams are the rows of arrays with one column per frame of the window (frame index modulo
the window, frames come in increasing order), so a frame's ageing and the sums of every stream are
a few numpy operations over all streams together rather than a Python loop per stream (a monitor
holds over a hundred streams, issue 14's cost goal). The sums are taken afresh from the window, so
no rounding drifts; TPC (a matching) is computed on demand, once per window.

The reliability node's three reference modes map onto two modes here:
- "reference": ground-truth predicates (controlled set) or the estimates of the clean twin pipeline
  are given with every frame; PRS, CWS and TPC are defined.
- "self": no reference (a live robot); TPC-S, confidence, UNK rate and expected agreement only,
  which `predrel_ros.reliability.trust` turns into trust levels.
"""
from __future__ import annotations

import math
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np

from predrel_ros.predicates import vocabulary
from predrel_ros.predicates.estimate import PredicateEstimate
from predrel_ros.reliability import metrics

UNK = metrics.UNK
REFERENCE = "reference"
SELF = "self"
MODES = (REFERENCE, SELF)

METRIC_NAMES = ("prs", "agreement", "cws", "tpc_s", "tpc", "confidence", "unk_rate", "expected_agreement", "frames")

#: a frame slot that holds no update
_EMPTY = -1
#: rows the arrays start with (they double when full)
_INITIAL_ROWS = 64
#: frame offsets beyond which the stored offsets are taken relative to a newer origin (frame
#: indices are unsigned 64-bit in the messages; the arrays hold int64)
_REBASE = 2 ** 62
#: the per-stream sums of a window, one array each (rows in the order of `RollingReliability._rows`)
_SUMS = ("frames", "changes", "conf", "unk", "expected", "calibrated", "valid", "prs", "agreement", "cws")


class RollingReliability:
    """Rolling metrics of every predicate stream seen, fed one frame of estimates at a time.

    mode: "reference" (give `references` with every frame) or "self" (no reference).
    alpha: continuous PRS form when given. tol: TPC matching tolerance (frames).
    calibration: predicate name -> confidence-to-expected-agreement map (e.g. from a clean profile,
        `CalibrationSummary.expected_agreement` measured on clean data); a stream's expected
        agreement is its mean over the window.
    window: frames. Every stream holds its updates of the last `window` frames (by frame_index); a
    stream without any (not updated for a whole window: its pair left the scene) is dropped.
    """

    def __init__(self, window: int = 30, mode: str = REFERENCE, alpha: float | None = None, tol: int = 2,
                 calibration: Mapping[str, Callable[[float], float]] | None = None) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        if window < 1:
            raise ValueError(f"window must be >= 1 frame, got {window}")
        if alpha is not None and not alpha > 0:
            raise ValueError(f"alpha must be > 0, got {alpha}")
        self.window = window
        self.mode = mode
        self.alpha = alpha
        self.tol = tol
        self.calibration = dict(calibration or {})
        self.reset()

    def reset(self) -> None:
        #: stream key -> its row, in the order the streams appeared
        self._rows: dict[tuple[str, int, int], int] = {}
        rows, window = _INITIAL_ROWS, self.window
        self._frame = np.full((rows, window), _EMPTY, dtype=np.int64)    # frame index - origin of each slot
        self._origin: int | None = None
        #: value, confidence, reference value, reference confidence, expected agreement (NaN: no calibration)
        self._values = np.zeros((5, rows, window))
        #: per slot: the offset of the stream's update before it (_EMPTY: none) and whether its value differed
        self._previous = np.full((rows, window), _EMPTY, dtype=np.int64)
        self._changed = np.zeros((rows, window), dtype=bool)
        #: per stream: the offset and value of its newest update
        self._last = np.full(rows, _EMPTY, dtype=np.int64)
        self._last_value = np.zeros(rows)
        self._newest = _EMPTY                    # the newest frame's offset
        self._calibrated = np.zeros(rows, dtype=bool)
        self._occupied = np.zeros(rows, dtype=bool)
        self._keys: list[tuple[str, int, int] | None] = [None] * rows    # row -> its stream
        self._free = list(range(rows - 1, -1, -1))
        self.last_frame: int | None = None
        self._window_sums: tuple | None = None   # (keys, rows, sums) of the current window
        self._tpc: dict[int, float] = {}         # row -> TPC of the current window
        self._pools: tuple | None = None         # (with TPC, by name, by group) of the current window
        #: (the streams' names, pools_of, name x stream matrix, per pooling its labels and pool x name
        #: matrix) of the last `pooled_by`: the same while the window lists the same streams (most frames)
        self._memberships: tuple | None = None

    def __len__(self) -> int:
        """Live streams."""
        return len(self._rows)

    def update(self, frame_index: int, estimates: Iterable[PredicateEstimate],
               references: Iterable[PredicateEstimate] | None = None) -> None:
        """Add one frame. In reference mode, a stream with an estimate but no reference gets an UNK
        reference (excluded from PRS), a stream with a reference but no estimate gets an UNK
        estimate with confidence 0 (a disagreement); see `pair_with_references`."""
        if self.mode == REFERENCE and references is None:
            raise ValueError("rolling reliability in reference mode needs the reference estimates of every frame")
        if self.mode == SELF and references is not None:
            raise ValueError("rolling reliability in self mode takes no references")
        if self.mode == SELF:
            estimates = list(estimates)
            self.update_keyed(frame_index, [e.canonical_key for e in estimates], estimates)
        else:
            self.update_paired(frame_index, pair_with_references(estimates, references))

    def update_keyed(self, frame_index: int, keys: Sequence[tuple[str, int, int]],
                     estimates: Sequence[PredicateEstimate]) -> None:
        """Add one frame of self mode whose estimates' canonical keys the caller has already."""
        if self.mode != SELF:
            raise ValueError("update_keyed is for self mode; reference mode pairs the estimates with references")
        codes = vocabulary.encode_all([e.name for e in estimates], [e.value for e in estimates])
        self._add_frame(frame_index, keys, codes, [e.confidence for e in estimates], None, None)

    def update_paired(self, frame_index: int, pairs: Iterable[Pair]) -> None:
        """Add one frame of reference mode from its `pair_with_references` pairs (for a caller that
        needs the pairs too, so they are built once)."""
        if self.mode != REFERENCE:
            raise ValueError("update_paired is for reference mode; self mode has no reference to pair with")
        columns = list(zip(*pairs)) or [(), (), (), (), ()]
        self._add_frame(frame_index, *columns)

    def _add_frame(self, frame_index: int, keys: Sequence, y: Sequence, c: Sequence,
                   y_ref: Sequence | None, c_ref: Sequence | None) -> None:
        """One frame's updates, a stream at most once (ValueError, and nothing changes, otherwise)."""
        confidences = np.asarray(c, dtype=np.float64)
        references = np.asarray(c_ref, dtype=np.float64) if c_ref is not None else confidences
        outside = ~((confidences >= 0.0) & (confidences <= 1.0) & (references >= 0.0) & (references <= 1.0))
        if outside.any():
            first = int(np.flatnonzero(outside)[0])
            raise ValueError(f"confidences must lie in [0, 1], got c_deg={confidences[first]} "
                             f"c_ref={references[first]} for {keys[first]}")
        if len(set(keys)) != len(keys):
            raise ValueError("rolling reliability: a frame holds a stream twice")
        calibration = self.calibration
        expected = [calibration[key[0]](float(confidence)) if key[0] in calibration else math.nan
                    for key, confidence in zip(keys, c)] if calibration else None
        frame_index = self._check_order(frame_index)
        offset = self._offset(frame_index)
        frames = self._frame
        frames[(frames != _EMPTY) & (frames <= offset - self.window)] = _EMPTY      # aged out
        self._newest = offset
        known = self._rows.get
        rows = [known(key) for key in keys]
        if None in rows:                             # new streams take a row
            rows = [self._new_row(key) if row is None else row for key, row in zip(keys, rows)]
        if rows:
            rows = np.array(rows, dtype=np.intp)      # one index array for the assignments below
            slot = frame_index % self.window
            frames = self._frame                     # rows may have grown the arrays
            values = self._values
            frames[rows, slot] = offset
            codes = np.asarray(y, dtype=np.float64)
            self._previous[rows, slot] = self._last[rows]
            self._changed[rows, slot] = self._last_value[rows] != codes      # NaN differs from anything
            self._last[rows] = offset
            self._last_value[rows] = codes
            values[0, rows, slot] = codes
            values[1, rows, slot] = confidences
            if y_ref is not None:
                values[2, rows, slot] = y_ref
                values[3, rows, slot] = references
            if expected is not None:
                values[4, rows, slot] = expected
        gone = np.flatnonzero(self._occupied & (self._frame == _EMPTY).all(axis=1))
        for row in gone.tolist():
            del self._rows[self._keys[row]]
            self._occupied[row] = False
            self._free.append(row)

    def _offset(self, frame_index: int) -> int:
        """What the arrays store for a frame: its index less the origin, which moves forward when
        the offsets grow too large (the frames kept are the window's last, so they stay small)."""
        if self._origin is None:
            self._origin = frame_index
        offset = frame_index - self._origin
        if offset >= _REBASE:
            shift = offset - self.window
            for offsets in (self._frame, self._previous, self._last):
                live = offsets != _EMPTY
                if shift >= 2 * _REBASE:    # beyond int64: every frame kept is older than the window
                    offsets[live] = _EMPTY
                else:
                    offsets[live] -= shift
            self._origin += shift
            offset -= shift
        return offset

    def _new_row(self, key: tuple[str, int, int]) -> int:
        """A free row for a stream not yet in `_rows`."""
        if not self._free:
            self._grow()
        row = self._rows[key] = self._free.pop()
        self._keys[row] = key
        self._last[row] = _EMPTY
        self._occupied[row] = True
        self._calibrated[row] = key[0] in self.calibration
        return row

    def _grow(self) -> None:
        """Twice the rows (the new ones free)."""
        rows = self._frame.shape[0]
        self._frame = np.concatenate([self._frame, np.full_like(self._frame, _EMPTY)])
        self._values = np.concatenate([self._values, np.zeros_like(self._values)], axis=1)
        self._previous = np.concatenate([self._previous, np.full_like(self._previous, _EMPTY)])
        self._changed = np.concatenate([self._changed, np.zeros_like(self._changed)])
        self._last = np.concatenate([self._last, np.full_like(self._last, _EMPTY)])
        self._last_value = np.concatenate([self._last_value, np.zeros_like(self._last_value)])
        self._calibrated = np.concatenate([self._calibrated, np.zeros_like(self._calibrated)])
        self._occupied = np.concatenate([self._occupied, np.zeros_like(self._occupied)])
        self._keys.extend([None] * rows)
        self._free.extend(range(2 * rows - 1, rows - 1, -1))

    def _check_order(self, frame_index: int) -> int:
        frame_index = int(frame_index)
        if self.last_frame is not None and frame_index <= self.last_frame:
            raise ValueError(f"rolling reliability: frame {frame_index} after frame {self.last_frame}; "
                             f"frames must come in increasing order")
        self.last_frame = frame_index
        self._pools = self._window_sums = None
        self._tpc = {}
        return frame_index

    def _sums(self) -> tuple[list, np.ndarray, dict[str, np.ndarray]]:
        """(keys, rows, per-stream sums `_SUMS`) of the current window, the streams in order of appearance."""
        if self._window_sums is not None:
            return self._window_sums
        keys = list(self._rows)
        rows = np.fromiter(self._rows.values(), dtype=np.int64, count=len(keys))
        # over all rows (free ones hold no frame), then the live streams' rows
        present = self._frame != _EMPTY
        y, c = self._values[0], self._values[1]
        known = present & (y != UNK) & (y == y)         # NaN marks an unknown continuous value
        # a change counts while the update before it is in the window too
        previous = self._previous
        changes = present & self._changed & (previous != _EMPTY) & (previous > self._newest - self.window)
        frames = present.sum(axis=1)
        sums = {"frames": frames[rows], "changes": changes.sum(axis=1)[rows],
                "conf": np.where(present, c, 0.0).sum(axis=1)[rows], "unk": (frames - known.sum(axis=1))[rows],
                "calibrated": self._calibrated[rows],
                "expected": np.where(present, self._values[4], 0.0).sum(axis=1)[rows] if self.calibration
                else np.zeros(len(keys))}
        if self.mode == REFERENCE:
            y_ref, c_ref = self._values[2], self._values[3]
            valid = present & (y_ref != UNK) & (y_ref == y_ref)
            scored = valid & known
            if self.alpha is None:
                agreement = np.where(scored & (y == y_ref), 1.0, 0.0)
            else:
                agreement = np.where(scored, np.maximum(0.0, 1.0 - np.abs(y - y_ref) / self.alpha), 0.0)
            sums.update(valid=valid.sum(axis=1)[rows], agreement=agreement.sum(axis=1)[rows],
                        prs=(c * agreement).sum(axis=1)[rows],
                        cws=np.where(present, c * (1.0 - np.abs(c - c_ref)), 0.0).sum(axis=1)[rows])
        self._window_sums = keys, rows, sums
        return self._window_sums

    def _stream_tpc(self, row: int) -> float:
        """TPC of one stream over the current window (reference mode)."""
        tpc = self._tpc.get(row)
        if tpc is None:
            frames = self._frame[row]
            slots = np.argsort(np.where(frames == _EMPTY, np.iinfo(np.int64).max, frames))[:(frames != _EMPTY).sum()]
            values = self._values[:, row, slots]
            tpc = self._tpc[row] = metrics.tpc(values[0].tolist(), values[2].tolist(), self.tol)
        return tpc

    def frames_by_stream(self) -> dict[tuple[str, int, int], int]:
        """Frames of every live stream in the window."""
        keys, _, sums = self._sums()
        return dict(zip(keys, sums["frames"].tolist()))

    def stream_columns(self, with_tpc: bool = True) -> tuple[list[tuple[str, int, int]], dict[str, np.ndarray]]:
        """(stream keys, metric -> one value per stream) of every live stream: `compute` as columns."""
        keys, rows, sums = self._sums()
        n = sums["frames"]
        nan = math.nan
        empty = np.full(len(keys), nan)
        with np.errstate(divide="ignore", invalid="ignore"):
            columns = {"prs": empty, "agreement": empty, "cws": empty,
                       "tpc_s": np.where(n > 1, 1.0 - sums["changes"] / np.maximum(n - 1, 1), 1.0), "tpc": empty,
                       "confidence": sums["conf"] / n, "unk_rate": sums["unk"] / n,
                       "expected_agreement": np.where(sums["calibrated"], sums["expected"] / n, nan), "frames": n}
            if self.mode == REFERENCE:
                valid = sums["valid"]
                columns.update(prs=np.where(valid > 0, sums["prs"] / valid, nan),
                               agreement=np.where(valid > 0, sums["agreement"] / valid, nan), cws=sums["cws"] / n)
                if with_tpc:
                    columns["tpc"] = np.array([self._stream_tpc(row) for row in rows.tolist()], dtype=np.float64)
        return keys, columns

    def compute(self, with_tpc: bool = True) -> dict[tuple[str, int, int], dict[str, float]]:
        """Metric values of every live stream; NaN where undefined (no reference)."""
        keys, columns = self.stream_columns(with_tpc)
        values = zip(*(columns[name].tolist() for name in METRIC_NAMES))
        return {key: dict(zip(METRIC_NAMES, row)) for key, row in zip(keys, values)}

    def by_predicate(self, with_tpc: bool = True) -> dict[str, dict[str, float]]:
        """Metrics pooled over the streams of each predicate name (see `pooled`)."""
        return self._name_and_group_pools(with_tpc)[0]

    def by_group(self, with_tpc: bool = True) -> dict[str, dict[str, float]]:
        """Metrics pooled over the streams of each predicate group (contact, static, dynamic, derived)."""
        return self._name_and_group_pools(with_tpc)[1]

    def _name_and_group_pools(self, with_tpc: bool) -> tuple[dict, dict]:
        """Fresh copies of both poolings of the current window, computed in one pass over the streams
        and kept until the next update (a monitor asks for them several times a frame); without TPC,
        a pooling that has it gives it as NaN, as computing it without would."""
        if self._pools is None or (with_tpc and not self._pools[0]):
            self._pools = (with_tpc, *self.pooled_by((_same_name, vocabulary.group_of), with_tpc))
        _, *pools = self._pools
        nan = float("nan")
        return tuple({pool: {**values, "tpc": values["tpc"] if with_tpc else nan} for pool, values in pooling.items()}
                     for pooling in pools)

    def pooled(self, pool_of: Callable[[str], str], with_tpc: bool = True) -> dict[str, dict[str, float]]:
        """Metrics pooled over the streams whose predicate name maps to the same `pool_of(name)`.

        Pooled PRS (agreement) = sum of PRS (agreement) terms / valid frames over all streams; pooled
        TPC-S = 1 - changes /
        (frame pairs); confidence, UNK rate and CWS are frame-weighted means; the expected agreement
        is the frame-weighted mean over the streams that have a calibration; TPC is the
        frame-weighted mean of the streams' TPC.
        """
        return self.pooled_by((pool_of,), with_tpc)[0]

    def pooled_by(self, pools_of: Sequence[Callable[[str], str]], with_tpc: bool = True
                  ) -> list[dict[str, dict[str, float]]]:
        """`pooled` for each of `pools_of`, over the streams' sums at once."""
        keys, rows, sums = self._sums()
        n = sums["frames"]
        terms = np.zeros((len(keys), len(_TOTALS)))     # one row per stream, one column per total
        column = _TOTALS.index
        terms[:, column("frames")] = n
        terms[:, column("pairs")] = n - 1
        for name in ("changes", "conf", "unk"):
            terms[:, column(name)] = sums[name]
        calibrated = sums["calibrated"]
        terms[:, column("expected")] = np.where(calibrated, sums["expected"], 0.0)
        terms[:, column("expected_frames")] = np.where(calibrated, n, 0)
        if self.mode == REFERENCE:
            for name in ("valid", "prs", "agreement", "cws"):
                terms[:, column(name)] = sums[name]
            if with_tpc:
                tpc = np.array([self._stream_tpc(row) for row in rows.tolist()], dtype=np.float64)
                defined = ~np.isnan(tpc)
                terms[:, column("tpc_weighted")] = np.where(defined, tpc * n, 0.0)
                terms[:, column("tpc_frames")] = np.where(defined, n, 0)
        stream_names = [key[0] for key in keys]
        memberships = self._memberships
        if memberships is None or memberships[0] != stream_names or memberships[1] != tuple(pools_of):
            names = list(dict.fromkeys(stream_names))
            matrices = []
            for pool_of in pools_of:              # a pool is a set of names: sum the names' totals
                pools = [pool_of(name) for name in names]
                labels = list(dict.fromkeys(pools))
                matrices.append((labels, _members(labels, pools)))
            memberships = self._memberships = (stream_names, tuple(pools_of), _members(names, stream_names), matrices)
        by_name = memberships[2] @ terms
        # all poolings' pools as rows of one table (a label may name a pool in two poolings: kept apart by place)
        rows = self._pooled_rows(np.vstack([members @ by_name for _, members in memberships[3]]))
        poolings, start = [], 0
        for labels, _ in memberships[3]:
            poolings.append({pool: dict(zip(METRIC_NAMES, row)) for pool, row in zip(labels, rows[start:])})
            start += len(labels)
        return poolings

    def _pooled_rows(self, totals: np.ndarray) -> list[tuple[float, ...]]:
        """Per pool its metrics in the order of METRIC_NAMES, from its totals (a row of `_TOTALS` per pool)."""
        total = dict(zip(_TOTALS, totals.T))
        frames, valid = total["frames"], total["valid"]
        nan = np.full(len(totals), math.nan)
        with np.errstate(divide="ignore", invalid="ignore"):
            columns = {"prs": nan, "agreement": nan, "cws": nan,
                       "tpc_s": np.where(total["pairs"] > 0, 1.0 - total["changes"] / total["pairs"], 1.0), "tpc": nan,
                       "confidence": np.maximum(0.0, total["conf"]) / frames, "unk_rate": total["unk"] / frames,
                       "expected_agreement": np.where(total["expected_frames"] > 0,
                                                      total["expected"] / total["expected_frames"], math.nan),
                       "frames": frames}
            if self.mode == REFERENCE:
                columns.update(prs=np.where(valid > 0, np.maximum(0.0, total["prs"]) / valid, math.nan),
                               agreement=np.where(valid > 0, np.maximum(0.0, total["agreement"]) / valid, math.nan),
                               cws=np.maximum(0.0, total["cws"]) / frames,
                               tpc=np.where(total["tpc_frames"] > 0, total["tpc_weighted"] / total["tpc_frames"],
                                            math.nan))
        return list(zip(*(columns[name].tolist() for name in METRIC_NAMES)))


#: the running totals of one pool
_TOTALS = ("frames", "pairs", "changes", "conf", "unk", "valid", "prs", "agreement", "cws", "expected",
           "expected_frames", "tpc_weighted", "tpc_frames")


def _members(pools: list[str], members: list[str]) -> np.ndarray:
    """The 0/1 matrix pool x member: whether the member belongs to the pool."""
    place = {pool: index for index, pool in enumerate(pools)}
    matrix = np.zeros((len(pools), len(members)))
    matrix[[place[pool] for pool in members], np.arange(len(members))] = 1.0
    return matrix


def _same_name(name: str) -> str:
    return name


#: one stream's terms of one frame: (stream key, value code, confidence, reference code, reference confidence)
Pair = tuple[tuple[str, int, int], int, float, int, float]


def pair_with_references(estimates: Iterable[PredicateEstimate], references: Iterable[PredicateEstimate]
                         ) -> list[Pair]:
    """One frame's estimates paired with its references by canonical stream key (either orientation).

    An estimate without a reference is paired with UNK (confidence 0): excluded from PRS. A
    reference without an estimate is paired with an UNK estimate of confidence 0: a disagreement.
    Estimates come first in their order, then the unmatched references in theirs.
    """
    unmatched = {reference.canonical_key: reference for reference in references}
    pairs: list[Pair] = []
    for estimate in estimates:
        key = estimate.canonical_key
        reference = unmatched.pop(key, None)
        if reference is None:
            pairs.append((key, estimate.code, estimate.confidence, UNK, 0.0))
        else:
            pairs.append((key, estimate.code, estimate.confidence, reference.code, reference.confidence))
    for key, reference in unmatched.items():
        pairs.append((key, UNK, 0.0, reference.code, reference.confidence))
    return pairs
