"""ByteTrack-style multi-object tracker: persistent ids from per-frame detections.

Each frame (Zhang et al., ByteTrack, ECCV 2022):
  1. every track's Kalman state is predicted to this frame (over any frame-index gap);
  2. high-score detections (>= high_threshold) are matched to confirmed and lost tracks by
     Hungarian assignment on 1 - IoU * score (IoU >= 1 - match_threshold);
  3. low-score detections (>= low_threshold) are matched to the confirmed tracks still unmatched,
     on 1 - IoU (IoU >= 1 - low_match_threshold): occluded or blurred objects keep their ids. ByteTrack
     matches tracked tracks only; with `low_score_finds_lost` lost ones too (at the same IoU with their
     prediction): an object held in a hand comes back after a miss at a score below high_threshold,
     and would otherwise stay lost until it scores high again;
  4. tentative tracks (born last frame) are matched to the remaining high-score detections; a
     tentative track that misses is dropped;
  5. recovery (beyond ByteTrack): confirmed tracks still unmatched, lost ones included, take remaining
     high-score detections of their class whose centre lies within `recovery_distance` box sides of
     their prediction: the visible box of a small, partly occluded object can jump so far that no
     IoU is left (a grasped cube), and would otherwise get a new id;
  6. remaining detections scoring >= new_track_threshold start tentative tracks (confirmed at once
     on the first frame of a sequence); confirmed tracks that missed become lost, and lost tracks
     are removed after `lost_buffer` frames.
Class votes (beyond ByteTrack): a detector often reads one object as another class on some frames
(the default model, seed 1413: 176 of 1849 object frames, a cube as a cylinder and back). So a
detection of another class of the same family (`class_families`; the perception stage passes hands,
surfaces and the rest) may continue a track that was seen on the previous frame, at `relabel_cost`
more than one of the track's class, and a track's class is the winner of its votes: each
observation adds its detection's score to the detected class, older votes fading over
`class_memory` observations. A lost track resumes only on its own class (its prediction drifts onto
its neighbours), and a hand never continues an object's track nor an object a hand's. Without
families, or with `relabel_cost` None, ids are class-consistent: a detection never continues a
track of another class. Frame indices
must increase, by the one stream-order policy (`predrel_ros.core.stream_order`) in its mode for a
stage that cannot refuse a frame (`restart_after` 1): an index at or below the previous one (a
looped bag), or implausibly far ahead of it, starts a new sequence.
Each output track carries its quality (`track_quality.py`).
"""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from enum import Enum
from typing import Sequence

import numpy as np
from scipy.optimize import linear_sum_assignment

