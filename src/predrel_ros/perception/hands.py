"""Hands on real video: MediaPipe's palm detector + hand-landmark model (ONNX), giving a left/right
hand box and a hull mask per hand.

Pipeline per frame (MediaPipe Hands' video mode, run on our inference backends):
  1. the regions of the hands followed from the previous frame (`track`): each hand's landmarks give
     the next frame's region (MediaPipe's HandLandmarksToRect: oriented from the wrist to the mean
     of the index, middle and ring finger bases, the rotated box of the wrist and the finger bases'
     joints, shifted a tenth towards the fingers and enlarged 2 times, square);
  2. only while fewer than `max_hands` are followed, palm detection on the frame letterboxed to
     192x192 (black padding, RGB in [0, 1], NHWC): 2016 SSD anchors (strides 8 and 16), box and 7
     palm keypoints decoded per anchor, score threshold and NMS; per palm a rotated square region,
     oriented from the wrist (keypoint 0) to the middle-finger base (keypoint 2), shifted half a palm
     towards the fingers and enlarged 2.6 times (MediaPipe's RectTransformation); a palm whose
     region overlaps a followed hand's by `duplicate_iou` is that hand;
  3. hand-landmark model on each region warped to 224x224: 21 landmarks (x, y, z), hand presence,
     handedness; landmarks mapped back to the frame; a hand under `min_presence` is dropped and no
     longer followed.
Following the landmarks is what lets MediaPipe keep a hand that shows no palm: a fist around an
object, a hand seen edge-on or cut by the image border, where the palm detector finds nothing.
The hand's box is the landmarks' bounding box grown by `box_margin` of its size per side; its mask is
the filled convex hull of the landmarks (a hull, not a skin segmentation: the fingers' gaps are
filled). Its score is the presence probability.

Handedness: the landmark model's third output is the probability of MediaPipe's label "Left" for a
MIRRORED (selfie) image. On a normal, unmirrored camera image that is the person's RIGHT hand, so
`right_hand` is reported when it exceeds 0.5 and `mirrored` is false; set `mirrored: true` for
horizontally flipped input. This mapping follows MediaPipe's documentation; it could not be checked
on real footage on the development machines (no hand images there).

The model files come from `hand_models.py` (committed under perception/models/hands/).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from predrel_ros.core.boxes import box_iou, nms
from predrel_ros.core.errors import UserError
from predrel_ros.perception import letterbox
from predrel_ros.perception.backends import BackendConfig, create_backend
from predrel_ros.perception.detections import Detections
from predrel_ros.perception.hand_models import HAND_MODELS_DIR

PALM_MODEL = "palm_detection_full.onnx"
LANDMARK_MODEL = "hand_landmark_full.onnx"
PALM_INPUT = 192
LANDMARK_INPUT = 224
HAND_LABELS = ("left_hand", "right_hand")
#: output names of the two models: palm regressions, palm logits; landmarks, presence, handedness
PALM_OUTPUTS = ("Identity", "Identity_1")
LANDMARK_OUTPUTS = ("Identity", "Identity_1", "Identity_2")
#: MediaPipe RectTransformation of the palm box into the hand's region of interest
ROI_SHIFT_Y = -0.5
ROI_SCALE = 2.6
#: ... and of the landmarks' rotated box into the next frame's region (hand_landmark_landmarks_to_roi)
TRACK_SHIFT_Y = -0.1
TRACK_SCALE = 2.0
#: the landmarks MediaPipe's HandLandmarksToRect reads: wrist, thumb CMC / MCP / IP, and the MCP and
#: PIP joints of the four fingers
TRACK_LANDMARKS = (0, 1, 2, 3, 5, 6, 9, 10, 13, 14, 17, 18)
WRIST, INDEX_MCP, MIDDLE_MCP, RING_MCP = 0, 5, 9, 13


@dataclass(frozen=True)
class HandLandmarkConfig:
    enabled: bool = False
    models_dir: str = str(HAND_MODELS_DIR)
    max_hands: int = 2
    min_palm_score: float = 0.5
    palm_nms_iou: float = 0.3
    min_presence: float = 0.5
    duplicate_iou: float = 0.5  # two landmark sets this close are one hand
    box_margin: float = 0.05
    mirrored: bool = False  # input flipped horizontally (selfie view)
    track: bool = True  # follow each hand's landmarks into the next frame (MediaPipe's video mode)
    model_hands: bool = False  # keep the object model's own hand classes beside these hands

    def __post_init__(self) -> None:
        if self.max_hands < 1:
            raise ValueError(f"hand_landmarks.max_hands must be at least 1, got {self.max_hands}")
        for name in ("min_palm_score", "palm_nms_iou", "min_presence", "duplicate_iou"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"hand_landmarks.{name} must lie in [0, 1], got {getattr(self, name)}")
        if not 0.0 <= self.box_margin <= 1.0:
            raise ValueError(f"hand_landmarks.box_margin must lie in [0, 1], got {self.box_margin}")


@dataclass
class Hand:
    side: str  # left_hand | right_hand
    score: float  # presence probability
    handedness: float  # probability of the side reported
    landmarks: np.ndarray  # (21, 3): x, y in frame pixels, z relative depth (MediaPipe units)
    box: np.ndarray
    mask: np.ndarray = field(repr=False)


def palm_anchors() -> np.ndarray:
    """(2016, 2) anchor centres in [0, 1]: 24x24 cells x 2 anchors (stride 8), 12x12 x 6 (stride 16)."""
    anchors = []
    for cells, per_cell in ((24, 2), (12, 6)):
        centres = (np.arange(cells) + 0.5) / cells
        grid = np.stack(np.meshgrid(centres, centres), axis=-1).reshape(-1, 2)  # row-major (y, x) order
        anchors.append(np.repeat(grid, per_cell, axis=0))
    return np.concatenate(anchors).astype(np.float64)


@dataclass(frozen=True)
class Palm:
    score: float
    box: np.ndarray  # frame pixels
    keypoints: np.ndarray  # (7, 2) frame pixels


def decode_palms(raw_boxes: np.ndarray, raw_scores: np.ndarray, anchors: np.ndarray,
                 geometry: letterbox.Letterbox, min_score: float, nms_iou: float) -> list[Palm]:
    """Palms in frame pixels from the detector's (1, 2016, 18) regressions and (1, 2016, 1) logits."""
    scores = 1.0 / (1.0 + np.exp(-np.clip(raw_scores.reshape(-1).astype(np.float64), -50, 50)))
    keep = np.flatnonzero(scores >= min_score)
    if keep.size == 0:
        return []
    raw = raw_boxes.reshape(-1, 18)[keep].astype(np.float64)
    centre = raw[:, :2] + anchors[keep] * PALM_INPUT  # input pixels
    size = raw[:, 2:4]
    boxes = np.concatenate([centre - size / 2, centre + size / 2], axis=1)
    keypoints = raw[:, 4:18].reshape(-1, 7, 2) + anchors[keep][:, None, :] * PALM_INPUT
    kept = nms(boxes, scores[keep], nms_iou)
    palms = []
    for i in kept:
        frame_box = geometry.to_frame(boxes[i])[0]
        points = (keypoints[i] - [geometry.pad_x, geometry.pad_y]) / geometry.scale
        palms.append(Palm(float(scores[keep][i]), frame_box, points))
    return palms


