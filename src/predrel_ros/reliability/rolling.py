"""Rolling reliability metrics over the last `window` frames of each predicate stream.

`RollingStreamMetrics` holds one stream (one predicate of one pair): `update(...)` once per frame,
`compute()` at any time. Its values always equal the offline functions of
`predrel_ros.reliability.metrics` applied to the frames in its window (PRS, CWS, TPC-S, TPC) plus
the agreement rate (PRS without the confidence weight: the share of frames with a known reference
on which the value equals it), the mean confidence, the UNK rate and, given a calibration map, the
expected agreement. The window holds the last `window` updates, and with frame indices given, only
the updates of the last `window` frames (`expire_before`). Updates are O(1): running sums,
recomputed from the window every 1024 updates so rounding cannot drift; TPC (a matching) is
computed on demand, once per window.

`RollingReliability` keeps one such object per stream, keyed by the stream's canonical key
(name, subject, object), and is fed whole frames of estimates. Its window is the last `window`
frames: a stream that is no longer updated (its pair left the scene, or a track ended) keeps only
its updates of those frames, so its old frames age out one by one and the stream is gone once the
last one did; the pooled metrics are always about the current window. The reliability node's three
reference modes map onto two modes here:
- "reference": ground-truth predicates (controlled set) or the estimates of the clean twin pipeline
  are given with every frame; PRS, CWS and TPC are defined.
- "self": no reference (a live robot); TPC-S, confidence, UNK rate and expected agreement only,
  which `predrel_ros.reliability.trust` turns into trust levels.
"""
from __future__ import annotations

import math
from collections import deque
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np

from predrel_ros.predicates import vocabulary
from predrel_ros.predicates.estimate import PredicateEstimate
from predrel_ros.reliability import metrics

UNK = metrics.UNK
REFERENCE = "reference"
SELF = "self"
MODES = (REFERENCE, SELF)

#: updates between recomputations of the running sums from the window (rounding drift stays ~1e-13)
_RESYNC_EVERY = 1024

METRIC_NAMES = ("prs", "agreement", "cws", "tpc_s", "tpc", "confidence", "unk_rate", "expected_agreement", "frames")


