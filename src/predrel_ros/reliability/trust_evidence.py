"""The evidence beyond the predicates, over the rolling window: scene, detections, timing, image.

`TrustEvidence.update(frame_index, entities, image)` feeds one delivered frame to the scene memory
(`scene_memory`), the detection statistics (`detection_statistics`), the stream timing
(`stream_timing`) and, when the frame's image is given, the image quality (`image_quality`).
`features()` gives the window's evidence as one flat mapping of numbers (`FEATURES`):

- scene: events per delivered frame (`birth_rate`, `unexplained_birth_rate`, `reacquire_rate`,
  `disappearance_rate`, `unexplained_disappearance_rate`, `relabel_rate`, `jump_rate`) and
  `missing_share`, the mean share of the remembered entities that are missing;
- detections: the window means of the per-frame statistics, and `score_share_0` ..
  `score_share_4`, the window's score histogram as shares;
- timing: `delivered_share` and `gaps` of the window;
- image: the window means of `image_quality.SIGNALS` (NaN when no image came).

A feature that no frame of the window defines is NaN. The clean profile turns these into
deviations from clean data (`evidence_profile`), and the trust estimator maps those to the
agreement to expect.
"""
from __future__ import annotations

import math
from collections import deque
from typing import Iterable, Mapping

import numpy as np

from predrel_ros.core.entities import Entity
from predrel_ros.reliability.detection_statistics import SCORE_BINS, DetectionStatistics
from predrel_ros.reliability.image_quality import SIGNALS as IMAGE_SIGNALS
from predrel_ros.reliability.image_quality import ImageQuality
from predrel_ros.reliability.scene_memory import SceneMemory
from predrel_ros.reliability.stream_timing import StreamTiming

SCENE_RATES = ("birth_rate", "unexplained_birth_rate", "reacquire_rate", "disappearance_rate",
               "unexplained_disappearance_rate", "relabel_rate", "jump_rate")
_EVENTS = ("births", "unexplained_births", "reacquired", "disappearances", "unexplained_disappearances",
           "relabels", "jumps")
DETECTION_MEANS = ("count", "hands", "score_mean", "score_min", "low_score_share", "mask_change", "mask_fill")
SCORE_SHARES = tuple(f"score_share_{b}" for b in range(SCORE_BINS))
#: what the per-frame vector holds, in order (the histogram is summed, not averaged)
_PER_FRAME = SCENE_RATES + ("missing_share",) + DETECTION_MEANS + SCORE_SHARES + IMAGE_SIGNALS
FEATURES = _PER_FRAME + ("delivered_share", "gaps")
_HISTOGRAM = slice(_PER_FRAME.index(SCORE_SHARES[0]), _PER_FRAME.index(SCORE_SHARES[-1]) + 1)


class TrustEvidence:
    """Rolling evidence over the last `window` frames (by frame index; see the module docstring).
    scene, detections, image: the parts' own settings (defaults when None)."""

    def __init__(self, window: int = 30, scene: SceneMemory | None = None,
                 detections: DetectionStatistics | None = None, image: ImageQuality | None = None) -> None:
        if window < 1:
            raise ValueError(f"window must be >= 1 frame, got {window}")
        self.window = window
        self.scene = scene if scene is not None else SceneMemory()
        self.detections = detections if detections is not None else DetectionStatistics()
        self.image = image if image is not None else ImageQuality()
        self.timing = StreamTiming(window)
        self.reset()

    def reset(self) -> None:
        self._frames: deque[tuple[int, np.ndarray]] = deque()
        self._image_size: tuple[int, int] | None = None
        self.scene.reset()
        self.detections.reset()
        self.timing.reset()

    def update(self, frame_index: int, entities: Iterable[Entity], image: np.ndarray | None = None,
               image_size: tuple[int, int] | None = None, quality: Mapping[str, float] | None = None) -> None:
        """One delivered frame (indices increase). image: the frame the entities were detected in;
        image_size: (width, height) when no image is given (else the last image's size is used);
        quality: the frame's image measures when the caller has them already (`ImageQuality.measure`,
        e.g. an evaluation that replays a frame under several schedules), instead of the image."""
        entities = list(entities)
        if image is not None:
            if quality is not None:
                raise ValueError("give the image or its quality, not both")
            image_size = (int(image.shape[1]), int(image.shape[0]))
        if image_size is not None:
            self._image_size = image_size
        if self._image_size is None:
            raise ValueError("the first frame needs an image or an image_size (the scene memory's image border)")
        events = self.scene.update(frame_index, entities, self._image_size)
        detections = self.detections.update(entities)
        if image is not None:
            quality = self.image.measure(image)
        quality = quality or {}
        remembered = events.missing + events.observed
        vector = np.array([getattr(events, name) for name in _EVENTS]
                          + [events.missing / remembered if remembered else 0.0]
                          + [detections[name] for name in DETECTION_MEANS]
                          + list(detections["score_histogram"])
                          + [quality.get(name, math.nan) for name in IMAGE_SIGNALS], dtype=np.float64)
        self._frames.append((frame_index, vector))
        oldest = frame_index - self.window + 1
        while self._frames[0][0] < oldest:
            self._frames.popleft()
        self.timing.update(frame_index)

    def frames(self) -> int:
        """Delivered frames in the window (the evidence's samples)."""
        return len(self._frames)

    def features(self) -> dict[str, float]:
        """The window's evidence (`FEATURES`; all NaN before the first frame)."""
        if not self._frames:
            return dict.fromkeys(FEATURES, math.nan)
        stacked = np.stack([vector for _, vector in self._frames])
        defined = ~np.isnan(stacked)
        counts = defined.sum(axis=0)
        means = np.divide(np.where(defined, stacked, 0.0).sum(axis=0), counts,
                          out=np.full(stacked.shape[1], math.nan), where=counts > 0)
        histogram = stacked[:, _HISTOGRAM].sum(axis=0)
        total = histogram.sum()
        means[_HISTOGRAM] = histogram / total if total else math.nan
        result = dict(zip(_PER_FRAME, means.tolist()))
        result["delivered_share"] = self.timing.delivered_share()
        result["gaps"] = float(self.timing.gaps())
        return result