Region = tuple[np.ndarray, float, float]    # centre (x, y), side, rotation in radians; frame pixels


def _rotation(wrist: np.ndarray, towards: np.ndarray) -> float:
    """MediaPipe's region rotation: the wrist -> fingers direction turned to point up, in [-pi, pi)."""
    rotation = math.pi / 2 - math.atan2(-(towards[1] - wrist[1]), towards[0] - wrist[0])
    return (rotation + math.pi) % (2 * math.pi) - math.pi


def _transformed(centre: np.ndarray, width: float, height: float, rotation: float, shift_y: float,
                 scale: float) -> Region:
    """MediaPipe's RectTransformation (square_long): the centre moved `shift_y` heights along the
    region's own y axis, the longer side enlarged `scale` times."""
    centre = centre + [-height * shift_y * math.sin(rotation), height * shift_y * math.cos(rotation)]
    return centre, max(width, height) * scale, rotation


def hand_region(palm: Palm) -> Region:
    """The square hand region of a detected palm, in frame pixels."""
    (x1, y1, x2, y2), (wrist, middle) = palm.box, (palm.keypoints[0], palm.keypoints[2])
    return _transformed(np.array([(x1 + x2) / 2, (y1 + y2) / 2]), x2 - x1, y2 - y1, _rotation(wrist, middle),
                        ROI_SHIFT_Y, ROI_SCALE)