from predrel_ros.core.boxes import box_iou
from predrel_ros.core.stream_order import RESTART, StreamOrder
from predrel_ros.perception.detections import Detections
from predrel_ros.perception.kalman import BoxKalmanFilter, KalmanConfig, xyah_to_xyxy, xyxy_to_xyah
from predrel_ros.perception.track_quality import TrackHistory, TrackQuality, TrackQualityConfig

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TrackerConfig:
    high_threshold: float = 0.5  # detections at or above: first association stage
    low_threshold: float = 0.1  # detections between low and high: second stage only
    new_track_threshold: float = 0.6  # unmatched detections at or above start tracks
    match_threshold: float = 0.8  # max cost 1 - IoU*score, stage 1
    low_match_threshold: float = 0.5  # max cost 1 - IoU, stage 2
    tentative_match_threshold: float = 0.7  # max cost, tentative tracks
    lost_buffer: int = 30  # frames a lost track waits to be found again
    low_score_finds_lost: bool = True  # stage 2 also matches lost tracks (False: ByteTrack, tracked ones only)
    recovery_distance: float = 1.0  # max centre distance (in box sides) of the recovery stage; 0: off
    duplicate_iou: float = 0.85  # a lost track overlapping a tracked one this much is a duplicate
    relabel_cost: float | None = 0.1  # extra cost of a detection of another class of the track's family; None: off
    class_memory: float = 60.0  # observations over which a track's class votes fade (1 / e after this many)
    kalman: KalmanConfig = field(default_factory=KalmanConfig)
    quality: TrackQualityConfig = field(default_factory=TrackQualityConfig)

    def __post_init__(self) -> None:
        for name in ("high_threshold", "low_threshold", "new_track_threshold", "match_threshold",
                     "low_match_threshold", "tentative_match_threshold", "duplicate_iou"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"tracker.{name} must lie in [0, 1], got {value}")
        if self.low_threshold > self.high_threshold:
            raise ValueError(f"tracker.low_threshold ({self.low_threshold}) must not exceed "
                             f"tracker.high_threshold ({self.high_threshold})")
        if self.lost_buffer < 0:
            raise ValueError(f"tracker.lost_buffer must be >= 0, got {self.lost_buffer}")
        if self.recovery_distance < 0:
            raise ValueError(f"tracker.recovery_distance must be >= 0, got {self.recovery_distance}")
        if self.relabel_cost is not None and not 0.0 <= self.relabel_cost <= 1.0:
            raise ValueError(f"tracker.relabel_cost must lie in [0, 1] or be null, got {self.relabel_cost}")
        if not self.class_memory >= 1.0:
            raise ValueError(f"tracker.class_memory must be >= 1 observation, got {self.class_memory}")


class TrackState(Enum):
    TENTATIVE = "tentative"
    TRACKED = "tracked"
    LOST = "lost"


@dataclass
class Track:
    id: int
    class_id: int
    mean: np.ndarray
    covariance: np.ndarray
    state: TrackState
    score: float
    last_frame: int
    history: TrackHistory
    detection: int | None = None  # index of the detection it was last matched to
    votes: dict[int, float] = field(default_factory=dict)  # class id -> faded sum of detection scores

    @property
    def box(self) -> np.ndarray:
        """Current (x1, y1, x2, y2) estimate."""
        return xyah_to_xyxy(self.mean)


@dataclass(frozen=True)
class TrackedObject:
    """One confirmed track in one frame. `detection` indexes the frame's Detections, or is None
    for a lost track (not detected this frame; `box` is then its prediction)."""

    track_id: int
    class_id: int
    box: np.ndarray
    detection: int | None
    score: float
    quality: TrackQuality
    frames_since_seen: int