class RollingStreamMetrics:
    """Rolling metrics of one predicate stream.

    window: frames kept. with_reference: whether updates carry a reference value and confidence.
    alpha: continuous PRS form when given. tol: TPC matching tolerance (frames).
    calibration: maps a confidence to the agreement expected at that confidence (e.g.
        `CalibrationSummary.expected_agreement` measured on clean data); the expected agreement is
        its mean over the window.
    """

    def __init__(self, window: int, with_reference: bool = True, alpha: float | None = None, tol: int = 2,
                 calibration: Callable[[float], float] | None = None) -> None:
        if window < 1:
            raise ValueError(f"window must be >= 1 frame, got {window}")
        if alpha is not None and not alpha > 0:
            raise ValueError(f"alpha must be > 0, got {alpha}")
        self.window = window
        self.with_reference = with_reference
        self.alpha = alpha
        self.tol = tol
        self.calibration = calibration
        self.reset()

    def reset(self) -> None:
        #: (y, c, y_ref, c_ref, expected agreement or None, frame index or None) per update, oldest first
        self._frames: deque[tuple[float, float, float, float, float | None, int | None]] = deque()
        self._since_resync = 0
        self._tpc: float | None = None   # TPC of the current window, computed on demand
        self._zero_sums()

    def _zero_sums(self) -> None:
        self._prs_sum = 0.0
        self._agreement_sum = 0.0
        self._valid = 0
        self._cws_sum = 0.0
        self._changes = 0
        self._conf_sum = 0.0
        self._unk = 0
        self._expected_sum = 0.0

    def __len__(self) -> int:
        return len(self._frames)

    def _add(self, record: tuple[float, float, float, float, float | None, int | None], sign: int) -> None:
        """Add (sign +1) or remove (sign -1) one frame's terms from the running sums."""
        y, c, y_ref, c_ref, expected, _ = record
        known = y != UNK and y == y       # NaN marks an unknown continuous value
        if self.with_reference:
            if y_ref != UNK and y_ref == y_ref:
                self._valid += sign
                if known:
                    if self.alpha is None:
                        agreement = 1.0 if y == y_ref else 0.0
                    else:
                        agreement = max(0.0, 1.0 - abs(y - y_ref) / self.alpha)
                    self._agreement_sum += sign * agreement
                    self._prs_sum += sign * c * agreement
            self._cws_sum += sign * c * (1.0 - abs(c - c_ref))
        self._conf_sum += sign * c
        if not known:
            self._unk += sign
        if expected is not None:
            self._expected_sum += sign * expected

    def update(self, y_deg: float, c_deg: float, y_ref: float = UNK, c_ref: float = 0.0,
               frame_index: int | None = None) -> None:
        """Add one frame: value and confidence, plus the reference value and confidence in
        reference mode (y_ref UNK: the frame is excluded from PRS and the agreement rate), and the
        frame's index when the window is to age by frame (`expire_before`)."""
        if not 0.0 <= c_deg <= 1.0 or (self.with_reference and not 0.0 <= c_ref <= 1.0):
            raise ValueError(f"confidences must lie in [0, 1], got c_deg={c_deg} c_ref={c_ref}")
        record = (y_deg, c_deg, y_ref, c_ref, self.calibration(c_deg) if self.calibration is not None else None,
                  frame_index)
        frames = self._frames
        if frames and frames[-1][0] != y_deg:
            self._changes += 1
        frames.append(record)
        self._tpc = None
        self._add(record, +1)
        if len(frames) > self.window:
            self._drop_oldest()
        self._since_resync += 1
        if self._since_resync >= _RESYNC_EVERY:
            self._resync()

    def _drop_oldest(self) -> None:
        frames = self._frames
        oldest = frames.popleft()
        if frames and frames[0][0] != oldest[0]:
            self._changes -= 1
        self._add(oldest, -1)
        self._tpc = None

    def expire_before(self, frame_index: int) -> None:
        """Drop the updates of frames older than `frame_index` (updates given without a frame
        index never expire this way)."""
        frames = self._frames
        while frames and frames[0][5] is not None and frames[0][5] < frame_index:
            self._drop_oldest()

    def _resync(self) -> None:
        """Recompute the running sums from the window (bounds floating-point drift)."""
        self._since_resync = 0
        self._zero_sums()
        previous = None
        for record in self._frames:
            self._add(record, +1)
            if previous is not None and previous != record[0]:
                self._changes += 1
            previous = record[0]

    def compute(self, with_tpc: bool = True) -> dict[str, float]:
        """Metric values over the window; NaN where undefined (no frame, no reference)."""
        n = len(self._frames)
        nan = float("nan")
        result = dict.fromkeys(METRIC_NAMES, nan)
        result["frames"] = n
        if n == 0:
            return result
        result["confidence"] = max(0.0, self._conf_sum) / n   # max: a running sum of terms >= 0 may drift to -1e-17
        result["unk_rate"] = self._unk / n
        result["tpc_s"] = 1.0 if n == 1 else 1.0 - self._changes / (n - 1)
        if self.calibration is not None:
            result["expected_agreement"] = self._expected_sum / n
        if self.with_reference:
            result["prs"] = max(0.0, self._prs_sum) / self._valid if self._valid else nan
            result["agreement"] = max(0.0, self._agreement_sum) / self._valid if self._valid else nan
            result["cws"] = max(0.0, self._cws_sum) / n
            if with_tpc:
                if self._tpc is None:
                    frames = self._frames
                    self._tpc = metrics.tpc([r[0] for r in frames], [r[2] for r in frames], self.tol)
                result["tpc"] = self._tpc
        return result

    def arrays(self) -> dict[str, np.ndarray]:
        """The window's values (for the offline functions, plots and tests)."""
        columns = list(zip(*self._frames)) if self._frames else [(), (), (), ()]
        return {"y_deg": np.asarray(columns[0], dtype=np.float64), "c_deg": np.asarray(columns[1], dtype=np.float64),
                "y_ref": np.asarray(columns[2], dtype=np.float64), "c_ref": np.asarray(columns[3], dtype=np.float64)}