def landmark_region(landmarks_xy: np.ndarray) -> Region:
    """The square region the next frame looks for a hand in, from this frame's 21 landmarks (frame
    pixels): MediaPipe's HandLandmarksToRect followed by its RectTransformation."""
    wrist = landmarks_xy[WRIST]
    fingers = ((landmarks_xy[INDEX_MCP] + landmarks_xy[RING_MCP]) / 2 + landmarks_xy[MIDDLE_MCP]) / 2
    rotation = _rotation(wrist, fingers)
    points = landmarks_xy[list(TRACK_LANDMARKS)]
    middle = (points.min(axis=0) + points.max(axis=0)) / 2
    cos, sin = math.cos(rotation), math.sin(rotation)
    unrotate = np.array([[cos, sin], [-sin, cos]])          # frame -> the region's own axes
    projected = (points - middle) @ unrotate.T
    low, high = projected.min(axis=0), projected.max(axis=0)
    centre = middle + unrotate.T @ ((low + high) / 2)
    width, height = high - low
    return _transformed(centre, float(width), float(height), rotation, TRACK_SHIFT_Y, TRACK_SCALE)


def region_box(region: Region) -> np.ndarray:
    """The axis-aligned box (x1, y1, x2, y2) around a rotated square region."""
    centre, side, rotation = region
    half = side / 2 * (abs(math.cos(rotation)) + abs(math.sin(rotation)))
    return np.array([centre[0] - half, centre[1] - half, centre[0] + half, centre[1] + half])


def region_transform(centre: np.ndarray, side: float, rotation: float, size: int) -> np.ndarray:
    """2x3 affine map from frame pixels to the size x size crop of the rotated square region."""
    cos, sin = math.cos(rotation), math.sin(rotation)
    half = side / 2
    corners = np.array([[-half, -half], [half, -half], [half, half]])
    source = np.stack([corners[:, 0] * cos - corners[:, 1] * sin + centre[0],
                       corners[:, 0] * sin + corners[:, 1] * cos + centre[1]], axis=1)
    target = np.array([[0, 0], [size - 1, 0], [size - 1, size - 1]], dtype=np.float64)
    return cv2.getAffineTransform(source.astype(np.float32), target.astype(np.float32)).astype(np.float64)


def hull_mask(points: np.ndarray, height: int, width: int) -> np.ndarray:
    mask = np.zeros((height, width), np.uint8)
    hull = cv2.convexHull(np.round(points).astype(np.int32).reshape(-1, 1, 2))
    cv2.fillConvexPoly(mask, hull, 1)
    return mask.astype(bool)