class ByteTracker:
    def __init__(self, config: TrackerConfig | None = None, class_families: Sequence[int] | None = None) -> None:
        """class_families: a family number per class id; a detection may continue a track of another
        class of its family (see the module docstring). None: every class its own family."""
        self.config = config or TrackerConfig()
        self.class_families = None if class_families is None or self.config.relabel_cost is None \
            else np.asarray(class_families, dtype=np.int64)
        self._vote_fade = math.exp(-1.0 / self.config.class_memory)   # per observation
        self.kalman = BoxKalmanFilter(self.config.kalman)
        #: every frame out of order starts a new sequence (a tracker returns tracks for every frame)
        self.order = StreamOrder(restart_after=1)
        self.reset()

    def reset(self) -> None:
        self.tracks: list[Track] = []
        self._next_id = 1
        self.order.reset()

    @property
    def ids_issued(self) -> int:
        """Track ids handed out since the last reset (tentative tracks included)."""
        return self._next_id - 1

    def update(self, frame_index: int, detections: Detections) -> list[TrackedObject]:
        """Associate this frame's detections; returns the confirmed tracks seen this frame, then
        the lost ones (with their predicted boxes)."""
        if self.order.admit(frame_index, self.reset) == RESTART:
            log.warning("tracker: %s; starting a new sequence", self.order.reason)
        first_frame = self.order.last is None
        steps = 1 if first_frame else frame_index - self.order.last
        self.order.accept(frame_index)
        cfg = self.config
        for track in self.tracks:
            track.mean, track.covariance = self.kalman.predict(track.mean, track.covariance, steps)
            if track.state is TrackState.LOST:
                track.mean[7] = 0.0  # a lost track keeps moving but stops growing or shrinking
        scores = detections.scores
        high = np.flatnonzero(scores >= cfg.high_threshold)
        low = np.flatnonzero((scores >= cfg.low_threshold) & (scores < cfg.high_threshold))
        matched: dict[int, int] = {}  # track position -> detection index

        pool = [i for i, t in enumerate(self.tracks) if t.state is not TrackState.TENTATIVE]
        pairs, _, high_left = self._associate(pool, high, detections, cfg.match_threshold, "iou_score")
        matched.update(pairs)
        low_score_candidates = [i for i in pool if i not in matched
                                and (cfg.low_score_finds_lost or self.tracks[i].state is TrackState.TRACKED)]
        pairs, _, _ = self._associate(low_score_candidates, low, detections, cfg.low_match_threshold, "iou")
        matched.update(pairs)
        tentative = [i for i, t in enumerate(self.tracks) if t.state is TrackState.TENTATIVE]
        pairs, _, high_left = self._associate(tentative, high_left, detections,
                                              cfg.tentative_match_threshold, "iou_score")
        matched.update(pairs)
        if cfg.recovery_distance > 0:
            unmatched = [i for i in pool if i not in matched]
            pairs, _, high_left = self._associate(unmatched, high_left, detections, cfg.recovery_distance,
                                                  "centre")
            matched.update(pairs)

        survivors = []
        for position, track in enumerate(self.tracks):
            if position in matched:
                self._observe(track, detections, matched[position], frame_index)
                survivors.append(track)
            elif track.state is TrackState.TENTATIVE:
                continue
            elif frame_index - track.last_frame <= cfg.lost_buffer:
                track.state = TrackState.LOST
                survivors.append(track)
        for index in high_left:
            if scores[index] >= cfg.new_track_threshold:
                survivors.append(self._start(detections, index, frame_index, confirmed=first_frame))
        self.tracks = self._without_duplicates(survivors)
        return self._report(frame_index)

    def _associate(self, positions: list[int], detection_indices: np.ndarray, detections: Detections,
                   threshold: float, cost_kind: str) -> tuple[dict[int, int], list[int], np.ndarray]:
        """Hungarian matching of tracks (positions in self.tracks) to detections of the same class
        (or, but for "centre" and lost tracks, of the same family at `relabel_cost` more) with cost
        <= threshold. Costs: "iou" 1 - IoU; "iou_score" 1 - IoU * score; "centre" centre distance in
        units of the larger box side of the pair. Returns (track position -> detection index,
        unmatched positions, unmatched detections)."""
        detection_indices = np.asarray(detection_indices, dtype=np.int64)
        if not positions or detection_indices.size == 0:
            return {}, list(positions), detection_indices
        track_boxes = np.array([self.tracks[p].box for p in positions])
        boxes = detections.boxes[detection_indices]
        if cost_kind == "centre":
            cost = _centre_distance(track_boxes, boxes)
        else:
            similarity = box_iou(track_boxes, boxes)
            if cost_kind == "iou_score":
                similarity = similarity * detections.scores[detection_indices][None, :]
            cost = 1.0 - similarity
        track_classes = np.array([self.tracks[p].class_id for p in positions])
        detection_classes = detections.class_ids[detection_indices]
        allowed = track_classes[:, None] == detection_classes[None, :]
        if cost_kind != "centre" and self.class_families is not None:  # a jump keeps to its own class
            cost = np.where(allowed, cost, cost + self.config.relabel_cost)
            seen = np.array([self.tracks[p].state is not TrackState.LOST for p in positions])
            families = self.class_families
            related = families[track_classes][:, None] == families[detection_classes][None, :]
            allowed = allowed | (seen[:, None] & related)
        infeasible = ~allowed | (cost > threshold)
        cost[infeasible] = threshold + 1.0
        rows, cols = linear_sum_assignment(cost)
        pairs = {positions[r]: int(detection_indices[c]) for r, c in zip(rows, cols) if not infeasible[r, c]}
        used = set(pairs.values())
        unmatched_tracks = [p for p in positions if p not in pairs]
        unmatched_detections = np.array([d for d in detection_indices if d not in used], dtype=np.int64)
        return pairs, unmatched_tracks, unmatched_detections

    def _observe(self, track: Track, detections: Detections, index: int, frame_index: int) -> None:
        measurement = xyxy_to_xyah(detections.boxes[index])
        distance = self.kalman.gating_distance(track.mean, track.covariance, measurement)
        track.mean, track.covariance = self.kalman.update(track.mean, track.covariance, measurement)
        track.history.observe(frame_index, detections.boxes[index], distance)
        track.state = TrackState.TRACKED
        track.score = float(detections.scores[index])
        track.last_frame = frame_index
        track.detection = index
        if self.class_families is not None:   # else only its own class ever continues a track
            self._vote(track, int(detections.class_ids[index]), track.score)

    def _vote(self, track: Track, class_id: int, score: float) -> None:
        for key in track.votes:
            track.votes[key] *= self._vote_fade
        track.votes[class_id] = track.votes.get(class_id, 0.0) + score
        track.class_id = max(track.votes, key=track.votes.__getitem__)

    def _start(self, detections: Detections, index: int, frame_index: int, confirmed: bool) -> Track:
        mean, covariance = self.kalman.initiate(xyxy_to_xyah(detections.boxes[index]))
        history = TrackHistory(self.config.quality, frame_index)
        history.observe(frame_index, detections.boxes[index], None)
        class_id, score = int(detections.class_ids[index]), float(detections.scores[index])
        track = Track(self._next_id, class_id, mean, covariance,
                      TrackState.TRACKED if confirmed else TrackState.TENTATIVE,
                      score, frame_index, history, index, votes={class_id: score})
        self._next_id += 1
        return track

    def _without_duplicates(self, tracks: list[Track]) -> list[Track]:
        """Drop a lost track that overlaps a tracked one of the same class (ByteTrack's duplicate
        removal), keeping the longer-lived one's id."""
        tracked = [t for t in tracks if t.state is TrackState.TRACKED]
        lost = [t for t in tracks if t.state is TrackState.LOST]
        if not tracked or not lost:
            return tracks
        iou = box_iou(np.array([t.box for t in tracked]), np.array([t.box for t in lost]))
        drop = set()
        for i, j in zip(*np.nonzero(iou > self.config.duplicate_iou)):
            a, b = tracked[i], lost[j]
            if a.class_id != b.class_id:
                continue
            drop.add(id(b) if a.history.first_frame <= b.history.first_frame else id(a))
        return [t for t in tracks if id(t) not in drop]

    def _report(self, frame_index: int) -> list[TrackedObject]:
        seen, lost = [], []
        for track in self.tracks:
            if track.state is TrackState.TENTATIVE:
                continue
            observed = track.last_frame == frame_index
            item = TrackedObject(track.id, track.class_id, track.box, track.detection if observed else None,
                                 track.score, track.history.quality(frame_index),
                                 frame_index - track.last_frame)
            (seen if observed else lost).append(item)
        return seen + lost


def _centre_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(N, M) distance between box centres divided by the largest side of the two boxes."""
    centres_a = (a[:, :2] + a[:, 2:]) / 2
    centres_b = (b[:, :2] + b[:, 2:]) / 2
    distance = np.linalg.norm(centres_a[:, None, :] - centres_b[None, :, :], axis=2)
    side_a = (a[:, 2:] - a[:, :2]).max(axis=1)
    side_b = (b[:, 2:] - b[:, :2]).max(axis=1)
    scale = np.maximum(np.maximum(side_a[:, None], side_b[None, :]), 1e-6)
    return distance / scale
