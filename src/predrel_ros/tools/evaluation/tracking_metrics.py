"""Multi-object tracking metrics: IDF1 (Ristani et al. 2016) and CLEAR-MOT (identity switches, MOTA).

Feed one frame at a time (`update`), read the scores with `compute`. A ground-truth object and a
hypothesis can correspond in a frame when their box IoU is at least `iou_threshold` (0.5).

CLEAR-MOT (Bernardin and Stiefelhagen 2008, as in py-motmetrics): per frame, a ground-truth object
keeps last frame's hypothesis if that one is still present and overlaps enough; the others are
matched by Hungarian assignment on 1 - IoU. An identity switch is counted when an object is matched
to a different hypothesis id than the last time it was matched. MOTA = 1 - (misses + false
positives + switches) / ground-truth detections.

IDF1: one global one-to-one assignment of ground-truth ids to hypothesis ids that maximises the
number of frames in which paired ids correspond (IDTP); IDP = IDTP / hypothesis detections,
IDR = IDTP / ground-truth detections, IDF1 = 2 IDTP / (ground-truth + hypothesis detections).
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

from predrel_ros.core.boxes import box_iou


@dataclass(frozen=True)
class TrackingScores:
    idf1: float
    idp: float
    idr: float
    id_switches: int
    mota: float
    idtp: int  # frames in which paired ids correspond (IDF1's true positives)
    matches: int
    misses: int
    false_positives: int
    ground_truth: int  # ground-truth detections (object-frames)
    hypotheses: int  # hypothesis detections
    ground_truth_ids: int
    hypothesis_ids: int
    frames: int

    def as_dict(self) -> dict:
        return asdict(self)


class TrackingEvaluator:
    def __init__(self, iou_threshold: float = 0.5) -> None:
        if not 0.0 < iou_threshold <= 1.0:
            raise ValueError(f"iou_threshold must lie in (0, 1], got {iou_threshold}")
        self.iou_threshold = iou_threshold
        self.reset()

    def reset(self) -> None:
        self._last_match: dict[int, int] = {}  # ground-truth id -> hypothesis id last matched
        self._pair_frames: dict[tuple[int, int], int] = defaultdict(int)
        self._gt_frames: dict[int, int] = defaultdict(int)
        self._hyp_frames: dict[int, int] = defaultdict(int)
        self._matches = self._misses = self._false_positives = self._switches = self._frames = 0

    def update(self, gt_ids, gt_boxes, hyp_ids, hyp_boxes) -> None:
        """One frame: ground-truth ids and (x1, y1, x2, y2) boxes, hypothesis ids and boxes."""
        gt_ids = [int(i) for i in np.asarray(gt_ids).reshape(-1)]
        hyp_ids = [int(i) for i in np.asarray(hyp_ids).reshape(-1)]
        for ids, kind in ((gt_ids, "ground-truth"), (hyp_ids, "hypothesis")):
            if len(set(ids)) != len(ids):
                raise ValueError(f"frame {self._frames}: {kind} ids must be unique within a frame, got {ids}")
        gt_boxes = np.asarray(gt_boxes, dtype=np.float64).reshape(len(gt_ids), 4)
        hyp_boxes = np.asarray(hyp_boxes, dtype=np.float64).reshape(len(hyp_ids), 4)
        iou = box_iou(gt_boxes, hyp_boxes)
        close = iou >= self.iou_threshold
        self._frames += 1
        for g in gt_ids:
            self._gt_frames[g] += 1
        for h in hyp_ids:
            self._hyp_frames[h] += 1
        for gi, hi in zip(*np.nonzero(close)):
            self._pair_frames[(gt_ids[gi], hyp_ids[hi])] += 1
        self._clear_mot(gt_ids, hyp_ids, iou, close)

    def _clear_mot(self, gt_ids: list[int], hyp_ids: list[int], iou: np.ndarray, close: np.ndarray) -> None:
        matched: dict[int, int] = {}  # row -> column
        hyp_column = {h: c for c, h in enumerate(hyp_ids)}
        for row, g in enumerate(gt_ids):  # keep last frame's correspondences that still hold
            column = hyp_column.get(self._last_match.get(g, -1))
            if column is not None and close[row, column] and column not in matched.values():
                matched[row] = column
        rows = [r for r in range(len(gt_ids)) if r not in matched]
        columns = [c for c in range(len(hyp_ids)) if c not in matched.values()]
        if rows and columns:
            cost = 1.0 - iou[np.ix_(rows, columns)]
            cost[~close[np.ix_(rows, columns)]] = 2.0
            for r, c in zip(*linear_sum_assignment(cost)):
                if close[rows[r], columns[c]]:
                    matched[rows[r]] = columns[c]
        for row, column in matched.items():
            g, h = gt_ids[row], hyp_ids[column]
            if g in self._last_match and self._last_match[g] != h:
                self._switches += 1
            self._last_match[g] = h
        self._matches += len(matched)
        self._misses += len(gt_ids) - len(matched)
        self._false_positives += len(hyp_ids) - len(matched)

    def compute(self) -> TrackingScores:
        gt_total = sum(self._gt_frames.values())
        hyp_total = sum(self._hyp_frames.values())
        idtp = self._global_id_matches()
        return TrackingScores(
            idf1=_ratio(2 * idtp, gt_total + hyp_total), idp=_ratio(idtp, hyp_total), idr=_ratio(idtp, gt_total),
            id_switches=self._switches,
            mota=1.0 - (self._misses + self._false_positives + self._switches) / gt_total if gt_total else 0.0,
            idtp=idtp,
            matches=self._matches, misses=self._misses, false_positives=self._false_positives,
            ground_truth=gt_total, hypotheses=hyp_total, ground_truth_ids=len(self._gt_frames),
            hypothesis_ids=len(self._hyp_frames), frames=self._frames)

    def _global_id_matches(self) -> int:
        """IDTP: the maximum total co-occurrence over one-to-one id pairings."""
        if not self._pair_frames:
            return 0
        gts = sorted({g for g, _ in self._pair_frames})
        hyps = sorted({h for _, h in self._pair_frames})
        gt_row = {g: i for i, g in enumerate(gts)}
        hyp_col = {h: j for j, h in enumerate(hyps)}
        weight = np.zeros((len(gts), len(hyps)))
        for (g, h), count in self._pair_frames.items():
            weight[gt_row[g], hyp_col[h]] = count
        rows, cols = linear_sum_assignment(weight, maximize=True)
        return int(weight[rows, cols].sum())


def combine(scores: list[TrackingScores]) -> TrackingScores:
    """Scores over several sequences: counts summed (each sequence keeps its own id pairing), the
    ratios recomputed from the sums, as MOT benchmarks aggregate."""
    total = {name: sum(getattr(s, name) for s in scores) for name in (
        "idtp", "id_switches", "matches", "misses", "false_positives", "ground_truth", "hypotheses",
        "ground_truth_ids", "hypothesis_ids", "frames")}
    gt, hyp, idtp = total["ground_truth"], total["hypotheses"], total["idtp"]
    errors = total["misses"] + total["false_positives"] + total["id_switches"]
    return TrackingScores(idf1=_ratio(2 * idtp, gt + hyp), idp=_ratio(idtp, hyp), idr=_ratio(idtp, gt),
                          mota=1.0 - errors / gt if gt else 0.0, **total)


def _ratio(numerator: float, denominator: float) -> float:
    return float(numerator / denominator) if denominator else 0.0