class HandLandmarker:
    def __init__(self, config: HandLandmarkConfig | None = None, backend: BackendConfig | None = None) -> None:
        self.config = config = config or HandLandmarkConfig()
        folder = Path(config.models_dir).expanduser()
        missing = [name for name in (PALM_MODEL, LANDMARK_MODEL) if not (folder / name).is_file()]
        if missing:
            raise UserError(f"hand models {missing} are missing in {folder}; reproduce them with "
                            f"`python -m predrel_ros.perception.hand_models --download`")
        backend = backend or BackendConfig()
        self.palm_model, palm_file = create_backend(backend, folder / PALM_MODEL)
        self.landmark_model, landmark_file = create_backend(backend, folder / LANDMARK_MODEL)
        self.palm_model.load(palm_file)
        self.landmark_model.load(landmark_file)
        self.anchors = palm_anchors()
        self._followed: list[Region] = []   # the regions this frame's hands give the next frame

    def detect(self, image_rgb: np.ndarray) -> list[Hand]:
        """The hands of one frame; with `track`, the frames of one sequence in order (`reset` between
        sequences)."""
        regions = list(self._followed)
        if len(regions) < self.config.max_hands:
            followed = [region_box(region) for region in regions]
            for palm in self._palms(image_rgb)[:self.config.max_hands]:      # MediaPipe's clip to num_hands
                region = hand_region(palm)
                if not any(box_iou(region_box(region), box)[0, 0] > self.config.duplicate_iou for box in followed):
                    regions.append(region)
        hands: list[Hand] = []
        for region in regions:
            if len(hands) == self.config.max_hands:
                break
            hand = self._landmarks(image_rgb, region)
            if hand is None:
                continue
            if any(box_iou(hand.box, other.box)[0, 0] > self.config.duplicate_iou for other in hands):
                continue
            hands.append(hand)
        self._followed = [landmark_region(hand.landmarks[:, :2]) for hand in hands] if self.config.track else []
        return hands

    def reset(self) -> None:
        """Follow no hand (a new video, a new episode, a looped bag)."""
        self._followed = []

    def _palms(self, image_rgb: np.ndarray) -> list[Palm]:
        height, width = image_rgb.shape[:2]
        geometry = letterbox.plan(height, width, PALM_INPUT, PALM_INPUT)
        outputs = self.palm_model.run(self._palm_input(image_rgb, geometry))
        raw_boxes, raw_scores = outputs[PALM_OUTPUTS[0]], outputs[PALM_OUTPUTS[1]]
        return decode_palms(raw_boxes, raw_scores, self.anchors, geometry, self.config.min_palm_score,
                            self.config.palm_nms_iou)

    def _palm_input(self, image_rgb: np.ndarray, geometry: letterbox.Letterbox) -> np.ndarray:
        resized = cv2.resize(image_rgb, (geometry.content_width, geometry.content_height),
                             interpolation=cv2.INTER_LINEAR)
        canvas = np.zeros((PALM_INPUT, PALM_INPUT, 3), np.float32)
        canvas[geometry.pad_y:geometry.pad_y + geometry.content_height,
               geometry.pad_x:geometry.pad_x + geometry.content_width] = resized / 255.0
        return canvas[None]

    def _landmarks(self, image_rgb: np.ndarray, region: Region) -> Hand | None:
        """The hand in `region`, or None under `min_presence`."""
        height, width = image_rgb.shape[:2]
        centre, side, rotation = region
        transform = region_transform(centre, side, rotation, LANDMARK_INPUT)
        crop = cv2.warpAffine(image_rgb, transform, (LANDMARK_INPUT, LANDMARK_INPUT),
                              flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        tensor = np.ascontiguousarray(crop.transpose(2, 0, 1)[None], dtype=np.float32) / 255.0
        outputs = self.landmark_model.run(tensor)
        landmarks, presence, handedness = (outputs[name] for name in LANDMARK_OUTPUTS)
        presence = float(np.asarray(presence).reshape(-1)[0])
        if presence < self.config.min_presence:
            return None
        points = np.asarray(landmarks, dtype=np.float64).reshape(21, 3)
        inverse = cv2.invertAffineTransform(transform)
        xy = points[:, :2] @ inverse[:, :2].T + inverse[:, 2]
        left_if_mirrored = float(np.asarray(handedness).reshape(-1)[0])
        right = left_if_mirrored > 0.5 if not self.config.mirrored else left_if_mirrored <= 0.5
        confidence = max(left_if_mirrored, 1 - left_if_mirrored)
        x1, y1 = xy.min(axis=0)
        x2, y2 = xy.max(axis=0)
        margin = self.config.box_margin * np.array([x2 - x1, y2 - y1])
        box = np.clip([x1 - margin[0], y1 - margin[1], x2 + margin[0], y2 + margin[1]], 0,
                      [width, height, width, height])
        return Hand("right_hand" if right else "left_hand", presence, confidence,
                    np.column_stack([xy, points[:, 2]]), box, hull_mask(xy, height, width))

    def as_detections(self, hands: list[Hand], class_ids: dict[str, int], height: int, width: int) -> Detections:
        """Hands as detections, with `class_ids` giving the class id of left_hand / right_hand."""
        masks = np.array([hand.mask for hand in hands]).reshape(len(hands), height, width)
        return Detections([hand.box for hand in hands], [hand.score for hand in hands],
                          [class_ids[hand.side] for hand in hands], masks, np.ones(len(hands)))

    def close(self) -> None:
        self.palm_model.close()
        self.landmark_model.close()