class RollingReliability:
    """Rolling metrics of every predicate stream seen, fed one frame of estimates at a time.

    mode: "reference" (give `references` with every frame) or "self" (no reference).
    calibration: predicate name -> confidence-to-expected-agreement map (e.g. from a clean profile).
    window: frames. Every stream holds its updates of the last `window` frames (by frame_index); a
    stream without any (not updated for a whole window: its pair left the scene) is dropped.
    """

    def __init__(self, window: int = 30, mode: str = REFERENCE, alpha: float | None = None, tol: int = 2,
                 calibration: Mapping[str, Callable[[float], float]] | None = None) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        if window < 1:
            raise ValueError(f"window must be >= 1 frame, got {window}")
        self.window = window
        self.mode = mode
        self.alpha = alpha
        self.tol = tol
        self.calibration = dict(calibration or {})
        self.reset()

    def reset(self) -> None:
        self.streams: dict[tuple[str, int, int], RollingStreamMetrics] = {}
        self.last_frame: int | None = None
        self._pools: tuple | None = None      # (with TPC, by name, by group) of the current window

    def _stream(self, key: tuple[str, int, int]) -> RollingStreamMetrics:
        stream = self.streams.get(key)
        if stream is None:
            stream = self.streams[key] = RollingStreamMetrics(
                self.window, with_reference=self.mode == REFERENCE, alpha=self.alpha, tol=self.tol,
                calibration=self.calibration.get(key[0]))
        return stream

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
            frame_index = self._check_order(frame_index)
            stream = self._stream
            for estimate in estimates:
                stream(estimate.canonical_key).update(estimate.code, estimate.confidence, frame_index=frame_index)
            self._age(frame_index)
        else:
            self.update_paired(frame_index, pair_with_references(estimates, references))

    def update_paired(self, frame_index: int, pairs: Iterable[Pair]) -> None:
        """Add one frame of reference mode from its `pair_with_references` pairs (for a caller that
        needs the pairs too, so they are built once)."""
        if self.mode != REFERENCE:
            raise ValueError("update_paired is for reference mode; self mode has no reference to pair with")
        frame_index = self._check_order(frame_index)
        stream = self._stream
        for key, y, c, y_ref, c_ref in pairs:
            stream(key).update(y, c, y_ref, c_ref, frame_index)
        self._age(frame_index)

    def _check_order(self, frame_index: int) -> int:
        frame_index = int(frame_index)
        if self.last_frame is not None and frame_index <= self.last_frame:
            raise ValueError(f"rolling reliability: frame {frame_index} after frame {self.last_frame}; "
                             f"frames must come in increasing order")
        self.last_frame = frame_index
        self._pools = None
        return frame_index

    def _age(self, frame_index: int) -> None:
        """Keep every stream's updates of the last `window` frames; drop the streams left without
        any (not updated for a whole window: their pair left the scene)."""
        oldest = frame_index - self.window + 1
        gone = []
        for key, stream in self.streams.items():
            stream.expire_before(oldest)
            if not len(stream):
                gone.append(key)
        for key in gone:
            del self.streams[key]

    def compute(self, with_tpc: bool = True) -> dict[tuple[str, int, int], dict[str, float]]:
        """Metric values of every live stream."""
        return {key: stream.compute(with_tpc) for key, stream in self.streams.items()}

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
        """`pooled` for each of `pools_of`, in one pass over the streams."""
        poolings: list[dict[str, dict[str, float]]] = [{} for _ in pools_of]
        for (name, _, _), stream in self.streams.items():
            n = len(stream)
            if n == 0:
                continue
            tpc = stream.compute(with_tpc=True)["tpc"] if with_tpc and stream.with_reference else math.nan
            for pool_of, totals in zip(pools_of, poolings):
                total = totals.get(pool_of(name))
                if total is None:
                    total = totals[pool_of(name)] = dict.fromkeys(_TOTALS, 0.0)
                _add_stream(total, stream, n, tpc)
        return [{pool: self._pooled_values(total) for pool, total in totals.items()} for totals in poolings]

    def _pooled_values(self, total: dict[str, float]) -> dict[str, float]:
        nan = float("nan")
        frames = total["frames"]
        result = dict.fromkeys(METRIC_NAMES, nan)
        result["frames"] = frames
        result["confidence"] = max(0.0, total["conf"]) / frames
        result["unk_rate"] = total["unk"] / frames
        result["tpc_s"] = 1.0 - total["changes"] / total["pairs"] if total["pairs"] else 1.0
        if total["expected_frames"]:
            result["expected_agreement"] = total["expected"] / total["expected_frames"]
        if self.mode == REFERENCE:
            result["prs"] = max(0.0, total["prs"]) / total["valid"] if total["valid"] else nan
            result["agreement"] = max(0.0, total["agreement"]) / total["valid"] if total["valid"] else nan
            result["cws"] = max(0.0, total["cws"]) / frames
            if total["tpc_frames"]:
                result["tpc"] = total["tpc_weighted"] / total["tpc_frames"]
        return result


#: the running totals of one pool
_TOTALS = ("frames", "pairs", "changes", "conf", "unk", "valid", "prs", "agreement", "cws", "expected",
           "expected_frames", "tpc_weighted", "tpc_frames")


def _same_name(name: str) -> str:
    return name


def _add_stream(total: dict[str, float], stream: RollingStreamMetrics, n: int, tpc: float) -> None:
    """One stream's terms (n frames, its TPC or NaN) into a pool's totals."""
    total["frames"] += n
    total["pairs"] += n - 1
    total["changes"] += stream._changes
    total["conf"] += stream._conf_sum
    total["unk"] += stream._unk
    if stream.calibration is not None:
        total["expected"] += stream._expected_sum
        total["expected_frames"] += n
    if stream.with_reference:
        total["valid"] += stream._valid
        total["prs"] += stream._prs_sum
        total["agreement"] += stream._agreement_sum
        total["cws"] += stream._cws_sum
        if not math.isnan(tpc):
            total["tpc_weighted"] += tpc * n
            total["tpc_frames"] += n


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
